#include "controller/cli_commands.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_format.h"
#include "common/files.h"
#include "common/tls.h"
#include "controller/coordinator.h"
#include "controller/exit_codes.h"
#include "controller/ior_cli.h"
#include "controller/ior_formats.h"
#include "controller/mdtest_cli.h"
#include "controller/mdtest_output.h"

namespace lockstep {
namespace {

enum class Tool { kIor, kMdtest };

int RunTranslated(Tool tool, const std::vector<std::string>& args,
                  const std::string& command_line, const std::atomic<bool>* interrupted) {
  const char* name = tool == Tool::kIor ? "ior" : "mdtest";
  FileReader reader = [](const std::string& path) { return ReadFileToString(path); };
  auto cmd = tool == Tool::kIor ? ParseIorCommandLine(args, reader)
                                : ParseMdtestCommandLine(args, reader);
  if (!cmd.ok()) {
    std::fprintf(stderr, "lockstep %s: %s\n", name, std::string(cmd.status().message()).c_str());
    return kExitUsage;
  }
  RunOptions options;
  options.out_dir = cmd->controller.out_dir;
  options.command_line = command_line;
  options.interrupted = interrupted;
  if (!cmd->controller.agents.empty()) {
    options.insecure = cmd->controller.insecure;
    if (!options.insecure) {
      const std::string& dir = cmd->controller.tls_dir;
      if (!dir.empty()) {
        TlsFiles files{dir + "/ca.pem", dir + "/controller.pem", dir + "/controller.key"};
        auto creds = MakeChannelCredentials(files);
        if (!creds.ok()) {
          std::fprintf(stderr, "lockstep %s: %s\n", name,
                       std::string(creds.status().message()).c_str());
          return kExitUsage;
        }
        options.credentials = *creds;
      }
    }
  } else {
    // Local agents: IOR's -o (mdtest's -d) is a path on this host, relative
    // to the working directory; it becomes the agents' allowed root.
    options.local_agents = cmd->controller.local_agents;
    std::error_code ec;
    std::string dir = cmd->plan.phases.empty() ? "." : cmd->plan.phases.front().dir;
    std::filesystem::path abs = std::filesystem::absolute(dir, ec);
    if (ec || !std::filesystem::is_directory(abs, ec)) {
      std::fprintf(stderr, "lockstep %s: directory %s does not exist; create it first\n", name,
                   abs.string().c_str());
      return kExitUsage;
    }
    abs = std::filesystem::canonical(abs, ec);
    options.local_root = abs.string();
    for (PhasePlan& p : cmd->plan.phases) p.dir = options.local_root;
    cmd->plan.text = PlanToToml(cmd->plan);
  }
  options.ior_command_line = cmd->tool_command_line;
  options.ior_verbose = cmd->verbose;
  // With -O summaryFormat=JSON|CSV, IOR prints only that: the text report
  // still goes to the run directory's summary.txt.
  const bool text = cmd->summary_format == SummaryFormat::kText || !cmd->summary_file.empty();
  if (text) {
    options.print = [](const std::string& s) {
      std::fwrite(s.data(), 1, s.size(), stdout);
      std::fflush(stdout);
    };
    for (const std::string& n : cmd->notes) std::printf("# lockstep %s: %s\n", name, n.c_str());
  }
  RunOutcome outcome = RunPlan(cmd->plan, options);
  if (tool == Tool::kMdtest) {
    std::string summary = FormatMdtestSummary(CollectMdtestRates(outcome.record),
                                              cmd->plan.repetitions);
    std::fwrite(summary.data(), 1, summary.size(), stdout);
  }
  if (cmd->summary_format != SummaryFormat::kText) {
    std::string text = cmd->summary_format == SummaryFormat::kJson ? FormatIorJson(outcome.record, outcome.run_dir)
                                                                   : FormatIorCsv(outcome.record);
    if (cmd->summary_file.empty()) {
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      std::ofstream f(cmd->summary_file);
      f << text;
      if (!f) {
        std::fprintf(stderr, "lockstep %s: cannot write %s\n", name, cmd->summary_file.c_str());
        if (outcome.exit_code == kExitOk) outcome.exit_code = kExitFailure;
      }
    }
  }
  std::fflush(stdout);
  if (outcome.exit_code != kExitOk) {
    std::fprintf(stderr, "lockstep %s: %s\n", name, outcome.error.c_str());
  }
  return outcome.exit_code;
}

}  // namespace

int IorCommand(const std::vector<std::string>& args, const std::string& command_line,
               const std::atomic<bool>* interrupted) {
  return RunTranslated(Tool::kIor, args, command_line, interrupted);
}

int MdtestCommand(const std::vector<std::string>& args, const std::string& command_line,
                  const std::atomic<bool>* interrupted) {
  return RunTranslated(Tool::kMdtest, args, command_line, interrupted);
}

}  // namespace lockstep
