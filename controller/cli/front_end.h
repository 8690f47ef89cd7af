// A tool's command line run as Lockstep (`lockstep ior`, `mdtest`, `iozone`):
// each front end says only what is its own: how its arguments become a plan
// (CliCommand), where local agents go, what the record and the report need
// of it, and what it writes after the run. RunFrontEnd does the rest, the
// same for all: the agents and TLS (SetUpTranslatedAgents, with the
// system-directory guard and `lockstep run`'s plan checks), the report, the
// run, its history entry (--history, --db, --site, --tag, as `lockstep run`),
// the failure's line and the exit code.
#ifndef LOCKSTEP_CONTROLLER_CLI_FRONT_END_H_
#define LOCKSTEP_CONTROLLER_CLI_FRONT_END_H_

#include <atomic>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "controller/cli/reach_agents.h"
#include "controller/ior/ior_cli.h"
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
  virtual absl::StatusOr<CliCommand> Parse(const std::vector<std::string>& args,
                                           const FileReader& read_file) = 0;
  // The usage error's line (with its newline).
  virtual std::string UsageLine(const absl::Status& error) const;
  // Before any agent is reached: what the tool does first (IOR opens its
  // summary file). An error is a usage error.
  virtual absl::Status BeforeAgents(const CliCommand& /*cmd*/) { return absl::OkStatus(); }
  // Where local agents go (--local N).
  virtual LocalPlacement Placement(const CliCommand& cmd) const = 0;
  // The record's front-end fields (command line, report layout, notes);
  // the notes it prints itself go to stdout here. Returns whether the text
  // report goes to stdout as the run goes.
  virtual bool Describe(const CliCommand& cmd, v1::RunRecord* fields) = 0;
  // After the run: what the tool writes besides the text report (IOR's -O
  // summaryFormat). False when it could not (said on stderr): the run fails.
  virtual bool AfterRun(const CliCommand& /*cmd*/, const RunOutcome& /*outcome*/,
                        const std::string& /*report_text*/) {
    return true;
  }

  // A note of the translation as it prints: "# lockstep NAME: NOTE\n".
  std::string NoteLine(const std::string& note) const;
  // The notes as the tool's report keeps them (FrontEndReport.note_lines:
  // a layout that replaces IOR's prints them with its text).
  void KeepNotes(const CliCommand& cmd, v1::FrontEndReport* report) const;
};

// One plan of a front end, run and recorded the same way for all five (ior,
// mdtest, iozone through RunFrontEnd; io500 and dlio, whose flags are
// Lockstep's own, directly): the report as the run goes (its text to
// stdout when `text_to_stdout`), with `more` observers beside it; the run;
// its history entry (`history`); a failed run's line on stderr, "lockstep
// TOOL: ERROR". options->observer and options->report are cleared again
// before it returns.
struct FrontEndRun {
  RunOutcome outcome;
  std::string report_text;  // the text report as printed
};
FrontEndRun RunFrontEndPlan(const char* tool, const Plan& plan, bool text_to_stdout,
                            const HistoryRecording& history,
                            const std::vector<RunObserver*>& more, RunOptions* options);

// Parses, sets up the agents, runs and reports `tool`'s command line; the
// exit code (cli/exit_codes.h).
int RunFrontEnd(FrontEnd& tool, const std::vector<std::string>& args,
                const std::string& command_line, const std::atomic<bool>* interrupted);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_CLI_FRONT_END_H_
