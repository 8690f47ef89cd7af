#include "controller/cli/cli_commands.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "absl/strings/str_format.h"
#include "controller/cli/exit_codes.h"
#include "controller/cli/front_end.h"
#include "controller/cli/printed_report.h"
#include "controller/ior/ior_cli.h"
#include "controller/ior/ior_formats.h"
#include "controller/mdtest/mdtest_cli.h"
#include "controller/mdtest/mdtest_output.h"

namespace lockstep {
namespace {

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
bool WriteSummary(const FrontEnd& tool, const CliCommand& cmd, const v1::RunRecord& record,
                  const std::string& run_dir, const std::string& report_text) {
  std::string text;
  if (cmd.summary_format == SummaryFormat::kJson) {
    text = FormatIorJson(record, run_dir);
  } else if (cmd.summary_format == SummaryFormat::kCsv) {
    text = FormatIorCsv(record);
  } else if (!cmd.summary_file.empty()) {
    for (const std::string& n : cmd.notes) text += tool.NoteLine(n);
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
  std::fprintf(stderr, "lockstep %s: cannot write -O summaryFile=%s: %s\n", tool.name(),
               cmd.summary_file.c_str(), std::strerror(errno));
  return false;
}

// What IOR and mdtest share: IOR's command line and options in the record,
// -O summaryFile opened first, -O summaryFormat written after the run.
class IorLikeFrontEnd : public TranslatedFrontEnd {
 public:
  absl::Status BeforeAgents(const CliCommand& cmd) override {
    return OpenSummaryFile(cmd.summary_file);
  }
  // A run whose summary could not be written fails.
  std::optional<int> AfterRun(CliCommand* cmd, const RunOutcome& outcome,
                              const std::string& report_text) override {
    if (!WriteSummary(*this, *cmd, outcome.record, outcome.run_dir, report_text) &&
        outcome.failure == RunFailure::kNone) {
      return ExitCodeFor(RunFailure::kOther);
    }
    return ExitCodeFor(outcome.failure);
  }

 protected:
  // With -O summaryFormat=JSON|CSV, IOR prints only that; with -O
  // summaryFile=F, its one line (OpenSummaryFile) and the report goes to F.
  // The text report still goes to the run directory's summary.txt.
  static bool TextToStdout(const CliCommand& cmd) {
    return cmd.summary_format == SummaryFormat::kText && cmd.summary_file.empty();
  }
  static void DescribeIor(const CliCommand& cmd, v1::RunRecord* fields) {
    fields->set_ior_command_line(cmd.tool_command_line);
    fields->set_ior_verbose(cmd.verbose);
    fields->set_ior_reference_number(cmd.reference_number);
  }
};

class IorFrontEnd final : public IorLikeFrontEnd {
 public:
  const char* name() const override { return "ior"; }
  absl::StatusOr<CliCommand> Parse(const std::vector<std::string>& args,
                                   const FileReader& read_file) override {
    return ParseIorCommandLine(args, read_file);
  }
  LocalPlacement Placement(const CliCommand& /*cmd*/) const override {
    return {.tool = "ior", .what = "-o's directory"};
  }
  bool Describe(const CliCommand& cmd, v1::RunRecord* fields) override {
    DescribeIor(cmd, fields);
    // IOR's -C, -Z, -X, -Q for every test (TestReorderOf).
    fields->set_ior_reorder_constant(cmd.reorder_constant && cmd.task_offset > 0);
    fields->set_ior_reorder_random(cmd.reorder_random);
    fields->set_ior_reorder_random_seed(cmd.reorder_random_seed);
    fields->set_ior_task_offset(std::max<uint32_t>(cmd.task_offset, 1));
    const bool text = TextToStdout(cmd);
    if (text) {  // IOR's notes come before its report
      for (const std::string& n : cmd.notes) PrintToStdout(NoteLine(n));
    }
    return text;
  }
};

class MdtestFrontEnd final : public IorLikeFrontEnd {
 public:
  const char* name() const override { return "mdtest"; }
  absl::StatusOr<CliCommand> Parse(const std::vector<std::string>& args,
                                   const FileReader& read_file) override {
    return ParseMdtestCommandLine(args, read_file, &info_);
  }
  LocalPlacement Placement(const CliCommand& /*cmd*/) const override {
    return {.tool = "mdtest", .what = "-d", .makes_last_dir = true};
  }
  // mdtest's layout replaces IOR's: Lockstep's own lines come as '#' lines
  // as the run goes, mdtest's text at its end (it needs the agents'
  // statfs); its notes are part of its text.
  bool Describe(const CliCommand& cmd, v1::RunRecord* fields) override {
    DescribeIor(cmd, fields);
    v1::FrontEndReport& front = *fields->mutable_front_end_report();
    front.set_tool("mdtest");
    *front.mutable_mdtest() = MdtestReportInfoOf(info_);
    const bool text = TextToStdout(cmd);
    if (text) KeepNotes(cmd, &front);
    return text;
  }

 private:
  MdtestCommandInfo info_;
};

}  // namespace

int IorCommand(const std::vector<std::string>& args, const std::string& command_line,
               const std::atomic<bool>* interrupted) {
  IorFrontEnd ior;
  return RunFrontEnd(ior, args, command_line, interrupted);
}

int MdtestCommand(const std::vector<std::string>& args, const std::string& command_line,
                  const std::atomic<bool>* interrupted) {
  MdtestFrontEnd mdtest;
  return RunFrontEnd(mdtest, args, command_line, interrupted);
}

}  // namespace lockstep
