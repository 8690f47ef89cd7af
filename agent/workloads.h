// Task bodies of the phase kinds that are not IOR's transfer loop:
// SMALL_FILES (a tree of many small files) and MDTEST (one mdtest sub-phase).
// The phase runner owns the threads, the start instant and the result; these
// functions do one task's work and fill its TaskResult.
#ifndef LOCKSTEP_AGENT_WORKLOADS_H_
#define LOCKSTEP_AGENT_WORKLOADS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/histogram.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// What one task needs; everything is owned by the phase runner.
struct TaskWork {
  const v1::PhaseSpec* spec = nullptr;
  std::string dir;  // resolved
  uint32_t rank = 0;
  char* buf = nullptr;      // small_file_max_bytes or md write/read bytes, 4 KiB aligned
  char* scratch = nullptr;  // as large as buf
  const std::vector<std::string>* tree = nullptr;  // MDTEST: dirs of the tree, root first
  uint32_t md_owner = 0;                           // MDTEST: whose items
  const std::atomic<bool>* abort = nullptr;
  v1::TaskResult* result = nullptr;
  LatencyHistogram* hist = nullptr;
  std::atomic<uint64_t>* bytes = nullptr;
  std::atomic<uint64_t>* ops = nullptr;
  // Records the task's failure (first one wins) and aborts the phase.
  std::function<void(const std::string& what, const std::string& path, int err, uint64_t offset,
                     bool verify)>
      fail;
};

// ---- SMALL_FILES ---------------------------------------------------------
// Layout: <dir>/<file_name>.small.%08d/d%06u/f%08u, small_files_per_dir files
// per directory. Timed: open window = the directories, transfer window =
// create + write + close of every file; then the read-back (with pattern
// check) in readback_start_unix_ns..readback_stop_unix_ns.
std::string SmallFilesRoot(const std::string& dir, const v1::PhaseSpec& spec, uint32_t rank);
// Size of file `index` of `rank`: log-uniform in [min, max], a multiple of 8.
uint64_t SmallFileSize(const v1::PhaseSpec& spec, uint32_t rank, uint64_t index);
void RunSmallFilesTask(TaskWork& w);

// ---- MDTEST ---------------------------------------------------------------
// mdtest 4.1's layout (common/mdtest_layout.h) below `dir`, the -d directory.
// The rank whose items `rank` works on in the spec's op: with mdtest -N
// (md_neighbor_shift s), (rank + k·s) mod tasks in the k-th of create (0),
// stat and rename (1), read (2) and remove (3); itself for tree ops.
uint32_t MdtestItemOwner(const v1::PhaseSpec& spec, uint32_t rank);
// Whether `rank` makes and removes a tree in tree_create / tree_remove:
// every rank with md_unique_dir, else rank 0 (the shared tree).
bool MdtestOwnsTree(const v1::PhaseSpec& spec, uint32_t rank);
// The directories (root first) of the tree `rank` works in: its own for tree
// ops; for item ops the shared tree, or with md_unique_dir the tree of rank
// (owner + shift) mod tasks, whose subdirectories mdtest names after `rank`
// itself (mdtest 4.1 does; the translator refuses -u -N with -z > 0, where
// those differ).
std::vector<std::string> MdtestTaskTree(const std::string& dir, const v1::PhaseSpec& spec,
                                        uint32_t rank);
// Runs the spec's md_op for one task over its items (MdtestItemLayout of
// md_items): w.tree from MdtestTaskTree, w.md_owner from MdtestItemOwner.
// Each operation is timed into w.hist and counted in ops.
void RunMdtestTask(TaskWork& w);
// After all of this agent's tasks of an mdtest phase ended (untimed):
// tree_remove removes the iteration's test-dir when it is empty (the agent
// whose tasks finish last succeeds, as mdtest's rank 0 after its barrier).
void FinishMdtestPhase(const v1::PhaseSpec& spec, const std::string& dir);
// Prepare of tree_create by the agent holding rank 0: makes the iteration's
// test-dir (mdtest does, untimed, before the barrier) if missing.
absl::Status PrepareMdtestTestDir(const v1::PhaseSpec& spec, const std::string& dir);

// rm -r of `path`; a missing path is not an error. Returns entries removed.
absl::StatusOr<uint64_t> RemoveTree(const std::string& path);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_H_
