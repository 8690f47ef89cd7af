// What a command phase (kind = "command") needs of its agents, checked by the
// controller before anything runs (the agent checks again: agent/workloads/
// command.h), and the program each agent is asked to run.
//
// argv[0] as the plan gives it is an absolute path, which the agent's
// allow_commands (HostFacts.allowed_commands) must list, or a bare name,
// which resolves on each agent to the one allowed program of that base name
// ("tar" -> "/usr/bin/tar"); each agent's copy of the spec carries its own
// absolute path.
//
// Pure functions of the plan and the agents' facts; the coordinator's thread.
#ifndef LOCKSTEP_CONTROLLER_RUN_COMMAND_CHECKS_H_
#define LOCKSTEP_CONTROLLER_RUN_COMMAND_CHECKS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/plan/plan.h"
#include "controller/run/agent_client.h"
#include "controller/run/run_error.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// The wire minor that brought COMMAND phases (common/wire_version.h).
inline constexpr uint32_t kCommandWireMinor = 3;

// The absolute path agent `facts` runs for `argv0`. PermissionDenied naming
// the program, the agent's allowed ones and the config key to add it to;
// InvalidArgument for a bare name two allowed programs share.
absl::StatusOr<std::string> ProgramOnAgent(const std::string& argv0, const v1::HostFacts& facts);

// kBadPlan, naming the phase, the agent (address and host), the program and
// the fix, when `agent` cannot run command phase `phase` (argv[0] `argv0`):
// wire minor below kCommandWireMinor, no account to run programs as, the
// program not allowed. Empty otherwise.
RunError CheckCommandAgent(const std::string& phase, const std::string& argv0,
                           const AgentClient& agent);

// CheckCommandAgent for every command phase of `plan` and every client,
// before the first phase; all refusals in one error, one line each.
RunError CheckCommandPhases(const Plan& plan, const std::vector<AgentClient*>& clients);

// A client's copy of a command phase's spec: argv[0] replaced by the program
// on that agent. Other kinds, and a program the agent would refuse (it says
// why in Prepare), are left as they are.
void SetProgramForAgent(const v1::HostFacts& facts, v1::PhaseSpec* spec);

// `lockstep run --local`: the plan's programs, each by its absolute path
// (bare names looked up in kCommandSearchPath, as a shell's PATH would, but
// without one), sorted and once each, for the local agents to allow.
// kBadPlan naming the phase when a program is not found or not executable.
RunError LocalCommandPrograms(const Plan& plan, std::vector<std::string>* programs);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_COMMAND_CHECKS_H_
