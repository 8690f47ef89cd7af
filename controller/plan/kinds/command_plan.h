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

#include "controller/plan/kind_params.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

struct CommandPlan : KindParamsOf<CommandPlan> {
  std::vector<std::string> command_argv;
  std::vector<std::string> command_env;
  uint32_t command_timeout_seconds = 0;
  uint64_t command_tail_bytes = 4096;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_KINDS_COMMAND_PLAN_H_
