#include "controller/run/progress_line.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "common/clock.h"

namespace lockstep {

ProgressLine::ProgressLine(std::string phase_id, uint64_t expected_bytes, Sink live, Sink lines)
    : phase_id_(std::move(phase_id)),
      expected_bytes_(expected_bytes),
      live_(std::move(live)),
      lines_(std::move(lines)),
      start_mono_ns_(MonotonicNs()),
      next_line_mono_ns_(start_mono_ns_ + absl::ToInt64Nanoseconds(kPlainLinePeriod)) {}

void ProgressLine::Update(const std::vector<v1::Progress>& latest) {
  const int64_t now_mono_ns = MonotonicNs();
  const std::string line =
      Format(phase_id_, expected_bytes_, latest, absl::Nanoseconds(now_mono_ns - start_mono_ns_));
  if (live_) {
    live_(line);
  } else if (now_mono_ns >= next_line_mono_ns_ && lines_) {
    lines_(line);
    next_line_mono_ns_ = now_mono_ns + absl::ToInt64Nanoseconds(kPlainLinePeriod);
  }
}

void ProgressLine::Clear() {
  if (live_) live_("");
}

std::string ProgressLine::Format(const std::string& phase_id, uint64_t expected_bytes,
                                 const std::vector<v1::Progress>& latest,
                                 absl::Duration elapsed) {
  uint64_t bytes = 0, ops = 0;
  double cpu = 0, iowait = 0;
  int reporting = 0;
  for (const v1::Progress& p : latest) {
    bytes += p.bytes();
    ops += p.ops();
    if (p.elapsed_ns() == 0) continue;  // no event yet
    cpu += p.cpu_busy_pct();
    iowait += p.cpu_iowait_pct();
    ++reporting;
  }
  const double elapsed_s = absl::ToDoubleSeconds(elapsed);
  const double cpu_pct = reporting ? cpu / reporting : 0.0;
  const double iowait_pct = reporting ? iowait / reporting : 0.0;
  if (expected_bytes == 0) {
    // Metadata phases (mdtest, find): operations, not bytes; a count that
    // stops growing is what a stalled metadata server looks like.
    return absl::StrFormat("%s: %.0f ops/s, %u ops, %.1f s elapsed; clients cpu %.0f%%, iowait %.0f%%",
                           phase_id, elapsed_s > 0 ? static_cast<double>(ops) / elapsed_s : 0.0,
                           ops, elapsed_s, cpu_pct, iowait_pct);
  }
  const double mib_s = elapsed_s > 0 ? static_cast<double>(bytes) / elapsed_s / (1 << 20) : 0;
  const double eta_s = mib_s > 0 && expected_bytes > bytes
                           ? static_cast<double>(expected_bytes - bytes) / (1 << 20) / mib_s
                           : 0;
  const double pct =
      expected_bytes ? 100.0 * static_cast<double>(bytes) / static_cast<double>(expected_bytes)
                     : 0.0;
  return absl::StrFormat(
      "%s: %.0f MiB/s, %.1f%%, %.1f s elapsed, ETA %.0f s; clients cpu %.0f%%, iowait %.0f%%",
      phase_id, mib_s, pct, elapsed_s, eta_s, cpu_pct, iowait_pct);
}

}  // namespace lockstep
