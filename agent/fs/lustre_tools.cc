#include "agent/fs/lustre_tools.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/log.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

absl::string_view AV(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace

// ---- File system type -------------------------------------------------------

absl::StatusOr<bool> IsLustre(const std::string& path) {
  ASSIGN_OR_RETURN(FsType t, FsTypeOf(path));
  return t.magic == kLustreSuperMagic;
}

// ---- Parsers ----------------------------------------------------------------

StripeInfo ParseGetStripe(std::string_view std_text) {
  absl::string_view text = AV(std_text);
  StripeInfo info;
  info.raw = std::string(text);
  if (absl::StrContains(text, "lcm_layout_gen") || absl::StrContains(text, "lcm_entry_count")) {
    return info;  // composite layout: raw only
  }
  std::vector<absl::string_view> tok =
      absl::StrSplit(text, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  for (size_t i = 0; i + 1 < tok.size(); ++i) {
    if (!absl::EndsWith(tok[i], ":")) continue;
    absl::string_view key = absl::StripPrefix(absl::StripSuffix(tok[i], ":"), "lmm_");
    absl::string_view val = tok[i + 1];
    int64_t v;
    uint64_t u;
    if (key == "stripe_count" && !info.stripe_count && absl::SimpleAtoi(val, &v)) {
      info.stripe_count = v;
    } else if (key == "stripe_size" && !info.stripe_size_bytes && absl::SimpleAtoi(val, &u)) {
      info.stripe_size_bytes = u;
    } else if (key == "stripe_offset" && !info.stripe_index && absl::SimpleAtoi(val, &v)) {
      info.stripe_index = v;
    } else if (key == "pool" && info.pool.empty() && !absl::EndsWith(val, ":")) {
      info.pool = std::string(val);
    }
  }
  return info;
}

namespace {

// "osc.lustre-OST0000-osc-ffff8803.checksums" before '=': no spaces, a dot.
bool LooksLikeParamName(absl::string_view s) {
  if (s.empty() || s.find('.') == absl::string_view::npos) return false;
  for (char c : s) {
    if (absl::ascii_isspace(static_cast<unsigned char>(c)) || c == ':') return false;
  }
  return true;
}

}  // namespace

std::vector<ParamValue> ParseParamLines(std::string_view std_text) {
  std::vector<ParamValue> out;
  for (absl::string_view line : absl::StrSplit(AV(std_text), '\n')) {
    size_t eq = line.find('=');
    if (eq != absl::string_view::npos && LooksLikeParamName(line.substr(0, eq))) {
      out.push_back({std::string(line.substr(0, eq)), std::string(line.substr(eq + 1))});
    } else if (!out.empty() && !line.empty()) {
      ParamValue& last = out.back();
      if (!last.value.empty()) last.value += '\n';
      last.value += std::string(line);
    }
  }
  return out;
}

absl::StatusOr<std::string> ParseLustreVersion(std::string_view std_text) {
  absl::string_view text = absl::StripAsciiWhitespace(AV(std_text));
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "lustre:")) {
      return std::string(absl::StripAsciiWhitespace(line));
    }
  }
  absl::string_view first = text.substr(0, text.find('\n'));
  first = absl::StripAsciiWhitespace(first);
  if (first.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(first[0])) ||
      first.find(':') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrFormat("cannot find a Lustre version in \"%s\"", std::string(text)));
  }
  return std::string(first);
}

const std::vector<std::string>& DefaultLustreVersionFiles() {
  static const std::vector<std::string> files = {"/sys/fs/lustre/version",
                                                 "/proc/fs/lustre/version"};
  return files;
}

absl::StatusOr<std::string> LustreVersionFromFiles(const std::vector<std::string>& files) {
  std::vector<std::string> tried;
  for (const std::string& file : files) {
    absl::StatusOr<std::string> text = ReadFileToString(file);
    if (!text.ok()) {
      tried.push_back(std::string(text.status().message()));
      continue;
    }
    absl::StatusOr<std::string> v = ParseLustreVersion(*text);
    if (v.ok()) return v;
    tried.push_back(absl::StrFormat("%s: %s", file, v.status().message()));
  }
  return absl::NotFoundError(absl::StrJoin(tried, "; "));
}

// ---- lfs / lctl -------------------------------------------------------------

LustreTools::LustreTools(LustreToolsOptions options) : options_(std::move(options)) {}

namespace {

// `at`, when given, is where `path` is reached (a held directory's /proc
// link); messages name `path`.
absl::Status CheckOnLustre(const std::string& path, const char* what,
                           const std::string& at = "") {
  ASSIGN_OR_RETURN(FsType t, FsTypeOf(at.empty() ? path : at));
  if (t.magic != kLustreSuperMagic) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot %s %s: it is on %s (statfs f_type 0x%x), not Lustre (0x%x); point the phase "
        "dir at a Lustre mount or drop the stripe settings",
        what, path, t.name, t.magic, kLustreSuperMagic));
  }
  return absl::OkStatus();
}

absl::Status CheckParamName(const std::string& name) {
  if (name.empty() || name[0] == '-' || name.find('=') != std::string::npos ||
      std::any_of(name.begin(), name.end(),
                  [](char c) { return absl::ascii_isspace(static_cast<unsigned char>(c)); })) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Lustre parameter name \"%s\" is invalid: it must be non-empty, not start with '-', "
        "and hold no '=' or whitespace (e.g. \"osc.*.checksums\")",
        name));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status LustreTools::SetStripe(const std::string& dir, const StripeSettings& s) const {
  if (dir.empty() || dir[0] != '/') {
    return absl::InvalidArgumentError(absl::StrFormat(
        "stripe directory \"%s\" is not an absolute path; resolve it first", dir));
  }
  if (s.stripe_count < -1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "stripe_count %d for %s is invalid: use -1 (all OSTs), 0 (default) or a count",
        s.stripe_count, dir));
  }
  if (s.stripe_size_bytes % 65536 != 0 || s.stripe_size_bytes >= (4ULL << 30)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "stripe_size_bytes %d for %s is invalid: Lustre needs a multiple of 64 KiB (65536) "
        "below 4 GiB, or 0 for the default",
        s.stripe_size_bytes, dir));
  }
  if (s.stripe_index < -1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "stripe_index %d for %s is invalid: use -1 (any OST) or an OST index", s.stripe_index,
        dir));
  }
  if (!s.pool.empty() &&
      (s.pool.size() > 15 || !std::all_of(s.pool.begin(), s.pool.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
               c == '.';
      }) || s.pool[0] == '-')) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "OST pool name \"%s\" for %s is invalid: at most 15 letters, digits, '_', '-' or '.', "
        "not starting with '-'",
        s.pool, dir));
  }
  const std::string& target = s.through.empty() ? dir : s.through;
  if (options_.require_lustre) {
    struct stat st;
    if (::stat(target.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return absl::NotFoundError(absl::StrFormat(
          "stripe directory %s does not exist or is not a directory; create it first", dir));
    }
    RETURN_IF_ERROR(CheckOnLustre(dir, "set striping on", s.through));
  }
  std::vector<std::string> argv = {options_.lfs, "setstripe",
                                   "-c", absl::StrCat(s.stripe_count),
                                   "-S", absl::StrCat(s.stripe_size_bytes)};
  if (s.stripe_index >= 0) {
    argv.push_back("-i");
    argv.push_back(absl::StrCat(s.stripe_index));
  }
  if (!s.pool.empty()) {
    argv.push_back("-p");
    argv.push_back(s.pool);
  }
  argv.push_back(target);
  return RunCommand(argv, options_.timeout_ms).status();
}

absl::StatusOr<StripeInfo> LustreTools::GetStripe(const std::string& path) const {
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError(absl::StrFormat(
        "getstripe path \"%s\" is not an absolute path; resolve it first", path));
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(
        absl::StrFormat("getstripe %s: %s", path, std::strerror(errno)));
  }
  if (options_.require_lustre) RETURN_IF_ERROR(CheckOnLustre(path, "get striping of"));
  std::vector<std::string> argv = {options_.lfs, "getstripe"};
  if (S_ISDIR(st.st_mode)) argv.push_back("-d");
  argv.push_back(path);
  ASSIGN_OR_RETURN(CommandOutput out, RunCommand(argv, options_.timeout_ms));
  return ParseGetStripe(out.stdout_text);
}

absl::StatusOr<std::string> LustreTools::Version() const {
  absl::StatusOr<std::string> from_files = LustreVersionFromFiles(options_.version_files);
  if (from_files.ok()) return from_files;
  std::vector<std::string> tried = {std::string(from_files.status().message())};
  absl::StatusOr<CommandOutput> out =
      RunCommand({options_.lctl, "get_param", "-n", "version"}, options_.timeout_ms);
  if (out.ok()) {
    absl::StatusOr<std::string> v = ParseLustreVersion(out->stdout_text);
    if (v.ok()) return v;
    tried.push_back(absl::StrFormat("lctl get_param -n version: %s", v.status().message()));
  } else {
    tried.push_back(std::string(out.status().message()));
  }
  return absl::NotFoundError(absl::StrFormat("no Lustre version found (not a Lustre node?): %s",
                                             absl::StrJoin(tried, "; ")));
}

absl::StatusOr<std::string> LustreTools::GetParam(const std::string& name) const {
  RETURN_IF_ERROR(CheckParamName(name));
  ASSIGN_OR_RETURN(CommandOutput out,
                   RunCommand({options_.lctl, "get_param", "-n", name}, options_.timeout_ms));
  std::string v = std::move(out.stdout_text);
  while (!v.empty() && v.back() == '\n') v.pop_back();
  return v;
}

absl::StatusOr<std::vector<ParamValue>> LustreTools::GetParams(const std::string& pattern) const {
  RETURN_IF_ERROR(CheckParamName(pattern));
  ASSIGN_OR_RETURN(CommandOutput out,
                   RunCommand({options_.lctl, "get_param", pattern}, options_.timeout_ms));
  std::vector<ParamValue> values = ParseParamLines(out.stdout_text);
  if (values.empty()) {
    return absl::NotFoundError(absl::StrFormat(
        "lctl get_param %s matched no parameter (output: \"%s\"); check the name with "
        "`lctl list_param`",
        pattern, FirstLine(out.stdout_text)));
  }
  return values;
}

absl::Status LustreTools::SetParam(const std::string& name, const std::string& value) const {
  return SetParams({{name, value}});
}

absl::Status LustreTools::SetParams(const std::vector<ParamValue>& values) const {
  std::vector<std::string> argv = {options_.lctl, "set_param"};
  for (const ParamValue& p : values) {
    RETURN_IF_ERROR(CheckParamName(p.name));
    if (p.value.find('\n') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "value for Lustre parameter %s holds a newline; lctl set_param takes one line",
          p.name));
    }
    argv.push_back(absl::StrCat(p.name, "=", p.value));
  }
  if (values.empty()) return absl::OkStatus();
  return RunCommand(argv, options_.timeout_ms).status();
}

// ---- ScopedParam --------------------------------------------------------------

absl::StatusOr<std::unique_ptr<ScopedParam>> ScopedParam::Set(const LustreTools& tools,
                                                              const std::string& name,
                                                              const std::string& value) {
  if (value == "clear") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s=clear is an action, not a setting: it cannot be restored (restoring the read-back "
        "value of e.g. lru_size would pin it); use SetParam",
        name));
  }
  ASSIGN_OR_RETURN(std::vector<ParamValue> saved, tools.GetParams(name));
  for (const ParamValue& p : saved) {
    if (p.value.find('\n') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s has a multi-line value (a stats file?), which set_param cannot restore; "
          "ScopedParam is for single-value settings",
          p.name));
    }
  }
  RETURN_IF_ERROR(tools.SetParam(name, value));
  return std::unique_ptr<ScopedParam>(new ScopedParam(tools, std::move(saved)));
}

absl::Status ScopedParam::Restore() {
  if (restored_) return absl::OkStatus();
  restored_ = true;
  absl::Status s = tools_.SetParams(saved_);
  if (!s.ok()) {
    std::vector<std::string> pairs;
    for (const ParamValue& p : saved_) pairs.push_back(absl::StrCat(p.name, "=", p.value));
    return Annotate(s, absl::StrFormat("restoring %s", absl::StrJoin(pairs, " ")));
  }
  return s;
}

ScopedParam::~ScopedParam() {
  absl::Status s = Restore();
  if (!s.ok()) LogError("Lustre parameter not restored: %s", std::string(s.message()));
}

}  // namespace lockstep
