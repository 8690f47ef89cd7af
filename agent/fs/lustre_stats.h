// Lustre's telemetry sources: the stats files a Lustre client or server keeps
// (obdfilter.*.stats on an OSS, mdt.*.md_stats on an MDS, llite.*.stats and
// osc.*.rpc_stats on a client), found below the roots Lustre uses and read
// each sample (agent/telemetry.h): the parsers of their text, what is
// sampled and from where. All of it is Lustre's knowledge and lives here
// beside LustreFs.
#ifndef LOCKSTEP_AGENT_FS_LUSTRE_STATS_H_
#define LOCKSTEP_AGENT_FS_LUSTRE_STATS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/fs/fs_stats.h"

namespace lockstep {

struct LustreStatsSample {
  double snapshot_time_s = 0;  // 0 when absent
  std::vector<FsStat> counters;  // a sum is 0 when the line has none
};

// The standard stats format (obdfilter.*.stats, mdt.*.md_stats, llite.*.stats):
//   snapshot_time             1409777887.590023 secs.usecs
//   write_bytes               7 samples [bytes] 4096 1048576 5251072 2199023255552
//   open                      2 samples [reqs]
// Lines other than "<name> <N> samples ..." (start_time, elapsed_time, blank)
// are skipped.
absl::StatusOr<LustreStatsSample> ParseLustreStats(std::string_view text);

// osc.*.rpc_stats / mdc.*.rpc_stats: each histogram row "<bucket>: rpcs % cum%
// | rpcs % cum%" becomes two counters "read.<histogram>.<bucket>" and
// "write.<histogram>.<bucket>" (histogram title lowercased, spaces → '_':
// "pages_per_rpc", "rpcs_in_flight", "offset"); samples = RPCs, sum = bucket
// × RPCs. The gauges above the histograms are skipped.
absl::StatusOr<LustreStatsSample> ParseLustreRpcStats(std::string_view text);

// The roots searched, first to last: /proc and /sys, and debugfs where newer
// Lustre keeps the llite stats.
inline const std::vector<std::string>& DefaultLustreStatsRoots() {
  static const std::vector<std::string> roots = {"/proc/fs/lustre", "/sys/fs/lustre",
                                                 "/sys/kernel/debug/lustre"};
  return roots;
}

// Reads <root>/<type>/<instance>/<file> for obdfilter/*/stats,
// mdt/*/md_stats, llite/*/stats and osc/*/rpc_stats below each of `roots`
// into *out (a source under two roots is read from the first). A root that
// is not a directory costs one stat(2): most hosts have no Lustre. A file
// that cannot be read or parsed adds a line to *warnings and is skipped.
void SampleLustreStats(const std::vector<std::string>& roots, FsStatCounters* out,
                       std::vector<std::string>* warnings);

// SampleLustreStats of `roots` as a telemetry source (agent/fs/fs_stats.h).
FsStatsSource LustreStatsSource(std::vector<std::string> roots = DefaultLustreStatsRoots());

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_FS_LUSTRE_STATS_H_
