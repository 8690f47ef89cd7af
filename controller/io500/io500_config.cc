#include "controller/io500/io500_config.h"

#include <map>
#include <span>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "controller/plan/limits.h"

namespace lockstep {
namespace {

// IO500's own types (src/ini-parse.c); kSize is IO500's string, checked
// here as a size because IOR's -t/-b take it.
enum class IniType { kString, kBool, kUint, kInt, kSize, kFloat };

struct IniKey {
  const char* name;
  IniType type;
  const char* default_value;  // nullptr: unset
};

struct IniSection {
  const char* name;
  std::span<const IniKey> keys;
};

constexpr const char* kDefaultDropCachesCmd = "sudo -n bash -c \"echo 3 > /proc/sys/vm/drop_caches\"";

// IO500's option table (io500 --list, 02091cf: src/phase_*.c), section by
// section in its order, each option with its type and default: what the
// file may say, what config.ini lists and what config-hash hashes.
constexpr IniKey kGlobalKeys[] = {
    {"datadir", IniType::kString, "./datafiles"},
    {"timestamp-datadir", IniType::kBool, "TRUE"},
    {"resultdir", IniType::kString, "./results"},
    {"timestamp-resultdir", IniType::kBool, "TRUE"},
    {"api", IniType::kString, "POSIX"},
    {"drop-caches", IniType::kBool, "FALSE"},
    {"drop-caches-cmd", IniType::kString, kDefaultDropCachesCmd},
    {"io-buffers-on-gpu", IniType::kBool, "FALSE"},
    {"verbosity", IniType::kUint, "1"},
    {"scc", IniType::kBool, "FALSE"},
    {"dataPacketType", IniType::kString, "timestamp"},
};
constexpr IniKey kDebugKeys[] = {{"stonewall-time", IniType::kInt, "300"},
                                 {"pause-dir", IniType::kString, nullptr}};
constexpr IniKey kIorEasyKeys[] = {
    {"API", IniType::kString, nullptr},         {"transferSize", IniType::kSize, "2m"},
    {"blockSize", IniType::kSize, "9920000m"},  {"filePerProc", IniType::kBool, "TRUE"},
    {"uniqueDir", IniType::kBool, "FALSE"},     {"run", IniType::kBool, "TRUE"},
    {"verbosity", IniType::kInt, nullptr},
};
constexpr IniKey kIorHardKeys[] = {
    {"API", IniType::kString, nullptr},          {"segmentCount", IniType::kInt, "10000000"},
    {"collective", IniType::kBool, nullptr},     {"run", IniType::kBool, "TRUE"},
    {"verbosity", IniType::kInt, nullptr},
};
constexpr IniKey kMdtestEasyKeys[] = {
    {"API", IniType::kString, nullptr},
    {"n", IniType::kUint, "1000000"},
    {"run", IniType::kBool, "TRUE"},
};
constexpr IniKey kMdtestHardKeys[] = {
    {"API", IniType::kString, nullptr},
    {"n", IniType::kUint, "1000000"},
    {"files-per-dir", IniType::kUint, nullptr},
    {"run", IniType::kBool, "TRUE"},
};
constexpr IniKey kPhaseKeys[] = {
    {"API", IniType::kString, nullptr},
    {"run", IniType::kBool, "TRUE"},
};
constexpr IniKey kCollectivePhaseKeys[] = {
    {"API", IniType::kString, nullptr},
    {"collective", IniType::kBool, nullptr},
    {"run", IniType::kBool, "TRUE"},
};
constexpr IniKey kRunKeys[] = {{"run", IniType::kBool, "TRUE"}};
constexpr IniKey kMdworkbenchKeys[] = {
    {"API", IniType::kString, nullptr},          {"waitingTime", IniType::kFloat, "0.0"},
    {"precreatePerSet", IniType::kUint, nullptr}, {"filesPerProc", IniType::kUint, nullptr},
    {"run", IniType::kBool, "TRUE"},             {"verbosity", IniType::kInt, nullptr},
};
constexpr IniKey kFindKeys[] = {
    {"external-script", IniType::kString, nullptr},
    {"external-mpi-args", IniType::kString, ""},
    {"external-extra-args", IniType::kString, ""},
    {"nproc", IniType::kUint, nullptr},
    {"run", IniType::kBool, "TRUE"},
    {"pfind-queue-length", IniType::kInt, "10000"},
    {"pfind-steal-next", IniType::kBool, "FALSE"},
    {"pfind-parallelize-single-dir-access-using-hashing", IniType::kBool, "FALSE"},
};

// IO500's sections, in its order (src/phase-definitions.h): the standard
// phases, and the extended mode's (mdworkbench-*, find-easy, find-hard),
// which a standard run does not run but whose options the file may set.
constexpr IniSection kSections[] = {
    {"global", kGlobalKeys},
    {"debug", kDebugKeys},
    {"ior-easy", kIorEasyKeys},
    {"ior-easy-write", kPhaseKeys},
    {"mdtest-easy", kMdtestEasyKeys},
    {"mdtest-easy-write", kPhaseKeys},
    {"mdworkbench", kMdworkbenchKeys},
    {"mdworkbench-create", kRunKeys},
    {"timestamp", {}},
    {"find-easy", kFindKeys},
    {"ior-hard", kIorHardKeys},
    {"ior-hard-write", kCollectivePhaseKeys},
    {"mdtest-hard", kMdtestHardKeys},
    {"mdtest-hard-write", kPhaseKeys},
    {"find", kFindKeys},
    {"find-hard", kFindKeys},
    {"mdworkbench-bench", kRunKeys},
    {"ior-easy-read", kPhaseKeys},
    {"mdtest-easy-stat", kPhaseKeys},
    {"ior-hard-read", kCollectivePhaseKeys},
    {"mdtest-hard-stat", kPhaseKeys},
    {"mdworkbench-delete", kRunKeys},
    {"mdtest-easy-delete", kPhaseKeys},
    {"mdtest-hard-read", kPhaseKeys},
    {"mdtest-hard-delete", kPhaseKeys},
    {"ior-rnd4K-easy-read", kPhaseKeys},
};

const IniSection* FindSection(absl::string_view name) {
  for (const IniSection& s : kSections) {
    if (absl::EqualsIgnoreCase(s.name, name)) return &s;
  }
  return nullptr;
}

const IniKey* FindKey(const IniSection& s, absl::string_view name) {
  for (const IniKey& k : s.keys) {
    if (absl::EqualsIgnoreCase(k.name, name)) return &k;
  }
  return nullptr;
}

std::string KnownSections() {
  std::vector<std::string> names;
  for (const IniSection& s : kSections) names.emplace_back(s.name);
  return absl::StrJoin(names, ", ");
}

std::string KnownKeys(const IniSection& s) {
  std::vector<std::string> names;
  for (const IniKey& k : s.keys) names.emplace_back(k.name);
  return absl::StrJoin(names, ", ");
}

bool IsNameChar(char c, bool key) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
         (key && c == '.');
}

bool AllNameChars(absl::string_view s, bool key) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsNameChar(c, key)) return false;
  }
  return true;
}

// The text before the first '#' or ';'.
absl::string_view StripComment(absl::string_view s) {
  const size_t c = s.find_first_of("#;");
  return c == absl::string_view::npos ? s : s.substr(0, c);
}

// A value of `type` as IO500 keeps it (booleans as TRUE/FALSE); an error
// says what was expected.
absl::StatusOr<std::string> CheckType(const IniKey& key, const std::string& value) {
  uint64_t u = 0;
  int64_t i = 0;
  switch (key.type) {
    case IniType::kString:
      return value;
    case IniType::kBool: {
      const std::string lower = absl::AsciiStrToLower(value);
      if (lower == "true" || lower == "1") return std::string("TRUE");
      if (lower == "false" || lower == "0") return std::string("FALSE");
      return absl::InvalidArgumentError("expects a boolean (TRUE, FALSE, 1 or 0)");
    }
    case IniType::kUint:
      if (!absl::c_all_of(value, [](char c) { return absl::ascii_isdigit(c); }) ||
          !absl::SimpleAtoi(value, &u)) {
        return absl::InvalidArgumentError("expects a whole number >= 0");
      }
      return value;
    case IniType::kInt:
      if (!absl::SimpleAtoi(value, &i)) return absl::InvalidArgumentError("expects a whole number");
      return value;
    case IniType::kFloat:
      if (!absl::c_all_of(value, [](char c) {
            return absl::ascii_isdigit(c) || c == 'e' || c == '.' || c == '+' || c == '-';
          })) {
        return absl::InvalidArgumentError("expects a number (IO500's float)");
      }
      return value;
    case IniType::kSize: {
      auto s = ParseSize(value);
      if (!s.ok()) return s.status();
      if (*s == 0) return absl::InvalidArgumentError("must be greater than zero");
      return value;
    }
  }
  return value;
}

// Where each value came from, for the checks after the parse.
using Lines = std::map<std::string, int>;  // "section.key" -> line

class Parser {
 public:
  explicit Parser(Io500Config* c) : c_(c) {}

  absl::Status Line(int number, absl::string_view raw) {
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') return absl::OkStatus();
    if (line[0] == '[') return SectionLine(number, line);
    return KeyLine(number, line);
  }

  const Lines& lines() const { return lines_; }

 private:
  absl::Status Bad(int number, const std::string& why) const {
    return absl::InvalidArgumentError(absl::StrFormat("%s:%d: %s", c_->source, number, why));
  }

  absl::Status SectionLine(int number, absl::string_view line) {
    const size_t close = line.find(']');
    absl::string_view rest =
        close == absl::string_view::npos ? "x" : absl::StripAsciiWhitespace(line.substr(close + 1));
    const absl::string_view name =
        close == absl::string_view::npos
            ? line
            : absl::StripAsciiWhitespace(line.substr(1, close - 1));
    if (close == absl::string_view::npos || !AllNameChars(name, false) ||
        (!rest.empty() && rest[0] != '#' && rest[0] != ';')) {
      return Bad(number, absl::StrFormat("malformed section line \"%s\"; expected [name]", line));
    }
    section_ = FindSection(name);
    if (section_ == nullptr) {
      return Bad(number, absl::StrFormat("unknown section [%s]; known: %s", name,
                                         KnownSections()));
    }
    return absl::OkStatus();
  }

  absl::Status KeyLine(int number, absl::string_view line) {
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) {
      return Bad(number, absl::StrFormat("unexpected content \"%s\"; expected key = value, "
                                         "[section] or a # comment",
                                         line));
    }
    const std::string key(absl::StripAsciiWhitespace(line.substr(0, eq)));
    const std::string value(absl::StripAsciiWhitespace(StripComment(line.substr(eq + 1))));
    if (!AllNameChars(key, true)) {
      return Bad(number, absl::StrFormat("malformed key \"%s\"", key));
    }
    // IO500 (src/ini-parse.c) passes over a key without a value before it
    // looks the key up: such a line sets nothing, whatever its key.
    if (value.empty()) return absl::OkStatus();
    if (section_ == nullptr) {
      return Bad(number, absl::StrFormat("key '%s' outside any section; put it under a "
                                         "[section] such as [global]",
                                         key));
    }
    const IniKey* k = FindKey(*section_, key);
    if (k == nullptr) {
      // IO500's own refusal, word for word, then the options it knows there.
      return Bad(number, absl::StrFormat(
                             "Parsing error in section %s line %d, unknown option \"%s\" with "
                             "value \"%s\" (io500 refuses it too); the options of [%s] are: %s",
                             section_->name, number, key, value, section_->name,
                             KnownKeys(*section_)));
    }
    const std::string where = absl::StrCat(section_->name, ".", k->name);
    if (auto it = lines_.find(where); it != lines_.end()) {
      return Bad(number, absl::StrFormat("[%s] %s is given twice (first on line %d)",
                                         section_->name, k->name, it->second));
    }
    lines_[where] = number;
    auto checked = CheckType(*k, value);
    if (!checked.ok()) {
      return Bad(number, absl::StrFormat("[%s] %s = %s: %s", section_->name, k->name, value,
                                         checked.status().message()));
    }
    c_->values[section_->name][k->name] = *checked;
    return absl::OkStatus();
  }

  Io500Config* c_;
  const IniSection* section_ = nullptr;
  Lines lines_;
};

// The values the command uses, checked against each other and Lockstep's
// limits; errors name the line of the value at fault.
class Resolver {
 public:
  Resolver(Io500Config* c, const Lines& lines) : c_(c), lines_(lines) {}

  absl::Status Resolve() {
    const auto& v = c_->values;
    c_->datadir = Get("global", "datadir");
    c_->timestamp_datadir = Bool("global", "timestamp-datadir");
    c_->resultdir = Get("global", "resultdir");
    c_->timestamp_resultdir = Bool("global", "timestamp-resultdir");
    c_->drop_caches = Bool("global", "drop-caches");
    c_->drop_caches_cmd = Get("global", "drop-caches-cmd");
    ASSIGN_OR_RETURN(c_->verbosity, Uint32("global", "verbosity", 0, 10));
    ASSIGN_OR_RETURN(c_->stonewall_seconds,
                     Uint32("debug", "stonewall-time", 1, kMaxStonewallSeconds));
    RETURN_IF_ERROR(CheckApis());
    RETURN_IF_ERROR(RefuseWhatLockstepDoesNotRun());
    RETURN_IF_ERROR(ResolveIorEasy());
    for (const char* section : {"ior-hard", "ior-hard-write", "ior-hard-read"}) {
      if (Bool(section, "collective")) {
        return Bad(section, "collective", "collective I/O is MPI-IO's; lockstep's agents use "
                                          "POSIX: set collective = FALSE");
      }
    }
    ASSIGN_OR_RETURN(c_->ior_hard_segments, Uint64("ior-hard", "segmentCount", 1, kMaxSegments));
    ASSIGN_OR_RETURN(c_->mdtest_easy_items, Uint64("mdtest-easy", "n", 1, kMaxMdItems));
    ASSIGN_OR_RETURN(c_->mdtest_hard_items, Uint64("mdtest-hard", "n", 1, kMaxMdItems));
    if (v.at("find").count("nproc") != 0) {
      ASSIGN_OR_RETURN(c_->find_nproc, Uint32("find", "nproc", 1, kMaxTotalTasks));
      c_->notes.push_back("[find] nproc is ignored: every task of every agent walks a share of "
                          "the tree");
    }
    if (v.at("global").at("drop-caches-cmd") != kDefaultDropCachesCmd) {
      c_->notes.push_back("[global] drop-caches-cmd is not run: with drop-caches = TRUE the "
                          "agents drop the caches themselves (/proc/sys/vm/drop_caches)");
    }
    return absl::OkStatus();
  }

 private:
  const std::string& Get(const char* s, const char* k) const { return c_->values.at(s).at(k); }
  bool Bool(const char* s, const char* k) const {
    auto it = c_->values.at(s).find(k);
    return it != c_->values.at(s).end() && it->second == "TRUE";
  }
  int LineOf(const char* s, const char* k) const {
    auto it = lines_.find(absl::StrCat(s, ".", k));
    return it == lines_.end() ? 0 : it->second;
  }
  absl::Status Bad(const char* s, const char* k, const std::string& why) const {
    const int line = LineOf(s, k);
    auto it = c_->values.at(s).find(k);
    const std::string value = it == c_->values.at(s).end() ? "" : it->second;
    return absl::InvalidArgumentError(
        line > 0 ? absl::StrFormat("%s:%d: [%s] %s = %s: %s", c_->source, line, s, k, value, why)
                 : absl::StrFormat("%s: [%s] %s = %s (the default): %s", c_->source, s, k, value,
                                   why));
  }
  absl::StatusOr<uint64_t> Uint64(const char* s, const char* k, uint64_t min, uint64_t max) const {
    uint64_t n = 0;
    if (!absl::SimpleAtoi(Get(s, k), &n) || n < min || n > max) {
      if (n == 0 && min == 1) {
        return Bad(s, k, absl::StrFormat("must be at least 1%s",
                                         absl::string_view(k) == "stonewall-time"
                                             ? " (a stonewall of 0 seconds never stops the write "
                                               "phases; IO500's rules: 300)"
                                             : ""));
      }
      return Bad(s, k, absl::StrFormat("must be between %u and %u", min, max));
    }
    return n;
  }
  absl::StatusOr<uint32_t> Uint32(const char* s, const char* k, uint64_t min, uint64_t max) const {
    ASSIGN_OR_RETURN(uint64_t n, Uint64(s, k, min, max));
    return static_cast<uint32_t>(n);
  }

  absl::Status CheckApis() const {
    for (const auto& [section, keys] : c_->values) {
      for (const char* key : {"api", "API"}) {
        auto it = keys.find(key);
        if (it != keys.end() && !absl::EqualsIgnoreCase(it->second, "POSIX")) {
          return Bad(section.c_str(), key, "only the POSIX API is supported (lockstep's agents "
                                           "use open/pwrite/pread)");
        }
      }
    }
    return absl::OkStatus();
  }

  // IO500's options that change what a standard run does and that Lockstep
  // does not do, refused when set to anything but IO500's default (the
  // extended mode's sections, which a standard run does not run, may say
  // anything).
  absl::Status RefuseWhatLockstepDoesNotRun() const {
    struct Unsupported {
      const char* section;
      const char* key;
      const char* why;
    };
    static constexpr Unsupported kUnsupported[] = {
        {"global", "io-buffers-on-gpu", "I/O buffers on a GPU are not implemented; set it FALSE"},
        {"global", "scc", "the Student Cluster Competition's rules (30 s minimum writes) are not "
                          "implemented; set scc = FALSE"},
        {"global", "dataPacketType", "the agents write Lockstep's own pattern (seed, rank, "
                                     "offset), IO500's default; remove the key"},
        {"debug", "pause-dir", "pausing between phases is not implemented; remove the key"},
        {"mdtest-hard", "files-per-dir", "mdtest's -I (files per directory) is not implemented; "
                                         "remove the key"},
        {"find", "external-script", "lockstep runs its own find on the agents, never a script; "
                                    "remove the key"},
    };
    for (const Unsupported& u : kUnsupported) {
      auto it = c_->values.at(u.section).find(u.key);
      if (it == c_->values.at(u.section).end()) continue;
      const IniKey* k = FindKey(*FindSection(u.section), u.key);
      if (k->default_value != nullptr && it->second == k->default_value) continue;
      return Bad(u.section, u.key, u.why);
    }
    return absl::OkStatus();
  }

  absl::Status ResolveIorEasy() {
    c_->ior_easy_transfer = Get("ior-easy", "transferSize");
    c_->ior_easy_block = Get("ior-easy", "blockSize");
    c_->ior_easy_transfer_bytes = *ParseSize(c_->ior_easy_transfer);  // checked by CheckType
    c_->ior_easy_block_bytes = *ParseSize(c_->ior_easy_block);
    if (c_->ior_easy_transfer_bytes % kTransferAlignBytes != 0) {
      return Bad("ior-easy", "transferSize",
                 absl::StrFormat("must be a multiple of %u bytes", kTransferAlignBytes));
    }
    if (c_->ior_easy_block_bytes % c_->ior_easy_transfer_bytes != 0) {
      return Bad("ior-easy", "blockSize",
                 absl::StrFormat("must be a multiple of transferSize (%s)", c_->ior_easy_transfer));
    }
    c_->ior_easy_file_per_proc = Bool("ior-easy", "filePerProc");
    if (Bool("ior-easy", "uniqueDir")) {
      return Bad("ior-easy", "uniqueDir", "a directory per task (IOR -u) is not implemented; set "
                                          "uniqueDir = FALSE");
    }
    return absl::OkStatus();
  }

  Io500Config* c_;
  const Lines& lines_;
};

// Each section with every key it has a default for.
void FillDefaults(Io500Config* c) {
  for (const IniSection& s : kSections) {
    auto& keys = c->values[s.name];
    for (const IniKey& k : s.keys) {
      if (k.default_value != nullptr) keys[k.name] = k.default_value;
    }
  }
}

// The section a phase's group is configured in ("ior-easy" for
// "ior-easy-write"); empty when it has none.
std::string GroupOf(absl::string_view phase) {
  for (const char* g : {"ior-easy", "ior-hard", "mdtest-easy", "mdtest-hard"}) {
    if (absl::StartsWith(phase, absl::StrCat(g, "-"))) return g;
  }
  if (phase == "ior-rnd4K-easy-read") return "ior-easy";
  return "";
}

}  // namespace

bool Io500Config::PhaseEnabled(absl::string_view phase) const {
  auto says_false = [&](const std::string& section) {
    auto s = values.find(section);
    if (s == values.end()) return false;
    auto r = s->second.find("run");
    return r != s->second.end() && r->second == "FALSE";
  };
  const std::string group = GroupOf(phase);
  return !says_false(std::string(phase)) && (group.empty() || !says_false(group));
}

absl::StatusOr<Io500Config> ParseIo500Config(const std::string& text, const std::string& source) {
  Io500Config c;
  c.source = source;
  c.text = text;
  FillDefaults(&c);
  Parser parser(&c);
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    RETURN_IF_ERROR(parser.Line(++number, line));
  }
  RETURN_IF_ERROR(Resolver(&c, parser.lines()).Resolve());
  return c;
}

std::string ResolvedIo500Config(const Io500Config& config) {
  std::string out;
  for (const IniSection& s : kSections) {
    out += absl::StrFormat("[%s]\n", s.name);
    auto values = config.values.find(s.name);
    for (const IniKey& k : s.keys) {
      std::string v;
      if (values != config.values.end()) {
        auto it = values->second.find(k.name);
        if (it != values->second.end()) v = it->second;
      }
      out += absl::StrFormat("%s = %s\n", k.name, v);
    }
    out += "\n";
  }
  return out;
}

namespace {

// u_hash_update and u_hash_update_key_val of IO500's src/util.c.
void HashKeyVal(uint32_t* hash, absl::string_view key, absl::string_view value) {
  uint32_t h = 0;
  for (absl::string_view part : {key, value}) {
    for (char c : part) h = ((h << 2) | (h >> 30)) + static_cast<uint32_t>(c);
  }
  *hash ^= h;
}

}  // namespace

uint32_t Io500ConfigHash(const Io500Config& config) {
  // u_ini_gen_hash over the values as IO500's u_parse_ini leaves them: the
  // file's (booleans as TRUE/FALSE), else the default; an option with
  // neither is left out. The same values config.ini lists.
  uint32_t hash = 0;
  for (const IniSection& s : kSections) {
    auto values = config.values.find(s.name);
    if (values == config.values.end()) continue;
    for (const IniKey& k : s.keys) {
      auto it = values->second.find(k.name);
      if (it != values->second.end()) HashKeyVal(&hash, k.name, it->second);
    }
  }
  return hash;
}

}  // namespace lockstep
