#include "agent/fs/root_mounts.h"

#include <sys/stat.h>
#include <sys/statfs.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "agent/fs/lustre_tools.h"
#include "common/files.h"

namespace lockstep {
namespace {

std::string FsNameOf(const std::string& path) {
  auto t = FsTypeOf(path);
  return t.ok() ? t->name : "?";
}

}  // namespace

RootMounts::RootMounts(const std::vector<std::string>& roots) {
  for (const std::string& r : roots) {
    Root root{.path = r};
    struct stat st;
    if (::stat(r.c_str(), &st) == 0) {
      root.dev = st.st_dev;
      root.known = true;
      root.fs = FsNameOf(r);
    }
    roots_.push_back(std::move(root));
  }
}

absl::Status RootMounts::Check(const std::string& dir, const std::string& host) const {
  if (roots_.empty()) return absl::OkStatus();
  const Root* holder = nullptr;
  if (dir.empty() || dir[0] != '/') {
    holder = &roots_.front();
  } else {
    for (const Root& r : roots_) {
      if (PathIsUnder(dir, r.path) && (holder == nullptr || r.path.size() > holder->path.size())) {
        holder = &r;
      }
    }
  }
  if (holder == nullptr || !holder->known) return absl::OkStatus();  // Resolve says why
  struct stat st;
  if (::stat(holder->path.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "on %s the root %s (on %s when the agent started) cannot be reached: %s; is its mount "
        "gone or hung? mount it again, or restart the agent",
        host, holder->path, holder->fs, std::strerror(errno)));
  }
  if (st.st_dev != holder->dev) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "on %s the root %s was on %s when the agent started and is now on %s: its mount is "
        "gone (or another was mounted over it); mount it again before running",
        host, holder->path, holder->fs, FsNameOf(holder->path)));
  }
  return absl::OkStatus();
}

}  // namespace lockstep
