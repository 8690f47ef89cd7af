// The CLI of results: subcommands of `lockstep` that read, store, compare,
// gate and report recorded runs. Each takes the arguments after its
// subcommand word and parses them with its table in controller/cli/command_specs.h
// (`lockstep COMMAND --help` lists the flags); --help prints that and
// returns 0, a bad flag prints the error and the usage and returns 2.
//
//   lockstep history [--db FILE] [--plan NAME|SHA256] [--site S] [--tag T] ...
//   lockstep import  [--db FILE] [--site S] [--tag T]... RUN.json...
//   lockstep export  [--db FILE] RUN [OUT.json|-] [--csv F] [--html F] ...
//   lockstep compare [--db FILE] RUN RUN [RUN...] [--csv F] [--html F] ...
//   lockstep gate    [--db FILE] RUN [--baseline RUN|last-good] [--max-drop 5%]...
//                    [--noise-window N] [--junit FILE]
//   lockstep report  [--db FILE] RUN... [--html F] [--csv F] ...
//
// RUN is resolved by controller/results/run_ref.h: a run id in the history db, a run
// directory, or a run.json file. --db defaults to
// ./lockstep-results/history.db.
//
// Exit codes: 0 success; 1 a runtime failure (db locked or unwritable, run
// not found); 2 bad flags or bad input (a malformed run.json). gate: 0 pass,
// 1 regression, 2 bad input, 3 no baseline found.
#ifndef LOCKSTEP_CONTROLLER_CLI_RESULTS_COMMANDS_H_
#define LOCKSTEP_CONTROLLER_CLI_RESULTS_COMMANDS_H_

#include <string>
#include <vector>

namespace lockstep {

int HistoryCommand(const std::vector<std::string>& args);
int ImportCommand(const std::vector<std::string>& args);
int ExportCommand(const std::vector<std::string>& args);
int CompareCommand(const std::vector<std::string>& args);
int GateCommand(const std::vector<std::string>& args);
// Without --html/--csv/--openmetrics/--influx: prints each run's summary
// again (a run directory without run.json is rebuilt from its journal and
// the files written back, see journal_report.h); with them, writes them.
int ReportCommand(const std::vector<std::string>& args);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_CLI_RESULTS_COMMANDS_H_
