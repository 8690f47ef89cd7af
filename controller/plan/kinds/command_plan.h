// kind = "command": the program and its
// arguments (argv[0] an absolute path or a bare name the agents'
// allow_commands resolve), "KEY=VALUE" entries added to the clean
// environment, the timeout (0: the agent's default, kDefaultCommandTimeoutMs)
// and how much of the end of stdout and stderr comes back.
// The keys controller/plan/kinds/command.cc reads into PhasePlan::Own<CommandPlan>().
#ifndef LOCKSTEP_CONTROLLER_PLAN_KINDS_COMMAND_PLAN_H_
#define LOCKSTEP_CONTROLLER_PLAN_KINDS_COMMAND_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/plan/kind_params.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

struct CommandPlan : KindParamsOf<CommandPlan> {
  std::vector<std::string> command_argv;
  std::vector<std::string> command_env;
  uint32_t command_timeout_seconds = 0;
  uint64_t command_tail_bytes = 4096;
};

// The wire minor that brought COMMAND phases (common/wire_version.h).
inline constexpr uint32_t kCommandWireMinor = 3;

// The absolute path agent `facts` runs for `argv0`: an absolute argv[0]
// that its allow_commands lists, or the one allowed program whose base
// name a bare argv[0] is ("tar" -> "/usr/bin/tar"). PermissionDenied naming
// the program, the agent's allowed ones and the config key to add it to;
// InvalidArgument for a bare name two allowed programs share. The kind's
// RefuseAgent and AdaptForAgent (controller/plan/phase_kind.h) use it.
absl::StatusOr<std::string> ProgramOnAgent(const std::string& argv0, const v1::HostFacts& facts);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_KINDS_COMMAND_PLAN_H_
