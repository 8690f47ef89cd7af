// Counters a file system keeps in stats files of its own (Lustre's
// obdfilter, mdt, llite and osc stats), sampled with the host's telemetry.
// Which files are read and how their text parses is each file system's
// knowledge (agent/fs/lustre_stats.h); the telemetry window only adds up the
// deltas between samples (agent/telemetry.h).
#ifndef LOCKSTEP_AGENT_FS_FS_STATS_H_
#define LOCKSTEP_AGENT_FS_FS_STATS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace lockstep {

struct FsStat {
  std::string name;  // "write_bytes"
  std::string unit;  // "bytes", "reqs", "usecs"; "" when absent
  uint64_t samples = 0;
  uint64_t sum = 0;  // 0 when the counter has no sum
};

// source ("obdfilter.lustre-OST0000.stats") -> counter name -> counter.
using FsStatCounters = std::map<std::string, std::map<std::string, FsStat>>;

// One file system's sampler: adds what it reads now to *out; a file that
// cannot be read or parsed adds a line to *warnings. Called on the
// telemetry thread at every sample, so a host without that file system
// must cost it next to nothing.
using FsStatsSource =
    std::function<void(FsStatCounters* out, std::vector<std::string>* warnings)>;

// The sources an agent samples: every file system's that keeps such files
// (Lustre's, below its default roots). Listed in agent/fs/file_system.cc,
// beside FileSystemFor, where a new file system is added.
std::vector<FsStatsSource> DefaultFsStatsSources();

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_FS_FS_STATS_H_
