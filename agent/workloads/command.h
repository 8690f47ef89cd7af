// COMMAND: one program (PhaseSpec.command_argv, no shell) per client agent,
// started by the phase's one task at the start instant every agent shares,
// the way `dsh -w n[01-10] "time tar xf linux.tar"` runs a script on many
// hosts at once. TaskResult.command holds what `time` prints (real, user,
// sys), the exit status and the ends of stdout and stderr.
//
// The agent trusts no controller here (agent/workloads/command_process.h
// has how a program is started):
//   - argv[0] must be an absolute path the agent config's allow_commands
//     lists, exactly; anything else is refused naming the program and the
//     key (PermissionDenied, so the run stops as a bad plan).
//   - The program runs as the config's command_user (ResolveCommandAccount:
//     by default "nobody" under a root agent, the agent's own account
//     otherwise), in the phase directory, with a clean environment
//     (CommandEnvironment) and the plan's env checked (CheckCommandEnv).
//   - A missing phase directory is created, owned by that account; an
//     existing one must let the account enter it (checked in Prepare).
//   - command_timeout_ms (0: kDefaultCommandTimeoutMs) bounds it; at the
//     timeout, and on Abort or lease expiry, its whole process group is
//     killed. Files the program makes are its own: the agent removes none.
// A program that exits with a status other than 0, dies of a signal or
// times out fails its task: the error names the host, the program, the
// status and the last lines of its stderr.
#ifndef LOCKSTEP_AGENT_WORKLOADS_COMMAND_H_
#define LOCKSTEP_AGENT_WORKLOADS_COMMAND_H_

#include <memory>

#include "agent/workloads/workload.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

std::unique_ptr<Workload> MakeCommandWorkload(const v1::PhaseSpec& spec,
                                              const WorkloadOptions& options);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_COMMAND_H_
