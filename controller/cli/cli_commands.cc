#include "controller/cli/cli_commands.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "common/tls.h"
#include "controller/run/coordinator.h"
#include "controller/cli/exit_codes.h"
#include "controller/ior/ior_cli.h"
#include "controller/ior/ior_formats.h"
#include "controller/mdtest/mdtest_cli.h"
#include "controller/cli/cli_common.h"
#include "controller/mdtest/mdtest_output.h"
#include "controller/plan/write_places.h"

namespace lockstep {
namespace {

enum class Tool { kIor, kMdtest };

// Local agents: the directory the agents may write below, and the phases'
// directory on this host. IOR's -o (mdtest's -d) is relative to the working
// directory. mdtest creates a missing -d (one level): its parent is then the
// agents' root and the agent creates it.
absl::Status PlaceLocally(Tool tool, CliCommand* cmd, std::string* root) {
  std::error_code ec;
  const std::string dir = cmd->plan.phases.empty() ? "." : cmd->plan.phases.front().dir;
  std::filesystem::path abs = std::filesystem::absolute(dir, ec).lexically_normal();
  // Where it may write first: "does not exist; create it" is no advice for
  // a directory that would then be refused.
  LocalWritePlaces places;
  places.cwd = std::filesystem::current_path(ec).string();
  places.roots = cmd->controller.roots;
  places.named_on_command_line = true;
  RETURN_IF_ERROR(CheckLocalWritePlace(abs.string(), places, tool == Tool::kIor ? "-o's directory"
                                                                                : "-d"));
  std::string placed;
  if (!ec && std::filesystem::is_directory(abs, ec)) {
    *root = std::filesystem::canonical(abs, ec).string();
    placed = *root;
  } else if (tool == Tool::kMdtest) {
    std::string s = abs.string();
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    std::filesystem::path p(s);
    if (!std::filesystem::is_directory(p.parent_path(), ec)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "-d %s: its parent directory %s does not exist; mdtest creates only the last "
          "directory: create the parent first",
          dir, p.parent_path().string()));
    }
    *root = std::filesystem::canonical(p.parent_path(), ec).string();
    placed = (std::filesystem::path(*root) / p.filename()).string();
  } else {
    return absl::InvalidArgumentError(
        absl::StrFormat("directory %s does not exist; create it first", abs.string()));
  }
  for (PhasePlan& p : cmd->plan.phases) p.dir = placed;
  cmd->plan.text = PlanToToml(cmd->plan);
  return absl::OkStatus();
}

int RunTranslated(Tool tool, const std::vector<std::string>& args,
                  const std::string& command_line, const std::atomic<bool>* interrupted) {
  const char* name = tool == Tool::kIor ? "ior" : "mdtest";
  FileReader reader = [](const std::string& path) { return ReadFileToString(path); };
  MdtestCommandInfo md;
  auto cmd = tool == Tool::kIor ? ParseIorCommandLine(args, reader)
                                : ParseMdtestCommandLine(args, reader, &md);
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
    options.local_agents = cmd->controller.local_agents;
    absl::Status placed = PlaceLocally(tool, &*cmd, &options.local_root);
    if (!placed.ok()) {
      std::fprintf(stderr, "lockstep %s: %s\n", name, std::string(placed.message()).c_str());
      return kExitUsage;
    }
  }
  options.ior_command_line = cmd->tool_command_line;
  options.ior_verbose = cmd->verbose;
  options.ior_reference_number = cmd->reference_number;
  if (tool == Tool::kIor) {
    options.ior_reorder_given = true;
    options.ior_reorder.node_offset = cmd->reorder_constant ? cmd->task_offset : 0;
    options.ior_reorder.random = cmd->reorder_random;
    options.ior_reorder.random_seed = cmd->reorder_random_seed;
    options.ior_reorder.task_offset = cmd->task_offset;
  }
  // mdtest's layout replaces IOR's: the coordinator's own lines come as '#'
  // lines, mdtest's text after the run (it needs the agents' statfs).
  options.ior_text = tool == Tool::kIor;
  // With -O summaryFormat=JSON|CSV, IOR prints only that: the text report
  // still goes to the run directory's summary.txt.
  const bool text = cmd->summary_format == SummaryFormat::kText || !cmd->summary_file.empty();
  std::string printed;
  auto print = [&printed](const std::string& s) {
    printed += s;
    std::fwrite(s.data(), 1, s.size(), stdout);
    std::fflush(stdout);
  };
  if (text) {
    options.print = print;
    for (const std::string& n : cmd->notes) print(absl::StrFormat("# lockstep %s: %s\n", name, n));
  }
  const int64_t started = absl::ToUnixSeconds(absl::Now());
  RunOutcome outcome = RunPlan(cmd->plan, options);
  // mdtest's summary reads the agents' task records, which the run moved out
  // of memory into run.json: read back, they take several times run.json's
  // size. IOR's summaries need only the phases' rows, still in outcome.record.
  const bool mdtest = tool == Tool::kMdtest;
  const v1::RunRecord full = mdtest ? FullRunRecord(outcome) : v1::RunRecord();
  const v1::RunRecord& record = mdtest ? full : outcome.record;
  if (mdtest && record.tests_size() > 0) {
    std::string text =
        FormatMdtestHeader(md, MdtestTimestamp(started), MdtestFsStats(record)) +
        FormatMdtestSummary(md, record,
                            MdtestTimestamp(absl::ToUnixSeconds(absl::Now())));
    print(text);
    if (!outcome.run_dir.empty()) {
      // summary.txt: the text printed.
      absl::Status s = WriteFileAtomically(outcome.run_dir + "/summary.txt", printed);
      if (!s.ok()) {
        std::fprintf(stderr, "lockstep %s: %s\n", name, std::string(s.message()).c_str());
        if (outcome.failure == RunFailure::kNone) outcome.failure = RunFailure::kOther;
      }
    }
  }
  if (cmd->summary_format != SummaryFormat::kText) {
    std::string text = cmd->summary_format == SummaryFormat::kJson
                           ? FormatIorJson(record, outcome.run_dir)
                           : FormatIorCsv(record);
    if (cmd->summary_file.empty()) {
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      std::ofstream f(cmd->summary_file);
      f << text;
      if (!f) {
        std::fprintf(stderr, "lockstep %s: cannot write %s\n", name, cmd->summary_file.c_str());
        if (outcome.failure == RunFailure::kNone) outcome.failure = RunFailure::kOther;
      }
    }
  }
  std::fflush(stdout);
  if (outcome.failure != RunFailure::kNone) {
    std::fprintf(stderr, "lockstep %s: %s\n", name, outcome.error.c_str());
  }
  return ExitCodeFor(outcome.failure);
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
