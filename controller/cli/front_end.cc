#include "controller/cli/front_end.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/flags.h"
#include "controller/cli/cli_common.h"
#include "controller/cli/exit_codes.h"
#include "controller/cli/printed_report.h"

namespace lockstep {
namespace {

struct FrontEndRun {
  RunOutcome outcome;
  std::string report_text;  // the text report as printed
};

// One plan: the report as the run goes (its text to stdout when
// `text_to_stdout`), with `more` observers beside it; the run; its history
// entry; a failed run's line on stderr, "lockstep TOOL: ERROR".
// options->observer and options->report are cleared again before it returns.
FrontEndRun RunOnePlan(const char* tool, const Plan& plan, bool text_to_stdout,
                       const HistoryRecording& history, const std::vector<RunObserver*>& more,
                       RunOptions* options) {
  PrintedReport report(options->record_fields, text_to_stdout);
  report.Attach(options);
  RunEvents events;
  if (!more.empty()) {
    events.Add(report.observer());
    for (RunObserver* o : more) events.Add(o);
    options->observer = &events;
  }
  FrontEndRun run{.outcome = RunPlan(plan, *options), .report_text = report.text()->text()};
  options->observer = nullptr;
  options->report = nullptr;
  RecordRunInHistory(history, options->out_dir, run.outcome, absl::StrCat("lockstep ", tool));
  std::fflush(stdout);
  if (run.outcome.failure != RunFailure::kNone) {
    std::fprintf(stderr, "lockstep %s: %s\n", tool, run.outcome.error.c_str());
  }
  return run;
}

}  // namespace

std::string FrontEnd::UsageLine(const absl::Status& error) const {
  return absl::StrFormat("lockstep %s: %s\n", name(), error.message());
}

std::optional<int> FrontEnd::AfterRun(CliCommand* /*cmd*/, const RunOutcome& outcome,
                                      const std::string& /*report_text*/) {
  return ExitCodeFor(outcome.failure);
}

std::string FrontEnd::NoteLine(const std::string& note) const {
  return absl::StrFormat("# lockstep %s: %s\n", name(), note);
}

void FrontEnd::KeepNotes(const CliCommand& cmd, v1::FrontEndReport* report) const {
  for (const std::string& n : cmd.notes) report->add_note_lines(NoteLine(n));
}

absl::Status TranslatedFrontEnd::SetUpAgents(const std::atomic<bool>* /*interrupted*/,
                                             CliCommand* cmd, RunOptions* o) {
  return UsageError(SetUpTranslatedAgents(Placement(*cmd), cmd, o));
}

absl::StatusOr<std::string> FlagsFrontEnd::ReadInput(const char* what) const {
  auto text = ReadPlanInput(f_.positional()[0], what);
  if (!text.ok()) return UsageError(text.status());
  return text;
}

CliCommand FlagsFrontEnd::CommandOfFlags() const {
  CliCommand cmd;
  cmd.controller.out_dir = f_.GetString("out");
  cmd.controller.history = HistoryRecordingOf(f_);
  return cmd;
}

absl::Status UsageError(const absl::Status& error) {
  return error.ok() ? error : absl::InvalidArgumentError(error.message());
}

int SetUpExitCode(const absl::Status& error) {
  switch (error.code()) {
    case absl::StatusCode::kOk: return kExitOk;
    case absl::StatusCode::kCancelled: return kExitInterrupted;
    case absl::StatusCode::kUnavailable: return kExitConnect;
    case absl::StatusCode::kInternal: return kExitFailure;
    default: return kExitUsage;
  }
}

int RunFrontEnd(FrontEnd& tool, const std::vector<std::string>& args,
                const std::string& command_line, const std::atomic<bool>* interrupted) {
  FileReader reader = [](const std::string& path) { return ReadPlanInput(path, "an input file"); };
  const absl::Status words = ArgumentsAreUtf8(args);
  absl::StatusOr<CliCommand> cmd =
      words.ok() ? tool.Parse(args, reader) : absl::StatusOr<CliCommand>(words);
  // What the command line says, or a summary file it names, is a usage
  // error whatever its code; the set-up's codes say more (SetUpExitCode).
  absl::Status set_up = UsageError(cmd.ok() ? tool.BeforeAgents(*cmd) : cmd.status());
  RunOptions options;
  if (set_up.ok()) {
    options.out_dir = cmd->controller.out_dir;
    options.command_line = command_line;
    options.interrupted = interrupted;
    set_up = tool.SetUpAgents(interrupted, &*cmd, &options);
  }
  if (!set_up.ok()) {
    if (!absl::IsCancelled(set_up) || !set_up.message().empty()) {
      std::fputs(tool.UsageLine(set_up).c_str(), stderr);
    }
    return SetUpExitCode(set_up);
  }
  const bool text_to_stdout = tool.Describe(*cmd, &options.record_fields);
  const std::vector<RunObserver*> observers = tool.Observers();
  for (;;) {
    FrontEndRun run = RunOnePlan(tool.name(), cmd->plan, text_to_stdout,
                                 cmd->controller.history, observers, &options);
    if (std::optional<int> code = tool.AfterRun(&*cmd, run.outcome, run.report_text)) {
      return *code;
    }
  }
}

}  // namespace lockstep
