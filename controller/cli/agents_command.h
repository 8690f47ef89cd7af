// Commands that look before a run: `lockstep agents` (which agents answer,
// what they are) and `lockstep check` (is the plan right, which directories
// it uses). Neither takes an agent for a run nor touches a file.
#ifndef LOCKSTEP_CONTROLLER_CLI_AGENTS_COMMAND_H_
#define LOCKSTEP_CONTROLLER_CLI_AGENTS_COMMAND_H_

#include <atomic>
#include <string>
#include <vector>

namespace lockstep {

// `lockstep agents ...`: exit 0 when every agent answered, 2 for bad flags,
// 3 when one did not.
int AgentsCommand(const std::vector<std::string>& args, const std::atomic<bool>* interrupted);

// `lockstep check [--dirs] PLAN.toml`: 0 when the plan is valid, 2 otherwise.
int CheckCommand(const std::vector<std::string>& args);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_CLI_AGENTS_COMMAND_H_
