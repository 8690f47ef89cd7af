// The machinery of a COMMAND phase (agent/workloads/command.h): the account
// a program runs as, its clean environment, and the phase directory made
// usable by it. The program itself starts through the agent's one process
// runner (common/process_runner.h: RunProcess).
#ifndef LOCKSTEP_AGENT_WORKLOADS_COMMAND_PROCESS_H_
#define LOCKSTEP_AGENT_WORKLOADS_COMMAND_PROCESS_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/beneath.h"
#include "common/process_runner.h"

namespace lockstep {

// The account of the agent config's command_user. `configured` empty: the
// default, "nobody" when the agent runs as root and the agent's own account
// otherwise. Root only when configured as "root" (or uid 0) explicitly.
// Errors (InvalidArgument, naming command_user and the fix): an unknown
// account; another account than the agent's own when the agent is not root
// (it cannot switch).
absl::StatusOr<CommandAccount> ResolveCommandAccount(const std::string& configured);

// The clean environment: PATH (kCommandSearchPath), HOME (the account's),
// LANG=C, then `extra` ("KEY=VALUE", checked by CheckCommandEnv), a key
// given again replacing the earlier one.
std::vector<std::string> CommandEnvironment(const CommandAccount& account,
                                            const std::vector<std::string>& extra);

// Makes `dir` usable by `account`: when it does not exist, creates it (one
// level, mode 0755) owned by the account (made under a temporary name,
// chowned, then renamed into place, so that agents sharing a file system do
// not race); then checks, in a child running as the account, that it can
// enter `dir` and execute `program`. FailedPrecondition naming the
// directory or program, the account and the fix. Every step below the
// held directory (agent/beneath.h: `held` is the phase directory, opened by
// OpenDirToCreate), none by a path from /.
absl::Status PrepareCommandDir(const BeneathDir& held, const std::string& program,
                               const CommandAccount& account);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_COMMAND_PROCESS_H_
