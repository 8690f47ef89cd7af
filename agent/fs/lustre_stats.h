// Lustre's telemetry sources: the stats files a Lustre client or server keeps
// (obdfilter.*.stats on an OSS, mdt.*.md_stats on an MDS, llite.*.stats and
// osc.*.rpc_stats on a client), found below the roots Lustre uses and read
// each sample (agent/telemetry.h). The parsers of their text are
// agent/procfs.h's; what is sampled, and from where, is Lustre's knowledge
// and lives here beside LustreFs.
#ifndef LOCKSTEP_AGENT_FS_LUSTRE_STATS_H_
#define LOCKSTEP_AGENT_FS_LUSTRE_STATS_H_

#include <map>
#include <string>
#include <vector>

#include "agent/procfs.h"

namespace lockstep {

// The roots searched, first to last: /proc and /sys, and debugfs where newer
// Lustre keeps the llite stats.
inline const std::vector<std::string>& DefaultLustreStatsRoots() {
  static const std::vector<std::string> roots = {"/proc/fs/lustre", "/sys/fs/lustre",
                                                 "/sys/kernel/debug/lustre"};
  return roots;
}

// source ("obdfilter.lustre-OST0000.stats") -> counter name -> counter.
using LustreCounters = std::map<std::string, std::map<std::string, LustreStat>>;

// Reads <root>/<type>/<instance>/<file> for obdfilter/*/stats,
// mdt/*/md_stats, llite/*/stats and osc/*/rpc_stats below each of `roots`
// into *out (a source under two roots is read from the first). A root that
// is not a directory costs one stat(2): most hosts have no Lustre. A file
// that cannot be read or parsed adds a line to *warnings and is skipped.
void SampleLustreStats(const std::vector<std::string>& roots, LustreCounters* out,
                       std::vector<std::string>* warnings);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_FS_LUSTRE_STATS_H_
