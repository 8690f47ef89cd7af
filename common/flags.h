// The one command-line parser of Lockstep's programs (`lockstep SUBCOMMAND`,
// `lockstep-agent`). Each command declares a table of FlagSpecs; parsing,
// `--help` text and man pages are all rendered from that table, so what a
// command accepts and what it documents cannot drift apart.
//
// Accepted forms, flags and positional words in any order:
//   --flag value, --flag=value   every kind but bool
//   --bool, --bool=true, --bool=false   (also 1/0, yes/no; a bool never
//                                 takes the next word as its value)
//   --                           every later word is positional
//   -                            a positional word (stdin/stdout)
//   -h, --help                   ParsedFlags::help(); nothing else is checked
// A flag given twice keeps its last value, except a list: the first
// occurrence replaces the default and each later one adds to it.
//
// Every error is InvalidArgument, names the flag and the value, and ends with
// "(see PROGRAM [COMMAND] --help)"; an unknown flag names the closest known
// one, or lists them all.
#ifndef LOCKSTEP_COMMON_FLAGS_H_
#define LOCKSTEP_COMMON_FLAGS_H_

#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace lockstep {

enum class FlagKind {
  kBool,
  kInt,     // int64, decimal
  kUint,    // uint64, decimal, no sign
  kString,
  kList,    // strings: each occurrence split at FlagSpec::separator
  kSize,    // uint64 bytes as common/sizes.h parses them ("4m", "1GiB")
};

struct FlagSpec {
  absl::string_view name = {};           // without the dashes: "local_root"
  FlagKind kind = FlagKind::kString;
  absl::string_view value_name = {};     // shown in help: "DIR", "N"; ignored for bools
  // The value when the flag is not given, in command-line form ("true",
  // "4m", "a,b"); parsed like a given value. Empty: false, 0, "" or {}.
  absl::string_view default_value = {};
  absl::string_view help = {};           // one sentence or a few; wrapped when shown
  // kInt, kUint, kSize: the accepted range, inclusive. kUint and kSize never
  // go below 0 and kInt never above INT64_MAX whatever the bounds say.
  int64_t min = std::numeric_limits<int64_t>::min();
  uint64_t max = std::numeric_limits<uint64_t>::max();
  char separator = ',';            // kList; '\0': each occurrence is one item
  bool hidden = false;             // accepted, but not in help or man pages
};

// One call of a subcommand, as the program's main makes it.
struct CommandCall {
  std::vector<std::string> args;  // the words after the command's name
  std::string command_line;       // the whole line, as run.json records it
  // Set by the first SIGINT/SIGTERM once watch_signals() was called: the
  // command then stops what it does and says so (exit 130).
  const std::atomic<bool>* interrupted = nullptr;
  void (*watch_signals)() = nullptr;
};

// One command: a subcommand of a program, or the whole program when `name`
// is empty (lockstep-agent).
struct CommandSpec {
  absl::string_view program = {};        // "lockstep"
  absl::string_view name = {};           // "run"; empty: the program itself
  // Everything after "PROGRAM NAME " in a usage line; one usage per line.
  absl::string_view synopsis = {};
  absl::string_view summary = {};        // one line, for lists of commands
  // Paragraphs separated by blank lines. A paragraph whose lines all start
  // with two spaces is shown as is (a table); others are filled.
  absl::string_view description = {};
  std::span<const FlagSpec> flags = {};
  // Shown after the flags in the same paragraph form (supported options of
  // a wrapped tool, exit codes); may be empty.
  absl::string_view notes = {};
  // What runs the subcommand (the program's main dispatches through it);
  // null for a whole program.
  int (*handler)(const CommandCall& call) = nullptr;

  // "lockstep run", or "lockstep-agent".
  std::string FullName() const;
  // nullptr when `name` is not one of `flags`.
  const FlagSpec* Find(absl::string_view name) const;
};

// One occurrence of a flag, its value checked against its spec.
struct FlagValue {
  const FlagSpec* spec = nullptr;
  std::string text;                // as given ("4m"); "true"/"false" for bools
  bool b = false;                  // kBool
  int64_t i = 0;                   // kInt
  uint64_t u = 0;                  // kUint, kSize
  std::vector<std::string> items;  // kList: this occurrence's items
};

// The flags of one parsed command line, and its positional words. Getters
// REQUIRE a name the command's table declares with that kind (a mistake
// there aborts with the name: it is a bug, not a user error).
class ParsedFlags {
 public:
  // -h or --help was given (before any --); nothing else was checked.
  bool help() const { return help_; }
  const std::vector<std::string>& positional() const { return positional_; }

  // The flag was given on the command line (its value may equal the default).
  bool Has(absl::string_view name) const;
  bool GetBool(absl::string_view name) const;
  int64_t GetInt(absl::string_view name) const;
  uint64_t GetUint(absl::string_view name) const;  // kUint or kSize
  const std::string& GetString(absl::string_view name) const;
  const std::vector<std::string>& GetList(absl::string_view name) const;

 private:
  friend absl::StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& args,
                                                const CommandSpec& command);
  struct Slot {
    FlagValue value;
    bool given = false;
  };
  const Slot& Get(absl::string_view name, FlagKind kind, FlagKind alt) const;

  bool help_ = false;
  std::vector<std::string> positional_;
  std::map<std::string, Slot, std::less<>> slots_;
};

// Parses `args` (the words after the program and subcommand) against
// `command`. Errors as described at the top of this file.
absl::StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& args,
                                       const CommandSpec& command);

// OK when every word of `args` is UTF-8. Otherwise InvalidArgument naming
// the word (escaped), the word before it or its flag, and the fix: plans, the
// record and the wire are UTF-8 text, so a value that is not would fail
// later, far from its cause (a protobuf string that does not serialise, a
// plan text that does not parse). ParseFlags checks its words; the front
// ends with their own option parsers check theirs.
absl::Status ArgumentsAreUtf8(const std::vector<std::string>& args);

// For command lines that mix their own options with the table's (lockstep
// ior/mdtest): reads the flag at args[*i], advancing *i past a separate
// value. nullopt, *i unchanged, when args[*i] is not "--NAME" or
// "--NAME=VALUE" of a flag in `command` (the caller handles it or refuses it
// with UnknownFlagError).
absl::StatusOr<std::optional<FlagValue>> ParseOneFlag(const std::vector<std::string>& args,
                                                      size_t* i, const CommandSpec& command);

// InvalidArgument "WORD: unknown flag; did you mean --NAME? (see ...)" with
// the closest of `command`'s flags and `also_known` (names with dashes, e.g.
// "--posix.odirect"), or the list of them when none is close.
absl::Status UnknownFlagError(absl::string_view word, const CommandSpec& command,
                              std::span<const absl::string_view> also_known = {});

// The candidate closest to `word` by edit distance ('-' and '_' alike), or
// "" when none is close enough to be a likely typo.
std::string ClosestName(absl::string_view word, std::span<const std::string> candidates);

// A program as its man page shows it: its commands and extra sections.
struct ManSection {
  absl::string_view title = {};          // "EXIT STATUS"
  absl::string_view text = {};           // paragraphs as in CommandSpec::description
};

struct ProgramSpec {
  absl::string_view name = {};           // "lockstep"
  int man_section = 1;
  absl::string_view summary = {};        // NAME line: "benchmark parallel file systems ..."
  absl::string_view description = {};
  std::span<const CommandSpec* const> commands = {};
  std::span<const ManSection> sections = {};  // after OPTIONS
};

// `PROGRAM COMMAND --help`: usage lines, description, every visible flag
// with its value name, meaning and default, then the notes.
std::string FormatCommandHelp(const CommandSpec& command);
// The usage lines of `command` alone ("usage: lockstep run ...\n").
std::string FormatUsage(const CommandSpec& command);
// `PROGRAM --help` of a program with subcommands: usage of each with its
// summary, the description and the extra sections.
std::string FormatProgramHelp(const ProgramSpec& program);
// The man page (roff, man(7) macros): NAME, SYNOPSIS, DESCRIPTION, COMMANDS
// (with several commands), OPTIONS (every visible flag of every command),
// then the extra sections.
std::string FormatManPage(const ProgramSpec& program, absl::string_view version);
// A bash completion script for `program` (flags_completion.cc; source it, or install it as
// /usr/share/bash-completion/completions/NAME): completes command names,
// each command's visible flags, a flag's value where the table says what it
// is (value name DIR: directories; FILE: files; "a|b|c" of lowercase words:
// those words; others: nothing), and positional words: the literal first
// words of a command's synopsis lines ("certs init|issue"), command names
// where the synopsis says COMMAND, otherwise files. A program whose only
// command has no name (lockstep-agent) completes that command's flags.
// Words that are not plain names ([A-Za-z0-9_.-]) are left out, so nothing
// from a table can become shell code.
std::string FormatBashCompletion(const ProgramSpec& program);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_FLAGS_H_
