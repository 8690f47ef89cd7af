#include "controller/cli/cli_commands.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <fstream>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/files.h"
#include "controller/plan/plan.h"
#include "common/status_macros.h"
#include "common/tls.h"
#include "controller/run/coordinator.h"
#include "controller/cli/exit_codes.h"
#include "controller/ior/ior_cli.h"
#include "controller/ior/ior_formats.h"
#include "controller/ior/ior_report.h"
#include "controller/ior/lockstep_lines.h"
#include "controller/mdtest/mdtest_cli.h"
#include "controller/cli/cli_common.h"
#include "controller/mdtest/mdtest_output.h"
#include "controller/cli/printed_report.h"
#include "controller/cli/reach_agents.h"

namespace lockstep {
namespace {

enum class Tool { kIor, kMdtest };

// -O summaryFile=F: IOR opens F for writing (truncating it) as it reads
// the option, fails when it cannot, and says "Writing output to F" on
// stdout: the one line it prints there.
absl::Status OpenSummaryFile(const std::string& path) {
  if (path.empty()) return absl::OkStatus();
  std::ofstream f(path, std::ios::trunc);
  if (!f) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "-O summaryFile=%s: cannot open it for writing (%s); give a writable path",
        path, std::strerror(errno)));
  }
  PrintToStdout(absl::StrFormat("Writing output to %s\n", path));
  return absl::OkStatus();
}

// IOR's report in its -O summaryFormat, on stdout or in -O summaryFile: JSON
// or CSV from the record, the text report (and the notes before it) as
// printed. False (said on stderr) when the file cannot be written.
bool WriteSummary(const CliCommand& cmd, const v1::RunRecord& record, const std::string& run_dir,
                  const std::string& report_text, const char* name) {
  std::string text;
  if (cmd.summary_format == SummaryFormat::kJson) {
    text = FormatIorJson(record, run_dir);
  } else if (cmd.summary_format == SummaryFormat::kCsv) {
    text = FormatIorCsv(record);
  } else if (!cmd.summary_file.empty()) {
    for (const std::string& n : cmd.notes) {
      absl::StrAppendFormat(&text, "# lockstep %s: %s\n", name, n);
    }
    text += report_text;
  } else {
    return true;  // the text report went to stdout as the run went
  }
  if (cmd.summary_file.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return true;
  }
  std::ofstream f(cmd.summary_file, std::ios::trunc);
  f << text;
  if (f) return true;
  std::fprintf(stderr, "lockstep %s: cannot write -O summaryFile=%s: %s\n", name,
               cmd.summary_file.c_str(), std::strerror(errno));
  return false;
}

int RunTranslated(Tool tool, const std::vector<std::string>& args,
                  const std::string& command_line, const std::atomic<bool>* interrupted) {
  const char* name = tool == Tool::kIor ? "ior" : "mdtest";
  FileReader reader = [](const std::string& path) { return ReadPlanInput(path, "an input file"); };
  MdtestCommandInfo md;
  auto cmd = tool == Tool::kIor ? ParseIorCommandLine(args, reader)
                                : ParseMdtestCommandLine(args, reader, &md);
  if (!cmd.ok()) {
    std::fprintf(stderr, "lockstep %s: %s\n", name, std::string(cmd.status().message()).c_str());
    return kExitUsage;
  }
  if (absl::Status opened = OpenSummaryFile(cmd->summary_file); !opened.ok()) {
    std::fprintf(stderr, "lockstep %s: %s\n", name, std::string(opened.message()).c_str());
    return kExitUsage;
  }
  RunOptions options;
  options.out_dir = cmd->controller.out_dir;
  options.command_line = command_line;
  options.interrupted = interrupted;
  const LocalPlacement placement =
      tool == Tool::kIor ? LocalPlacement{.tool = "ior", .what = "-o's directory"}
                         : LocalPlacement{.tool = "mdtest", .what = "-d", .makes_last_dir = true};
  if (absl::Status s = SetUpTranslatedAgents(placement, &*cmd, &options); !s.ok()) {
    std::fprintf(stderr, "lockstep %s: %s\n", name, std::string(s.message()).c_str());
    return kExitUsage;
  }
  v1::RunRecord& fields = options.record_fields;
  fields.set_ior_command_line(cmd->tool_command_line);
  fields.set_ior_verbose(cmd->verbose);
  fields.set_ior_reference_number(cmd->reference_number);
  if (tool == Tool::kIor) {  // IOR's -C, -Z, -X, -Q for every test (TestReorderOf)
    fields.set_ior_reorder_constant(cmd->reorder_constant && cmd->task_offset > 0);
    fields.set_ior_reorder_random(cmd->reorder_random);
    fields.set_ior_reorder_random_seed(cmd->reorder_random_seed);
    fields.set_ior_task_offset(std::max<uint32_t>(cmd->task_offset, 1));
  }
  // With -O summaryFormat=JSON|CSV, IOR prints only that; with -O
  // summaryFile=F, its one line (OpenSummaryFile) and the report goes to F.
  // The text report still goes to the run directory's summary.txt.
  const bool text = cmd->summary_format == SummaryFormat::kText && cmd->summary_file.empty();
  const bool mdtest = tool == Tool::kMdtest;
  if (mdtest) {
    // mdtest's layout replaces IOR's: Lockstep's own lines come as '#' lines
    // as the run goes, mdtest's text at its end (it needs the agents'
    // statfs); its notes are part of its text.
    v1::FrontEndReport& front = *fields.mutable_front_end_report();
    front.set_tool("mdtest");
    *front.mutable_mdtest() = MdtestReportInfoOf(md);
    if (text) {
      for (const std::string& n : cmd->notes) {
        front.add_note_lines(absl::StrFormat("# lockstep %s: %s\n", name, n));
      }
    }
  } else if (text) {
    // IOR's notes come before its report.
    for (const std::string& n : cmd->notes) {
      PrintToStdout(absl::StrFormat("# lockstep %s: %s\n", name, n));
    }
  }
  PrintedReport report(fields, /*to_stdout=*/text);
  report.Attach(&options);
  RunOutcome outcome = RunPlan(cmd->plan, options);
  const v1::RunRecord& record = outcome.record;
  if (!WriteSummary(*cmd, record, outcome.run_dir, report.text()->text(), name) &&
      outcome.failure == RunFailure::kNone) {
    outcome.failure = RunFailure::kOther;
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
