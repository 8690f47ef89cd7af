// SMALL_FILES: each task makes a tree of many small files of varied sizes.
// Layout: <dir>/<file_name>.small.%08d/d%06u/f%08u, small_files_per_dir
// files per directory. Timed: the open window is the directories, the
// transfer window is create + write + close of every file; then the
// read-back with pattern check (readback_start_unix_ns..readback_stop_unix_ns,
// its own row).
#ifndef LOCKSTEP_AGENT_WORKLOADS_SMALL_FILES_H_
#define LOCKSTEP_AGENT_WORKLOADS_SMALL_FILES_H_

#include <cstdint>
#include <memory>
#include <string>

#include "agent/workloads/workload.h"

namespace lockstep {

// The tree of task `rank`.
std::string SmallFilesRoot(const std::string& dir, const v1::PhaseSpec& spec, uint32_t rank);

// Size of file `index` of `rank`: log-uniform in [min, max], a multiple of 8.
uint64_t SmallFileSize(const v1::PhaseSpec& spec, uint32_t rank, uint64_t index);

std::unique_ptr<Workload> MakeSmallFilesWorkload(const v1::PhaseSpec& spec,
                                                 const WorkloadOptions& options);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_SMALL_FILES_H_
