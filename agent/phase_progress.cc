#include "agent/phase_progress.h"

#include "common/files.h"

namespace lockstep {
namespace {

constexpr int64_t kSeriesIntervalDurationNs = int64_t{kSeriesIntervalMs} * 1'000'000;

}  // namespace

ThroughputSeries::ThroughputSeries(int64_t start_unix_ns)
    : next_unix_ns_(start_unix_ns + kSeriesIntervalDurationNs) {}

void ThroughputSeries::Advance(int64_t now_unix_ns, uint64_t bytes) {
  if (now_unix_ns < next_unix_ns_) return;
  while (next_unix_ns_ <= now_unix_ns) {
    values_.push_back(bytes - last_bytes_);
    last_bytes_ = bytes;
    next_unix_ns_ += kSeriesIntervalDurationNs;
  }
}

void ThroughputSeries::Close(uint64_t bytes) {
  if (bytes > last_bytes_ || values_.empty()) values_.push_back(bytes - last_bytes_);
}

void HostCpu::Into(v1::Progress* p) {
  auto text = ReadFileToString("/proc/stat");
  if (!text.ok()) return;
  auto stat = ParseProcStat(*text);
  if (!stat.ok()) return;
  if (have_last_) {
    const CpuPercent pct = CpuPercentBetween(last_, stat->cpu);
    p->set_cpu_busy_pct(100.0 - pct.idle);
    p->set_cpu_iowait_pct(pct.iowait);
  }
  last_ = stat->cpu;
  have_last_ = true;
}

}  // namespace lockstep
