// `lockstep iozone ...`: IOzone's command line → one plan → run → IOzone's
// throughput-mode text, from the run's events (IozoneReportObserver).
#include <cstdio>
#include <filesystem>

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
#include "controller/plan/write_places.h"
#include "controller/run/coordinator.h"

namespace lockstep {
namespace {

// Local agents: the phase directory (IOzone's -F directory, or the working
// directory) must be a place local agents may write (the system-directory
// guard of `lockstep run`, ior, mdtest, io500) and exist; it becomes the
// agents' root.
absl::Status PlaceIozoneLocally(CliCommand* cmd, std::string* root) {
  std::error_code ec;
  const std::string dir = cmd->plan.phases.front().dir;
  const std::filesystem::path abs = std::filesystem::absolute(dir, ec).lexically_normal();
  LocalWritePlaces places;
  places.cwd = std::filesystem::current_path(ec).string();
  places.roots = cmd->controller.roots;
  places.named_on_command_line = true;
  RETURN_IF_ERROR(CheckLocalWritePlace(abs.string(), places,
                                       cmd->plan.phases.front().file_names.empty()
                                           ? "the working directory"
                                           : "-F's directory"));
  if (ec || !std::filesystem::is_directory(abs, ec)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "iozone: directory %s does not exist; create it first (IOzone does not create it either)",
        abs.string()));
  }
  *root = std::filesystem::canonical(abs, ec).string();
  for (PhasePlan& p : cmd->plan.phases) p.dir = *root;
  return SetPlanText(&cmd->plan, "iozone");
}

// Where the agents are and how to reach them; an error message, or "".
std::string SetUpAgents(CliCommand* cmd, RunOptions* options) {
  if (cmd->controller.agents.empty()) {
    options->local_agents = cmd->controller.local_agents;
    absl::Status placed = PlaceIozoneLocally(cmd, &options->local_root);
    return placed.ok() ? "" : std::string(placed.message());
  }
  absl::Status tls = TlsFromDir(cmd->controller.tls_dir, cmd->controller.insecure, options);
  return tls.ok() ? "" : std::string(tls.message());
}

}  // namespace

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
  if (std::string e = SetUpAgents(&*cmd, &options); !e.empty()) {
    std::fprintf(stderr, "lockstep iozone: %s\n", e.c_str());
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
