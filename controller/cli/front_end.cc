#include "controller/cli/front_end.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/cli/cli_common.h"
#include "controller/cli/exit_codes.h"
#include "controller/cli/printed_report.h"

namespace lockstep {

std::string FrontEnd::UsageLine(const absl::Status& error) const {
  return absl::StrFormat("lockstep %s: %s\n", name(), error.message());
}

std::string FrontEnd::NoteLine(const std::string& note) const {
  return absl::StrFormat("# lockstep %s: %s\n", name(), note);
}

void FrontEnd::KeepNotes(const CliCommand& cmd, v1::FrontEndReport* report) const {
  for (const std::string& n : cmd.notes) report->add_note_lines(NoteLine(n));
}

FrontEndRun RunFrontEndPlan(const char* tool, const Plan& plan, bool text_to_stdout,
                            const HistoryRecording& history,
                            const std::vector<RunObserver*>& more, RunOptions* options) {
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

int RunFrontEnd(FrontEnd& tool, const std::vector<std::string>& args,
                const std::string& command_line, const std::atomic<bool>* interrupted) {
  FileReader reader = [](const std::string& path) { return ReadPlanInput(path, "an input file"); };
  absl::StatusOr<CliCommand> cmd = tool.Parse(args, reader);
  absl::Status usage = cmd.ok() ? tool.BeforeAgents(*cmd) : cmd.status();
  RunOptions options;
  if (usage.ok()) {
    options.out_dir = cmd->controller.out_dir;
    options.command_line = command_line;
    options.interrupted = interrupted;
    usage = SetUpTranslatedAgents(tool.Placement(*cmd), &*cmd, &options);
  }
  if (!usage.ok()) {
    std::fputs(tool.UsageLine(usage).c_str(), stderr);
    return kExitUsage;
  }
  const bool text_to_stdout = tool.Describe(*cmd, &options.record_fields);
  FrontEndRun run = RunFrontEndPlan(tool.name(), cmd->plan, text_to_stdout,
                                    cmd->controller.history, {}, &options);
  if (!tool.AfterRun(*cmd, run.outcome, run.report_text) &&
      run.outcome.failure == RunFailure::kNone) {
    return ExitCodeFor(RunFailure::kOther);
  }
  return ExitCodeFor(run.outcome.failure);
}

}  // namespace lockstep
