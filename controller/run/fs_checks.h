// A phase's file-system settings (the layout keys, checksums) against what
// the client agents said of their roots at Attach (HostFacts.roots: path,
// statfs type and, from wire minor 10, the file system's capabilities as
// the agent's fs/ layer declares them), checked by the controller before
// the first phase: a setting that a root's file system cannot have is
// refused before anything runs, naming the phase, the agent, the directory,
// its file system, the key and the fix. The details of a setting a file
// system can have (a stripe_index on CephFS, --allow_lustre) are the agent's
// Prepare's to refuse (agent/fs/file_system.h).
//
// Pure functions of the plan and the agents' facts; the coordinator's thread.
#ifndef LOCKSTEP_CONTROLLER_RUN_FS_CHECKS_H_
#define LOCKSTEP_CONTROLLER_RUN_FS_CHECKS_H_

#include <string>
#include <vector>

#include "common/root_facts.h"
#include "controller/plan/plan.h"
#include "controller/plan/sweep.h"
#include "controller/run/agent_client.h"
#include "controller/run/run_error.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// The phases of every test (`resolved`: ResolvePlan of the run's plan)
// against `clients`: kBadPlan, all refusals one line each (a phase's, then
// the next phase's); empty when nothing is refused.
RunError CheckFsSettings(const ResolvedPlan& resolved, const std::vector<AgentClient*>& clients);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_FS_CHECKS_H_
