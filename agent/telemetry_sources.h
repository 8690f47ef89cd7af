// One host sample for the telemetry sampler (agent/telemetry.h): what a
// sample holds (HostSample) and the reader that takes it (HostSampleReader)
// from <proc_root>/stat, loadavg, meminfo, diskstats, net/dev, the file
// systems' stats sources (agent/fs/fs_stats.h) and, when asked, every
// process's stat (agent/process_cpu.h).
//
//   HostSampleReader reader(&options);            // options outlive it
//   ASSIGN_OR_RETURN(HostSample s, reader.Read());
//
// Only an unreadable or unparsable <proc_root>/stat fails a sample; any
// other source that cannot be read or parsed, and a block device or
// interface named in the options but absent, becomes one of the sample's
// warnings. Not thread-safe: the sampler calls Read() one at a time.
#ifndef LOCKSTEP_AGENT_TELEMETRY_SOURCES_H_
#define LOCKSTEP_AGENT_TELEMETRY_SOURCES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/fs/fs_stats.h"
#include "agent/procfs.h"
#include "agent/telemetry.h"

namespace lockstep {

struct HostSample {
  int64_t mono_ns = 0;
  int64_t unix_ns = 0;
  ProcStat stat;
  bool have_load = false;
  LoadAvgSample load;
  bool have_mem = false;
  MemInfoSample mem;
  std::map<std::string, DiskCounters> disks;  // selected devices only
  std::map<std::string, NetCounters> nets;    // selected interfaces only
  FsStatCounters fs_stats;  // agent/fs/fs_stats.h
  // Every process's CPU ticks (shared: each open window keeps the sample).
  std::shared_ptr<const std::vector<ProcessTicks>> processes;
  std::vector<std::string> warnings;
};

class HostSampleReader {
 public:
  // Reads what `*options` selects; `options` must outlive the reader, and
  // its devices are names without a "/dev/" prefix.
  explicit HostSampleReader(const TelemetryOptions* options) : options_(*options) {}

  // Takes one sample now: both clocks, then every source.
  absl::StatusOr<HostSample> Read();

 private:
  void SelectDisks(std::vector<DiskCounters>& disks, HostSample* s);
  bool IsWholeDisk(const std::string& device);
  void SelectNets(std::vector<NetCounters>& nets, HostSample* s) const;
  void CollectFsStats(HostSample* s) const;

  const TelemetryOptions& options_;
  std::map<std::string, bool> whole_disk_;  // IsWholeDisk's answers
};

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_TELEMETRY_SOURCES_H_
