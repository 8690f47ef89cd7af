// The handlers of `lockstep`'s subcommands, each named in its CommandSpec
// (controller/cli/command_specs*.cc: `.handler`): main (controller/cli/
// main.cc) parses nothing itself; it finds the command's spec and calls its
// handler with the words after the command's name.
#ifndef LOCKSTEP_CONTROLLER_CLI_COMMAND_HANDLERS_H_
#define LOCKSTEP_CONTROLLER_CLI_COMMAND_HANDLERS_H_

#include <string>

#include "common/flags.h"

namespace lockstep {

int RunCommand(const CommandCall& call);     // lockstep run PLAN.toml
int HelpCommand(const CommandCall& call);    // lockstep help [COMMAND], --help, --man
// IOR's, mdtest's and IOzone's own options are theirs (-h included): their
// translators parse the line; only --help is answered before.
int IorHandler(const CommandCall& call);
int MdtestHandler(const CommandCall& call);
int IozoneHandler(const CommandCall& call);
int Io500Handler(const CommandCall& call);
int DlioHandler(const CommandCall& call);
int AgentsHandler(const CommandCall& call);
int CheckHandler(const CommandCall& call);
int HistoryHandler(const CommandCall& call);
int ImportHandler(const CommandCall& call);
int ExportHandler(const CommandCall& call);
int CompareHandler(const CommandCall& call);
int GateHandler(const CommandCall& call);
int ReportHandler(const CommandCall& call);
int VerifyHandler(const CommandCall& call);
int PushHandler(const CommandCall& call);
int CertsHandler(const CommandCall& call);

// "unknown command "X"; did you mean Y? (commands: ...; see lockstep --help)".
std::string UnknownCommand(const std::string& word);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_CLI_COMMAND_HANDLERS_H_
