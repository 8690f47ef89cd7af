// FIND: IO500's find phase as a parallel scan by the tasks of all client
// agents: `find DIR -newer T -size Nc -name GLOB` over the tree under the
// phase directory, counting the files examined (TaskResult.ops) and those
// that match (TaskResult.items_matched). It creates and removes nothing.
//
// The split needs no communication: every task walks every directory of the
// tree (opendir/readdir: the names), and examines (lstat) only the
// non-directory entries it owns, those whose path relative to the phase
// directory hashes to its rank (FindOwns). So one huge directory (IO500's
// mdtest-hard puts all its files in one) is shared by all tasks as evenly as
// a many-directory tree, and agents that mount the file system at different
// places agree. The cost: each task reads every directory listing (readdir
// returns many names per call, so this is small next to one lstat per
// file), and a file system without d_type (DT_UNKNOWN) costs every task an
// lstat per entry to tell directories apart. Directories are walked, not
// counted or matched; symbolic links are examined, never followed (find -P).
// The split assumes the tree does not change during the phase.
#ifndef LOCKSTEP_AGENT_WORKLOADS_FIND_H_
#define LOCKSTEP_AGENT_WORKLOADS_FIND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "agent/workloads/workload.h"

namespace lockstep {

// What a file must be to match (PhaseSpec.find_*).
struct FindCriteria {
  int64_t newer_unix_ns = 0;  // mtime strictly later (0: any)
  bool match_size = false;
  uint64_t size_bytes = 0;    // with match_size: exactly this long
  std::string name_glob;      // fnmatch(3) on the base name ("": any)
};

FindCriteria FindCriteriaOf(const v1::PhaseSpec& spec);

// Whether a file named `base_name` (no '/'), last modified at
// `mtime_unix_ns`, of `size_bytes`, matches `c`.
bool FindMatches(const FindCriteria& c, std::string_view base_name, int64_t mtime_unix_ns,
                 uint64_t size_bytes);

// Whether task `rank` of `total_tasks` examines the entry at `rel_path` (its
// path relative to the phase directory, "a/b/file"). Exactly one rank owns
// each path; the same on every agent.
bool FindOwns(std::string_view rel_path, uint32_t rank, uint32_t total_tasks);

std::unique_ptr<Workload> MakeFindWorkload(const v1::PhaseSpec& spec,
                                           const WorkloadOptions& options);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_FIND_H_
