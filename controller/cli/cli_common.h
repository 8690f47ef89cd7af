// Helpers shared by the IOR and mdtest command-line translators.
#ifndef LOCKSTEP_CONTROLLER_CLI_CLI_COMMON_H_
#define LOCKSTEP_CONTROLLER_CLI_CLI_COMMON_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/flags.h"
#include "controller/ior/ior_cli.h"
#include "controller/run/coordinator.h"

namespace lockstep {

// InvalidArgument "OPTION: WHY".
absl::Status CliBad(const std::string& option, const std::string& why);

// An option letter the translator refuses, and why.
struct CliRefusal {
  char letter;
  const char* why;
};

// A short option without a value that switches one bool of `Options` on
// (IorOptions, MdtestOptions): the translators' tables of plain flags.
template <typename Options>
struct CliFlag {
  char letter;
  bool Options::*field;
};

// Sets the field `letter` names in `flags`; false when it names none.
template <typename Options>
bool SetCliFlag(absl::Span<const CliFlag<Options>> flags, char letter, Options* options) {
  for (const CliFlag<Options>& f : flags) {
    if (f.letter == letter) {
      options->*f.field = true;
      return true;
    }
  }
  return false;
}

// One short option of a command line: "-b 4m" → {'b', "-b", true, "4m"}.
struct ShortOption {
  char letter;
  std::string name;  // "-b"
  bool has_value = false;
  std::string value;
};

// Splits args[*i], one word of short options, as getopt does: a cluster of
// flags ("-wr"), or flags ending in one option that takes a value, glued
// ("-b4m") or in the next word ("-b 4m", which advances *i). Letters in
// `with_value` take a value; a letter in `refused` is an error naming why;
// a word not starting with '-' is an error naming `tool`'s convention.
absl::StatusOr<std::vector<ShortOption>> SplitShortOptions(const std::vector<std::string>& args,
                                                           size_t* i, std::string_view with_value,
                                                           absl::Span<const CliRefusal> refused,
                                                           std::string_view tool);

// A whole number in [min, max]; errors name "OPT VALUE".
absl::StatusOr<uint64_t> CliUint(const std::string& opt, const std::string& value, uint64_t min,
                                 uint64_t max);

// Consumes one of Lockstep's own long options at args[*i] into `c`
// (advancing *i past its value), as `command` (IorCommandSpec() or
// MdtestCommandSpec() of controller/cli/command_specs.h) declares them; false
// when args[*i] is not one of them. Errors name the option, the value and
// `command`'s --help.
absl::StatusOr<bool> ParseControllerOption(const std::vector<std::string>& args, size_t* i,
                                           const CommandSpec& command, ControllerCli* c,
                                           const FileReader& read_file);

// Agents and tasks: the plan's agents from --agents/--hostfile (else local
// agents), and tasks_per_agent of every phase from the total (`total_opt`,
// 0 = not given; must divide evenly) or --tasks-per-agent.
absl::Status PlaceTasks(uint32_t total_tasks, const std::string& total_opt, CliCommand* cmd);

// "-o /a/b/f" -> dir "/a/b", file "f"; no slash: dir ".".
void SplitOutputPath(const std::string& path, std::string* dir, std::string* file);

// With `h.enabled` (HistoryRecording, controller/ior/ior_cli.h): records the
// finished run (its run.json text, which has the per-agent records) in h.db,
// default OUT_DIR/history.db. A failure is a warning on stderr naming the run
// directory and `lockstep import` as the fix. `program` prefixes the warning
// ("lockstep", "lockstep io500").
void RecordRunInHistory(const HistoryRecording& h, const std::string& out_dir,
                        const RunOutcome& outcome, const std::string& program);
// Those of a command that declares kRecordFlags (command_specs_parts.h).
HistoryRecording HistoryRecordingOf(const ParsedFlags& f);
// RecordRunInHistory(HistoryRecordingOf(f), ...).
void RecordRunInHistory(const ParsedFlags& f, const std::string& out_dir,
                        const RunOutcome& outcome, const std::string& program);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_CLI_CLI_COMMON_H_
