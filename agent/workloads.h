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
// check) in readback_start_ns..readback_stop_ns.
std::string SmallFilesRoot(const std::string& dir, const v1::PhaseSpec& spec, uint32_t rank);
// Size of file `index` of `rank`: log-uniform in [min, max], a multiple of 8.
uint64_t SmallFileSize(const v1::PhaseSpec& spec, uint32_t rank, uint64_t index);
void RunSmallFilesTask(TaskWork& w);

// ---- MDTEST ---------------------------------------------------------------
// Directories in a tree of branching b and depth z: (b^(z+1)-1)/(b-1).
uint64_t MdtestTreeDirs(uint32_t branching, uint32_t depth);
// The tree of `rank`: <dir>/<file_name>.mdtest.%08d with md_unique_dir, else
// the one shared <dir>/<file_name>.mdtest (created and removed by rank 0).
std::string MdtestTreeRoot(const std::string& dir, const v1::PhaseSpec& spec, uint32_t rank);
// Paths of the tree's directories in breadth-first order (index 0 = root):
// the children of directory k are b*k+1 .. b*k+b, named mdtest_tree.<index>.
std::vector<std::string> MdtestTreePaths(const std::string& root, uint32_t branching,
                                         uint32_t depth);
// Runs the spec's md_op for one task: items i = 0..md_items-1 live in tree
// directory i % dirs as file.mdtest.<rank>.<i> / dir.mdtest.<rank>.<i>.
void RunMdtestTask(TaskWork& w);

// rm -r of `path`; a missing path is not an error. Returns entries removed.
absl::StatusOr<uint64_t> RemoveTree(const std::string& path);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_H_
