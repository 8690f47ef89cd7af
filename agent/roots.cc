#include "agent/roots.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/text_escape.h"
#include "common/utf8.h"

namespace lockstep {
namespace {

absl::StatusOr<std::string> RealPath(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      return absl::NotFoundError(absl::StrFormat("%s does not exist", path));
    }
    return absl::PermissionDeniedError(
        absl::StrFormat("cannot resolve %s: %s", path, std::strerror(err)));
  }
  return std::string(buf);
}

// A plan path the agent will not use: the controller sees PATH_REFUSED.
absl::Status Refused(absl::Status status) { return WithKind(std::move(status), v1::PATH_REFUSED); }

// PATH_REFUSED: `dir` (landing at `real`) is below none of `roots`.
absl::Status OutsideRoots(const std::string& dir, const std::string& real,
                          const std::vector<std::string>& roots) {
  std::string how = real == dir ? "" : absl::StrFormat(" (resolves to %s)", real);
  return Refused(absl::PermissionDeniedError(absl::StrFormat(
      "directory %s%s is outside the agent's allowed roots [%s]; use a directory below one of "
      "them or start the agent with --root for it",
      dir, how, absl::StrJoin(roots, ", "))));
}

// Where a missing absolute `path` would be: its longest existing prefix
// resolved (symlinks, ".."), the missing rest appended.
std::string WhereMissingLands(const std::string& path) {
  std::string prefix = path, rest;
  while (prefix.size() > 1) {
    const size_t slash = prefix.find_last_of('/');
    const std::string name = prefix.substr(slash + 1);
    prefix = slash == 0 ? "/" : prefix.substr(0, slash);
    rest = rest.empty() ? name : name + "/" + rest;
    auto real = RealPath(prefix);
    if (real.ok()) {
      std::string out = *real == "/" ? "/" + rest : *real + "/" + rest;
      // ".." in the missing rest climbs above what it names.
      return std::filesystem::path(out).lexically_normal().string();
    }
  }
  return path;
}

}  // namespace

absl::StatusOr<AllowedRoots> AllowedRoots::Create(const std::vector<std::string>& roots) {
  if (roots.empty()) {
    return absl::InvalidArgumentError(
        "no allowed root: give at least one --root DIR (the agent creates files only below it)");
  }
  AllowedRoots out;
  for (const std::string& r : roots) {
    auto real = RealPath(r);
    if (!real.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "allowed root %s: %s; create it or fix --root", r, std::string(real.status().message())));
    }
    struct stat st;
    if (::stat(real->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("allowed root %s is not a directory; fix --root", r));
    }
    if (!IsUtf8(*real)) {
      // Its path travels in HostFacts and every phase's messages: protobuf
      // strings, which must be UTF-8 (the agent would fail at its first reply).
      return absl::InvalidArgumentError(absl::StrFormat(
          "allowed root %s resolves to %s, which is not UTF-8; give a root whose real path is "
          "UTF-8 (rename the directory or a link on the way)",
          r, EscapeForTerminal(*real)));
    }
    out.roots_.push_back(*real);
  }
  return out;
}

absl::StatusOr<std::string> AllowedRoots::Resolve(const std::string& dir) const {
  if (dir.empty()) {
    return Refused(absl::InvalidArgumentError("empty directory; set dir in the plan's phase"));
  }
  std::string candidate = dir[0] == '/' ? dir : roots_.front() + "/" + dir;
  auto real = RealPath(candidate);
  if (!real.ok()) {
    if (absl::IsNotFound(real.status())) {
      // The roots first: "create it" is no advice for a directory that
      // would then be refused.
      const std::string lands = WhereMissingLands(candidate);
      if (std::none_of(roots_.begin(), roots_.end(),
                       [&](const std::string& r) { return PathIsUnder(lands, r); })) {
        return OutsideRoots(dir, lands == candidate ? candidate : lands, roots_);
      }
      return absl::NotFoundError(absl::StrFormat(
          "directory %s does not exist; create it (the agent does not create phase directories)",
          candidate));
    }
    return Refused(real.status());
  }
  for (const std::string& root : roots_) {
    if (PathIsUnder(*real, root)) {
      struct stat st;
      if (::stat(real->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return Refused(absl::InvalidArgumentError(absl::StrFormat("%s is not a directory", *real)));
      }
      return *real;
    }
  }
  return OutsideRoots(dir, *real == candidate ? dir : *real, roots_);
}

absl::StatusOr<std::string> AllowedRoots::ResolveNew(const std::string& dir) const {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  const size_t slash = d.find_last_of('/');
  const std::string base = slash == std::string::npos ? d : d.substr(slash + 1);
  if (base.empty() || base == "." || base == "..") {
    return Refused(absl::InvalidArgumentError(
        absl::StrFormat("directory %s has no name to create; give a path ending in a name", dir)));
  }
  const std::string parent = slash == std::string::npos ? roots_.front()
                             : slash == 0                ? std::string(1, '/')
                                                         : d.substr(0, slash);
  auto real = Resolve(parent);
  if (!real.ok()) return real.status();
  return *real == "/" ? "/" + base : *real + "/" + base;
}

std::string AllowedRoots::RootOf(const std::string& resolved) const {
  std::string best;
  for (const std::string& root : roots_) {
    if (PathIsUnder(resolved, root) && root.size() > best.size()) best = root;
  }
  return best;
}

}  // namespace lockstep
