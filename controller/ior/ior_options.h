// IOR 4.1's own command-line reader, reproduced so that `lockstep ior` reads
// a line word for word as IOR does (hpc/ior src/option.c: option_parse_token,
// string_to_bytes; src/parse_options.c: createGlobalOptions, ParseLine,
// DecodeDirective). Pure functions, no I/O.
//
// What IOR's reader does, and these functions with it:
// - A word is "-" then letters, each looked up alone ("-wr", "-z-k" = -z -k:
//   a letter that is no option is skipped when another letter of the word is
//   one; a word with no option letter at all is IOR's "invalid argument").
// - The first letter of a word may take its value glued ("-b4m"); any later
//   value letter takes the next word. IOR goes on reading the letters after
//   a glued value as options: "-t1k" is -t 1k and -k. Flags read there are
//   set to atoi(value), as IOR sets them.
// - "-b=4m", "--posix.odirect=1": the value after '='; a flag with '=' is set
//   to max(atoi(value), 0), without it counted up (-vv is 2).
// - Numbers are string_to_bytes(): sscanf " %lld %c", so "0.1" is 0, "1.5m"
//   is 1, "4m" is 4 MiB, "abc" is -1 and "" is 0.
#ifndef LOCKSTEP_CONTROLLER_IOR_IOR_OPTIONS_H_
#define LOCKSTEP_CONTROLLER_IOR_IOR_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace lockstep {

enum class IorArgKind { kFlag, kValue };

// One entry of IOR's option table (createGlobalOptions and the POSIX
// backend's options), as IOR declares it.
struct IorOptionSpec {
  char letter;            // '\0': a long option only
  const char* long_name;  // nullptr: a short option only
  IorArgKind arg;
  // IOR's value type: 'd' int and 'l' int64 (both string_to_bytes), 's' a
  // string, 'p' -O's directives; flags are 'd' counters.
  char type;
};

// IOR 4.1's options: every short letter of createGlobalOptions, its long
// options, and the POSIX backend's (--posix.*), Lustre's included.
absl::Span<const IorOptionSpec> IorOptionTable();

// IOR's string_to_bytes() and atoi().
int64_t IorStringToBytes(absl::string_view text);
int IorAtoi(absl::string_view text);

// The options of IOR 4.1's other backends (DUMMY, MPIIO, MMAP), which IOR
// and mdtest accept whatever the API (-a) and which then have no effect;
// both readers look them up after their own table.
absl::Span<const IorOptionSpec> IorOtherBackendOptions();
bool IsIorOtherBackendOption(const IorOptionSpec& spec);

// One option as IOR's reader found it.
struct IorToken {
  const IorOptionSpec* spec = nullptr;
  std::string name;             // "-b", "--posix.odirect"
  std::string word;             // the word it came from ("-b4m")
  std::string value;            // a value option's value
  int flag_value = -1;          // a flag: -1 counts up (IOR's ++), else set to this
  bool after_glued_value = false;  // read from the letters after a glued value
  bool read_with_atoi = false;  // from -O: IOR reads its numbers with atoi()
};

// A program that reads its command line with IOR's option.c (IOR, mdtest):
// its option table and how messages name it.
struct OptionReaderTool {
  absl::Span<const IorOptionSpec> options;  // its own and the POSIX backend's
  const char* refuser;       // "IOR", "mdtest": who refuses in messages
  const char* release;       // "IOR 4.1", "mdtest 4.1"
  const char* help_command;  // "lockstep ior --help"
};
const OptionReaderTool& IorReaderTool();

// Reads args[*i] as option_parse_token() does, advancing *i past a value
// taken from the next word. `notes` gets what the tool does without saying
// so (skipped letters, letters of a glued value read as options). Errors
// (InvalidArgument) are the tool's refusals, with its words and the fix.
absl::StatusOr<std::vector<IorToken>> ReadOptionWord(const std::vector<std::string>& args,
                                                     size_t* i, const OptionReaderTool& tool,
                                                     std::vector<std::string>* notes);
// ReadOptionWord with IOR's table.
absl::StatusOr<std::vector<IorToken>> ReadIorWord(const std::vector<std::string>& args,
                                                  size_t* i, std::vector<std::string>* notes);

// A number as option.c stores it: string_to_bytes() into an int ('d'), with
// IOR's overflow warning refused (a value outside int is run truncated), or
// into an int64 ('l'). A value that is not plain digits with at most one
// unit letter adds a note saying how `tool` reads it ("0.1" is 0).
absl::StatusOr<int64_t> OptionNumber(const IorToken& t, const OptionReaderTool& tool,
                                     std::vector<std::string>* notes);

// One KEY=VALUE of IOR's -O (DecodeDirective): the option it stands for, or
// a key of its own.
struct IorDirective {
  const char* key;   // compared case-insensitively, as strcasecmp
  char letter;       // the short option it sets, '\0' if none
  const char* long_name;  // or the long option it sets
  // How IOR reads the value: 'a' atoi, 'b' string_to_bytes, 's' a string,
  // 'x' a key Lockstep refuses (why in `refused`).
  char how;
  const char* refused = nullptr;
};
absl::Span<const IorDirective> IorDirectiveTable();
const IorDirective* FindIorDirective(absl::string_view key);

// -O's text split as ParseLine() and DecodeDirective() split it: items at
// ',', the rest after '#' dropped, each " KEY = VALUE" (no blanks inside).
// Errors are IOR's ("Invalid option substring string", "Syntax error in
// configuration options").
struct IorKeyValue {
  std::string key, value;
};
absl::StatusOr<std::vector<IorKeyValue>> SplitIorDirectives(absl::string_view text);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IOR_IOR_OPTIONS_H_
