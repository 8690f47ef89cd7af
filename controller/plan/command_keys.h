// The keys of a kind = "command" phase: argv, env, timeout_seconds and
// tail_size, read from one [[phase]] table (phase_table.cc) and checked
// against common/command_rules.h, the rules the agent checks again.
//
//   [[phase]]
//   name = "untar"
//   kind = "command"
//   dir = "build"                        # the working directory (created if missing)
//   argv = ["tar", "xf", "../linux.tar"] # no shell; argv[0] a bare name or an absolute path
//   env = ["MAKEFLAGS=-j4"]              # added to PATH, HOME and LANG=C
//   timeout_seconds = 600                # default: 1 hour
//   tail_size = "4k"                     # of stdout and of stderr; default 4 KiB
//
// A bare argv[0] ("tar") is resolved on each agent against its
// allow_commands by base name (controller/run/command_checks.h); a name
// with a '/' must be an absolute path.
#ifndef LOCKSTEP_CONTROLLER_PLAN_COMMAND_KEYS_H_
#define LOCKSTEP_CONTROLLER_PLAN_COMMAND_KEYS_H_

#include "absl/status/status.h"
#include "controller/plan/plan.h"
#include "controller/plan/table_reader.h"

namespace lockstep {

// The plan's keys for command phases, in kPhaseKeys.
inline constexpr const char* kCommandKeys[] = {"argv", "env", "timeout_seconds", "tail_size"};

// Reads them into *p (its kind and tasks_per_agent already read): for
// another kind any of them is an error; for a command phase argv is
// required, and tasks_per_agent must be 1 (one program per agent).
// InvalidArgument names the position, the phase, the key and the fix.
absl::Status ReadCommandKeys(const TableReader& r, PhasePlan* p);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_COMMAND_KEYS_H_
