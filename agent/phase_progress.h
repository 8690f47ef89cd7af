// What a running phase's monitor thread (agent/phase_runner.cc) measures
// besides its tasks' counters: the result's throughput series (bytes moved
// per kSeriesIntervalMs since the start instant, PhaseResult.series_bytes)
// and this host's CPU between two progress events, for the live line.
//
// Thread-compatible: each object belongs to the one monitor thread.
#ifndef LOCKSTEP_AGENT_PHASE_PROGRESS_H_
#define LOCKSTEP_AGENT_PHASE_PROGRESS_H_

#include <cstdint>
#include <vector>

#include "agent/procfs.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// The interval of the throughput series (PhaseResult.series_interval_ms).
inline constexpr uint32_t kSeriesIntervalMs = 100;

// Bytes moved per kSeriesIntervalMs since the start: the result's series.
class ThroughputSeries {
 public:
  explicit ThroughputSeries(int64_t start_unix_ns);

  // When the interval in progress ends (this host's wall clock).
  int64_t next_unix_ns() const { return next_unix_ns_; }

  // One entry per interval that ended by `now_unix_ns`, with `bytes` so far.
  void Advance(int64_t now_unix_ns, uint64_t bytes);

  // The last, partial interval (or the only one of a phase shorter than one).
  void Close(uint64_t bytes);

  const std::vector<uint64_t>& values() const { return values_; }

 private:
  int64_t next_unix_ns_;
  uint64_t last_bytes_ = 0;
  std::vector<uint64_t> values_;
};

// This host's CPU between two progress events, for the live line.
class HostCpu {
 public:
  // Sets p's cpu_busy_pct and cpu_iowait_pct over the time since the last
  // call (/proc/stat); nothing on the first call or when /proc/stat cannot
  // be read.
  void Into(v1::Progress* p);

 private:
  CpuTimes last_;
  bool have_last_ = false;
};

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_PHASE_PROGRESS_H_
