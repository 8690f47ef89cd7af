// A phase's file-system settings (the layout keys, checksums) against what
// the client agents said of their roots at Attach (HostFacts.roots: path and
// statfs type), checked by the controller before the first phase: a setting
// that a root's file system cannot have (ext4, xfs, tmpfs, NFS, ...) is
// refused before anything runs, naming the phase, the agent, the directory,
// its file system, the key and the fix. Lustre, CephFS and FUSE roots (FUSE:
// ceph-fuse or another, which only the agent can tell) are left to the
// agent's Prepare, which refuses the same way (agent/fs/file_system.h).
//
// Pure functions of the plan and the agents' facts; the coordinator's thread.
#ifndef LOCKSTEP_CONTROLLER_RUN_FS_CHECKS_H_
#define LOCKSTEP_CONTROLLER_RUN_FS_CHECKS_H_

#include <string>
#include <vector>

#include "controller/plan/plan.h"
#include "controller/run/agent_client.h"
#include "controller/run/run_error.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// The statfs type name of the root of `facts` that holds `dir` (relative:
// the first root; absolute: the longest root that is a prefix), "" when
// none does.
std::string RootFsTypeOf(const std::string& dir, const v1::HostFacts& facts);

// kBadPlan, all refusals one line each; empty when nothing is refused.
RunError CheckFsSettings(const Plan& plan, const std::vector<AgentClient*>& clients);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_FS_CHECKS_H_
