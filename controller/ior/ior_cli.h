// `lockstep ior <IOR options>` and `lockstep mdtest <mdtest options>`:
// translation of unchanged IOR / mdtest command lines into a Plan, as pure
// functions of argv (no I/O but the injected hostfile reader), so that they
// can be unit-tested and fuzzed. Unknown options are refused by name; a
// malformed or inconsistent value is an InvalidArgument naming the option.
#ifndef LOCKSTEP_CONTROLLER_IOR_IOR_CLI_H_
#define LOCKSTEP_CONTROLLER_IOR_IOR_CLI_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/plan/plan.h"
#include "controller/plan/plan_toml.h"  // PlanToToml, which every front end uses

namespace lockstep {

enum class SummaryFormat { kText, kJson, kCsv };

// Lockstep's own options, shared by both commands (long options only, so
// they never collide with IOR's or mdtest's; their table, which --help
// shows, is IorCommandSpec()/MdtestCommandSpec() in command_specs.h):
//   --agents H:P,...  --hostfile FILE (one HOST:PORT a line, # comments)
//   --local N (local agents; default 2, or 1 when the task count is odd)
//   --tasks-per-agent N  --out DIR  --insecure  --tls_dir DIR
//   mdtest only: --tasks N (total tasks, as mpirun -np)
// How a run is recorded in the history database: --history, --db (""
// means OUT_DIR/history.db), --site, --tag; every command that runs takes
// them (cli/cli_common.h RecordRunInHistory).
struct HistoryRecording {
  bool enabled = true;
  std::string db;
  std::string site;
  std::vector<std::string> tags;
};

struct ControllerCli {
  std::vector<std::string> agents;  // client agents, from --agents and --hostfile
  // Agents a hostfile names with role oss or mds: they join cache barriers
  // and telemetry, and take no tasks.
  std::vector<AgentPlan> servers;
  int local_agents = 0;             // > 0 when no agents are given
  uint32_t tasks_per_agent = 0;     // 0: not given
  std::string out_dir = "./lockstep-results";
  bool insecure = false;
  std::string tls_dir;
  uint32_t total_tasks = 0;         // mdtest --tasks; 0: not given
  std::vector<std::string> roots;   // --root: system directories local agents may write
  HistoryRecording history;         // --history, --db, --site, --tag
};

struct CliCommand {
  Plan plan;
  ControllerCli controller;
  SummaryFormat summary_format = SummaryFormat::kText;
  std::string summary_file;   // -O summaryFile=PATH; empty: stdout
  std::vector<std::string> notes;  // what the translation decided, printed before the run
  // The tool's own command line without Lockstep's options ("ior -a POSIX
  // ..."), shown on IOR's "Command line"; and IOR's -v.
  std::string tool_command_line;
  bool verbose = false;
  int32_t reference_number = 0;  // IOR -A
  // IOR -C, -Z, -X, -Q as given (IOR reports them for the whole test).
  bool reorder_constant = false, reorder_random = false;
  int32_t reorder_random_seed = 0;
  uint32_t task_offset = 1;
};

using FileReader = std::function<absl::StatusOr<std::string>(const std::string&)>;

// `args` excludes the program and the subcommand.
absl::StatusOr<CliCommand> ParseIorCommandLine(const std::vector<std::string>& args,
                                               const FileReader& read_file);


}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IOR_IOR_CLI_H_
