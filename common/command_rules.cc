#include "common/command_rules.h"

#include <string.h>

#include <cstdint>

#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/limits.h"
#include "common/utf8.h"

namespace lockstep {
namespace {

// What glibc's dynamic loader and libc read to load code or data from a path
// the environment names (glibc's own list of "unsecure" variables, with
// GLIBC_TUNABLES); LD_* covers the loader's whole family.
constexpr std::string_view kLoaderVariables[] = {
    "GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH",
    "MALLOC_TRACE", "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TZDIR"};

bool IsNameStart(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

absl::Status CheckCount(const std::vector<std::string>& list, const char* what) {
  if (list.size() > kMaxCommandArgs) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s has %u entries; the limit is %u", what, list.size(), kMaxCommandArgs));
  }
  uint64_t bytes = 0;
  for (const std::string& s : list) bytes += s.size() + 1;
  if (bytes > kMaxCommandArgBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s holds %u bytes; the limit is %u", what, bytes, kMaxCommandArgBytes));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckCommandArgv(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    return absl::InvalidArgumentError(
        "argv is empty; give the program and its arguments, e.g. argv = [\"tar\", \"xf\", "
        "\"linux.tar\"]");
  }
  if (argv[0].empty()) return absl::InvalidArgumentError("argv[0], the program, is empty");
  if (absl::Status s = CheckCount(argv, "argv"); !s.ok()) return s;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i].find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrFormat("argv[%u] holds a NUL byte", i));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckCommandEnvEntry(std::string_view entry) {
  const size_t eq = entry.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("\"%s\" is not KEY=VALUE", std::string(entry)));
  }
  const std::string_view key = entry.substr(0, eq);
  bool name = IsNameStart(key[0]);
  for (char c : key) name = name && IsNameChar(c);
  if (!name) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "\"%s\" is not a variable name (letters, digits and '_', not starting with a digit)",
        std::string(key)));
  }
  if (entry.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the value of %s holds a NUL byte", std::string(key)));
  }
  bool loader = key.substr(0, 3) == "LD_";
  for (std::string_view v : kLoaderVariables) loader = loader || key == v;
  if (loader) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is refused: it makes the dynamic loader or libc load what it names, which would run "
        "any code through an allowed program",
        std::string(key)));
  }
  return absl::OkStatus();
}

absl::Status CheckCommandEnv(const std::vector<std::string>& env) {
  if (absl::Status s = CheckCount(env, "env"); !s.ok()) return s;
  for (const std::string& e : env) {
    if (absl::Status s = CheckCommandEnvEntry(e); !s.ok()) return s;
  }
  return absl::OkStatus();
}

std::string CommandBaseName(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string CommandEnding(const v1::CommandResult& r, uint32_t timeout_ms) {
  if (r.timed_out()) {
    return absl::StrFormat("timed out after %g s, killed with its process group (signal %d)",
                           timeout_ms / 1e3, r.signal());
  }
  if (r.signal() != 0) {
    const char* name = ::sigdescr_np(r.signal());
    return absl::StrFormat("killed by signal %d (%s)", r.signal(), name ? name : "unknown");
  }
  return absl::StrFormat("exit %d", r.exit_code());
}

bool CommandFailed(const v1::CommandResult& r) {
  return r.timed_out() || r.signal() != 0 || r.exit_code() != 0;
}

std::string LastLines(const std::string& text, int lines) {
  constexpr size_t kMaxBytes = 300;
  std::vector<std::string> kept;
  std::vector<absl::string_view> all = absl::StrSplit(text, '\n', absl::SkipWhitespace());
  for (size_t i = all.size(); i > 0 && static_cast<int>(kept.size()) < lines; --i) {
    kept.insert(kept.begin(), std::string(all[i - 1]));
  }
  std::string out = absl::StrJoin(kept, " | ");
  if (out.size() > kMaxBytes) {
    // Not inside a UTF-8 character: errors travel in protobuf strings.
    out = "..." + out.substr(Utf8BoundaryFrom(out, out.size() - kMaxBytes));
  }
  return out;
}

std::vector<std::string> ExpandCommandArgv(const std::vector<std::string>& argv, uint32_t rank) {
  std::vector<std::string> out = argv;
  const std::string digits = absl::StrFormat("%08u", rank);
  for (size_t i = 1; i < out.size(); ++i) out[i] = absl::StrReplaceAll(out[i], {{"{rank}", digits}});
  return out;
}

}  // namespace lockstep
