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
  PrintedReport report(options.record_fields, text_to_stdout);
  report.Attach(&options);
  RunOutcome outcome = RunPlan(cmd->plan, options);
  RecordRunInHistory(cmd->controller.history, cmd->controller.out_dir, outcome,
                     absl::StrCat("lockstep ", tool.name()));
  if (!tool.AfterRun(*cmd, outcome, report.text()->text()) &&
      outcome.failure == RunFailure::kNone) {
    outcome.failure = RunFailure::kOther;
  }
  std::fflush(stdout);
  if (outcome.failure != RunFailure::kNone) {
    std::fprintf(stderr, "lockstep %s: %s\n", tool.name(), outcome.error.c_str());
  }
  return ExitCodeFor(outcome.failure);
}

}  // namespace lockstep
