// A tool's command line run as Lockstep (`lockstep ior`, `mdtest`, `iozone`,
// `io500`, `dlio`): each front end says only what is its own: how its
// arguments become a plan (CliCommand), how its agents are reached (a
// translated command line through SetUpTranslatedAgents, a front end with
// Lockstep's own flags through FrontEndAgentsFromFlags), what the record and
// the report need of it, and what it writes after the run. RunFrontEnd does
// the rest, the same for all: the order of the steps, the report, the run,
// its history entry (--history, --db, --site, --tag, as `lockstep run`), the
// failure's line and the exit code.
#ifndef LOCKSTEP_CONTROLLER_CLI_FRONT_END_H_
#define LOCKSTEP_CONTROLLER_CLI_FRONT_END_H_

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/flags.h"
#include "controller/cli/reach_agents.h"
#include "controller/ior/ior_cli.h"
#include "controller/record/run_observer.h"
#include "controller/run/coordinator.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

class FrontEnd {
 public:
  virtual ~FrontEnd() = default;

  // "ior": its errors print as "lockstep ior: MESSAGE".
  virtual const char* name() const = 0;
  // The arguments (without the program and the subcommand) as a command;
  // an error is a usage error. The front end may keep what it needs later.
  // cmd.controller's out_dir and history are used by RunFrontEnd.
  virtual absl::StatusOr<CliCommand> Parse(const std::vector<std::string>& args,
                                           const FileReader& read_file) = 0;
  // A set-up error's line (with its newline).
  virtual std::string UsageLine(const absl::Status& error) const;
  // Before any agent is reached: what the tool does first (IOR opens its
  // summary file). An error is a usage error.
  virtual absl::Status BeforeAgents(const CliCommand& /*cmd*/) { return absl::OkStatus(); }
  // The agents and how they are reached (o->agents or o->local_agents and
  // o->local_root, the TLS material) and, when the plan depends on them,
  // cmd->plan. When it returns, cmd->plan has passed `lockstep run`'s checks
  // (SetPlanText or ParsePlan). An error's code is the exit code's
  // (SetUpExitCode); a Cancelled one prints nothing.
  virtual absl::Status SetUpAgents(const std::atomic<bool>* interrupted, CliCommand* cmd,
                                   RunOptions* o) = 0;
  // The record's front-end fields (command line, report layout, notes);
  // the notes it prints itself go to stdout here. Returns whether the text
  // report goes to stdout as the run goes.
  virtual bool Describe(const CliCommand& cmd, v1::RunRecord* fields) = 0;
  // Observers of every run beside the report (io500: the phases' per-agent
  // records).
  virtual std::vector<RunObserver*> Observers() { return {}; }
  // After a run: what the tool writes besides the text report (IOR's -O
  // summaryFormat, IO500's files, DLIO's metric lines). Returns the exit
  // code, or nullopt when another run follows (a sweep's next step):
  // cmd->plan is then its plan, checked. By default the run's own.
  virtual std::optional<int> AfterRun(CliCommand* cmd, const RunOutcome& outcome,
                                      const std::string& report_text);

  // A note of the translation as it prints: "# lockstep NAME: NOTE\n".
  std::string NoteLine(const std::string& note) const;
  // The notes as the tool's report keeps them (FrontEndReport.note_lines:
  // a layout that replaces IOR's prints them with its text).
  void KeepNotes(const CliCommand& cmd, v1::FrontEndReport* report) const;
};

// A translated command line (ior, mdtest, iozone): the agents its command
// line names (cmd->controller), else local ones placed where its phases go
// (SetUpTranslatedAgents). Every set-up error is a usage error.
class TranslatedFrontEnd : public FrontEnd {
 public:
  // Where local agents go (--local N).
  virtual LocalPlacement Placement(const CliCommand& cmd) const = 0;
  absl::Status SetUpAgents(const std::atomic<bool>* interrupted, CliCommand* cmd,
                           RunOptions* o) final;
};

// A front end whose flags are Lockstep's own (io500, dlio: the ParsedFlags
// of its CommandSpec, which outlive it): its input is the first positional
// argument; --out and the history flags (--history, --db, --site, --tag) as
// `lockstep run` takes them.
class FlagsFrontEnd : public FrontEnd {
 protected:
  explicit FlagsFrontEnd(const ParsedFlags& f) : f_(f) {}
  // The text of the first positional argument (`what`: "an IO500 ini
  // file"); an error is a usage error.
  absl::StatusOr<std::string> ReadInput(const char* what) const;
  // A command with the flags' results directory and history settings.
  CliCommand CommandOfFlags() const;

  const ParsedFlags& f_;
};

// `error` as a usage error (InvalidArgument, exit 2) whatever its code; OK
// stays OK.
absl::Status UsageError(const absl::Status& error);

// The exit code of a set-up error (cli/exit_codes.h): Cancelled 130
// (interrupted), Unavailable 3 (an agent could not be reached), Internal 1
// (what the controller itself could not make), any other 2 (usage).
int SetUpExitCode(const absl::Status& error);

// Parses, sets up the agents, runs (again while AfterRun asks) and reports
// `tool`'s command line; the exit code (cli/exit_codes.h).
int RunFrontEnd(FrontEnd& tool, const std::vector<std::string>& args,
                const std::string& command_line, const std::atomic<bool>* interrupted);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_CLI_FRONT_END_H_
