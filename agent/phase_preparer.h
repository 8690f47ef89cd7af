// One phase made ready to start on this agent: its spec checked against the
// agent's limits, its directory resolved within the allowed roots, its
// space checked, its file-system settings applied, and a PhaseRunner with
// one parked thread per task. Knows nothing of sessions: AgentCore checks
// the session before and records what the phase leaves after.
//
// Thread-compatible; Prepare() is const and may run on any thread (AgentCore
// calls it without its mutex: preparation does file I/O).
#ifndef LOCKSTEP_AGENT_PHASE_PREPARER_H_
#define LOCKSTEP_AGENT_PHASE_PREPARER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "agent/beneath.h"
#include "agent/fs/file_system.h"
#include "agent/fs/root_mounts.h"
#include "agent/phase_runner.h"
#include "agent/roots.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

struct PhasePreparerOptions {
  uint32_t max_tasks = 0;            // tasks one phase may have on this agent
  uint64_t max_bytes_per_phase = 0;  // what its tasks may write; 0 = any
  RunnerOptions runner;              // handed to MakeWorkload and PhaseRunner
  std::string host;                  // named in refusals ("on host H")
};

struct PreparedPhase {
  std::unique_ptr<PhaseRunner> runner;  // parked, not started
  std::string dir;                      // the resolved phase directory
  // It, held open below its root (agent/beneath.h): the runner's and, for
  // a phase that creates files, the session's until they are removed.
  std::shared_ptr<const BeneathDir> held;
  // resolved_dir, dir_fs, files, threads_parked, and the file system's name,
  // version, layout and checksums when set.
  v1::PrepareReply reply;
  bool creates_files = false;  // its files are the session's until removed
  bool removes_trees = false;  // a tree_remove: a created -d directory goes at Detach
  // The client checksums this phase set; restores them when destroyed.
  // Null when the spec leaves them unchanged.
  std::unique_ptr<FsTunableScope> checksums;
};

class PhasePreparer {
 public:
  // The pointers must outlive the preparer.
  PhasePreparer(const AllowedRoots* roots, const RootMounts* mounts, const FileSystemContext* fs,
                PhasePreparerOptions options);

  // Prepares `spec`, refusing before anything changes when it is not valid
  // here: InvalidArgument for more tasks than max_tasks, more buffers than
  // kMaxAgentBufferBytes or the host's memory (Workload::AgentBufferBytes),
  // more bytes than max_bytes_per_phase or a spec its workload refuses;
  // PermissionDenied (PATH_REFUSED) for a directory outside the roots;
  // NotFound for a missing one; ResourceExhausted (NO_SPACE) when the free
  // space is short (unless spec.ignore_free_space); FailedPrecondition for a
  // root whose mount went away; the file system's own errors for a layout
  // or checksum it refuses.
  // A missing mdtest -d directory is created (rank 0's agent only) and held
  // in `*created_dir` (its path() the directory) even when a later step
  // fails, so that the session can remove it.
  absl::StatusOr<PreparedPhase> Prepare(const v1::PhaseSpec& spec,
                                        std::shared_ptr<const BeneathDir>* created_dir) const;

  // The agent's task limit (max_tasks) as Prepare checks it; a Cleanup's
  // spec passes it too (InvalidArgument), so that no removal walks more task
  // files than a phase here may have.
  absl::Status CheckTasks(const v1::PhaseSpec& spec) const;

  // The plan directory `dir` resolved within the roots and held open below
  // its root, as Prepare holds it (a Cleanup of a phase this session did not
  // prepare). Errors as Prepare's for the directory.
  absl::StatusOr<std::shared_ptr<const BeneathDir>> HoldDir(const std::string& dir) const;

 private:
  const AllowedRoots* const roots_;
  const RootMounts* const mounts_;
  const FileSystemContext* const fs_;
  const PhasePreparerOptions options_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_PHASE_PREPARER_H_
