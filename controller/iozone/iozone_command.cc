// `lockstep iozone ...`: IOzone's command line → one plan → run → IOzone's
// throughput-mode text, from the run's events (IozoneReportObserver).
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "controller/cli/cli_commands.h"
#include "controller/cli/front_end.h"
#include "controller/iozone/iozone_cli.h"
#include "controller/iozone/iozone_output.h"

namespace lockstep {
namespace {

class IozoneFrontEnd final : public TranslatedFrontEnd {
 public:
  const char* name() const override { return "iozone"; }
  absl::StatusOr<CliCommand> Parse(const std::vector<std::string>& args,
                                   const FileReader& read_file) override {
    return ParseIozoneCommandLine(args, read_file, &info_);
  }
  // The translator's messages name IOzone ("iozone: option -j is not
  // supported by lockstep iozone; ..."); a set-up error does not.
  std::string UsageLine(const absl::Status& error) const override {
    return absl::StartsWith(error.message(), "iozone:")
               ? absl::StrFormat("lockstep %s\n", error.message())
               : FrontEnd::UsageLine(error);
  }
  // Local agents: the phase directory (IOzone's -F directory, or the working
  // directory) must exist, as IOzone needs it, and becomes their root.
  LocalPlacement Placement(const CliCommand& cmd) const override {
    return {.tool = "iozone",
            .what = cmd.plan.phases.front().file_names.empty() ? "the working directory"
                                                                : "-F's directory",
            .missing_note = " (IOzone does not create it either)"};
  }
  // IOzone's layout replaces IOR's: Lockstep's own lines come as '#' lines
  // as the run goes, IOzone's text at its end.
  bool Describe(const CliCommand& cmd, v1::RunRecord* fields) override {
    fields->set_iozone_command_line(info_.command_line);
    v1::FrontEndReport& front = *fields->mutable_front_end_report();
    front.set_tool("iozone");
    *front.mutable_iozone() = IozoneReportInfoOf(info_);
    KeepNotes(cmd, &front);
    return true;
  }

 private:
  IozoneCommandInfo info_;
};

}  // namespace

int IozoneCommand(const std::vector<std::string>& args, const std::string& command_line,
                  const std::atomic<bool>* interrupted) {
  IozoneFrontEnd iozone;
  return RunFrontEnd(iozone, args, command_line, interrupted);
}

}  // namespace lockstep
