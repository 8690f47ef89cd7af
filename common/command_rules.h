// The rules a COMMAND phase's program line follows, checked twice: by the
// controller when it reads a plan (errors then name the file, line and key)
// and by the agent in Prepare (no controller, old or new, gets past them).
// The sizes are in common/limits.h.
//
// No shell ever sees these strings: argv goes to execve(2) as it is.
#ifndef LOCKSTEP_COMMON_COMMAND_RULES_H_
#define LOCKSTEP_COMMON_COMMAND_RULES_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// The PATH of a command's clean environment, and where `lockstep run
// --local` looks up a bare program name.
inline constexpr char kCommandSearchPath[] = "/usr/local/bin:/usr/bin:/bin";

// argv as a whole: at least the program, at most kMaxCommandArgs entries and
// kMaxCommandArgBytes in all, no NUL byte, a non-empty program. Not whether
// the program is a path or a bare name (the two sides differ there).
// InvalidArgument with the reason only ("argv is empty; ...").
absl::Status CheckCommandArgv(const std::vector<std::string>& argv);

// One "KEY=VALUE" of a command's environment: KEY a shell-style name
// ([A-Za-z_][A-Za-z0-9_]*), no NUL byte, and not a variable that makes the
// dynamic loader or libc load code or data chosen by the plan (LD_*,
// GCONV_PATH, GLIBC_TUNABLES, ...): the allow-list names programs, and such
// a variable would run any code through an allowed one. InvalidArgument with
// the reason only.
absl::Status CheckCommandEnvEntry(std::string_view entry);
// The same for every entry, at most kMaxCommandArgs of them and
// kMaxCommandArgBytes in all.
absl::Status CheckCommandEnv(const std::vector<std::string>& env);

// The last component of a program path: "/usr/bin/tar" -> "tar".
std::string CommandBaseName(std::string_view path);

// How a run ended, for errors and reports: "exit 0", "exit 3", "killed by
// signal 9 (Killed)", "timed out after 2 s, killed with its process group
// (signal 15)". `timeout_ms`: the limit it ran under.
std::string CommandEnding(const v1::CommandResult& result, uint32_t timeout_ms);
// True when the run counts as failed: an exit status other than 0, a
// signal, or the timeout.
bool CommandFailed(const v1::CommandResult& result);

// The last `lines` non-empty lines of `text` joined by " | ", the end kept
// within about 300 bytes: what an error quotes of a program's stderr.
std::string LastLines(const std::string& text, int lines);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_COMMAND_RULES_H_
