// The command line of `lockstep`: every subcommand's synopsis, description
// and flags, in one table (common/flags.h parses with it; `--help` and the
// man page lockstep.1 are rendered from it). Flag names keep their
// historical spelling (--local_root, --tls_dir, --tasks-per-agent,
// --max-drop).
#ifndef LOCKSTEP_CONTROLLER_CLI_COMMAND_SPECS_H_
#define LOCKSTEP_CONTROLLER_CLI_COMMAND_SPECS_H_

#include <optional>
#include <span>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/flags.h"

namespace lockstep {

const CommandSpec& RunCommandSpec();
const CommandSpec& IorCommandSpec();     // Lockstep's long options only;
const CommandSpec& MdtestCommandSpec();  // IOR's/mdtest's own are in the notes
const CommandSpec& IozoneCommandSpec();  // IOzone's own are in the notes
const CommandSpec& Io500CommandSpec();
const CommandSpec& DlioCommandSpec();
const CommandSpec& HistoryCommandSpec();
const CommandSpec& ImportCommandSpec();
const CommandSpec& ExportCommandSpec();
const CommandSpec& CompareCommandSpec();
const CommandSpec& GateCommandSpec();
const CommandSpec& ReportCommandSpec();
const CommandSpec& VerifyCommandSpec();
const CommandSpec& CertsCommandSpec();
const CommandSpec& AgentsCommandSpec();
const CommandSpec& CheckCommandSpec();
const CommandSpec& HelpCommandSpec();

// Every subcommand, in the order help lists them.
std::span<const CommandSpec* const> LockstepCommands();
// nullptr when `name` is not a subcommand.
const CommandSpec* FindLockstepCommand(absl::string_view name);
// lockstep(1): the commands plus exit status and see-also sections.
const ProgramSpec& LockstepProgram();

// The CLI's answer to a parse of `command`'s flags: with --help, prints the
// help to stdout and returns 0; on an error, prints "lockstep CMD: ERROR"
// and the usage lines to stderr and returns 2. nullopt: go on and run.
std::optional<int> HelpOrUsageExit(const CommandSpec& command,
                                   const absl::StatusOr<ParsedFlags>& parsed);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_CLI_COMMAND_SPECS_H_
