// `lockstep iozone ...`: IOzone's command line → one plan → run → IOzone's
// throughput-mode text, from the run's events (IozoneReportObserver).
#include <cstdio>

#include "absl/strings/str_format.h"
#include "common/files.h"
#include "controller/plan/plan.h"
#include "common/status_macros.h"
#include "controller/cli/cli_commands.h"
#include "controller/cli/cli_common.h"
#include "controller/cli/exit_codes.h"
#include "controller/iozone/iozone_cli.h"
#include "controller/iozone/iozone_output.h"
#include "controller/cli/printed_report.h"
#include "controller/cli/reach_agents.h"
#include "controller/run/coordinator.h"

namespace lockstep {

int IozoneCommand(const std::vector<std::string>& args, const std::string& command_line,
                  const std::atomic<bool>* interrupted) {
  FileReader reader = [](const std::string& path) { return ReadPlanInput(path, "an input file"); };
  IozoneCommandInfo info;
  auto cmd = ParseIozoneCommandLine(args, reader, &info);
  if (!cmd.ok()) {
    // "lockstep iozone: option -j is not supported by lockstep iozone; ..."
    std::fprintf(stderr, "lockstep %s\n", std::string(cmd.status().message()).c_str());
    return kExitUsage;
  }
  RunOptions options;
  options.out_dir = cmd->controller.out_dir;
  options.command_line = command_line;
  options.record_fields.set_iozone_command_line(info.command_line);
  options.interrupted = interrupted;
  // Local agents: the phase directory (IOzone's -F directory, or the working
  // directory) must exist, as IOzone needs it, and becomes their root.
  const LocalPlacement placement{
      .tool = "iozone",
      .what = cmd->plan.phases.front().file_names.empty() ? "the working directory"
                                                           : "-F's directory",
      .missing_note = " (IOzone does not create it either)"};
  if (absl::Status s = SetUpTranslatedAgents(placement, &*cmd, &options); !s.ok()) {
    std::fprintf(stderr, "lockstep iozone: %s\n", std::string(s.message()).c_str());
    return kExitUsage;
  }
  // IOzone's layout replaces IOR's: Lockstep's own lines come as '#' lines
  // as the run goes, IOzone's text at its end.
  v1::FrontEndReport& front = *options.record_fields.mutable_front_end_report();
  front.set_tool("iozone");
  *front.mutable_iozone() = IozoneReportInfoOf(info);
  for (const std::string& n : cmd->notes) {
    front.add_note_lines(absl::StrFormat("# lockstep iozone: %s\n", n));
  }
  PrintedReport report(options.record_fields);
  report.Attach(&options);
  RunOutcome outcome = RunPlan(cmd->plan, options);
  if (outcome.failure != RunFailure::kNone) {
    std::fprintf(stderr, "lockstep iozone: %s\n", outcome.error.c_str());
  }
  return ExitCodeFor(outcome.failure);
}

}  // namespace lockstep
