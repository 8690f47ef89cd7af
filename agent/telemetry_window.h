// One telemetry window (agent/telemetry.h): the host samples fed to it,
// accumulated, and the TelemetrySummary made of them.
//
//   TelemetryWindow w;
//   FeedTelemetryWindow(first, &w);   // the baseline
//   FeedTelemetryWindow(next, &w);    // ... one call per sample, in time order
//   v1::TelemetrySummary s = SummarizeTelemetryWindow(w, interval_ms);
//
// Levels (memory, load, disk queue depth, processes) count from every
// sample; rates and counter deltas from each pair of consecutive samples,
// for the disks, interfaces and file-system counters present in both. A
// counter that went backwards was reset, so everything since counts, with a
// warning. A sample's warnings become the window's, each once. No locking:
// the sampler feeds a window under its own lock.
#ifndef LOCKSTEP_AGENT_TELEMETRY_WINDOW_H_
#define LOCKSTEP_AGENT_TELEMETRY_WINDOW_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "agent/process_cpu.h"
#include "agent/procfs.h"
#include "agent/telemetry_sources.h"
#include "lockstep/v1/telemetry.pb.h"

namespace lockstep {

struct TelemetryWindow {
  struct MeanMaxAcc {
    double sum = 0;
    double max = 0;
    uint32_t n = 0;
    void Add(double v) {
      sum += v;
      if (n == 0 || v > max) max = v;
      ++n;
    }
    double mean() const { return n ? std::min(sum / n, max) : 0.0; }  // no FP excess
  };

  struct DiskAcc {
    DiskCounters delta;
    int64_t present_ns = 0;
    double util_max = 0, read_mb_s_max = 0, write_mb_s_max = 0;
    uint64_t in_flight_max = 0;
  };

  struct NetAcc {
    NetCounters delta;
    int64_t present_ns = 0;
    double rx_mb_s_max = 0, tx_mb_s_max = 0;
  };

  struct FsStatAcc {
    std::string unit;
    uint64_t samples = 0;
    uint64_t sum = 0;
  };

  bool has_prev = false;
  HostSample prev;
  int64_t first_mono_ns = 0;
  int64_t first_unix_ns = 0;
  uint32_t samples = 0;
  CpuTimes cpu_delta;  // summed over intervals
  CpuPercent cpu_max;
  double busy_cores_max = 0;
  MeanMaxAcc dirty, writeback, load1;
  uint32_t running_max = 0;
  std::map<std::string, DiskAcc> disks;
  std::map<std::string, NetAcc> nets;
  std::map<std::pair<std::string, std::string>, FsStatAcc> fs_stats;
  std::set<std::string> sources;
  ProcessCpuWindow processes;
  std::vector<std::string> warnings;
  std::set<std::string> warning_set;

  // Adds `w` to the warnings unless it is there already.
  void Warn(const std::string& w) {
    if (warning_set.insert(w).second) warnings.push_back(w);
  }
};

// Adds sample `s` to the window: levels from every sample, rates and counter
// deltas from each pair of consecutive samples.
void FeedTelemetryWindow(const HostSample& s, TelemetryWindow* w);

// The window's summary; `interval_ms` is the sampler's period, reported as
// is.
v1::TelemetrySummary SummarizeTelemetryWindow(const TelemetryWindow& w, uint32_t interval_ms);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_TELEMETRY_WINDOW_H_
