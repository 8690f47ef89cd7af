#include "agent/cache_control.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"

namespace lockstep {
namespace {

void AddWarning(v1::CacheReply* reply, const std::string& why) {
  reply->set_warning(reply->warning().empty() ? why : reply->warning() + "; " + why);
}

// Writes the drop mode; "" when done, else why not.
std::string WriteDropCaches(uint32_t mode, const CacheControl& control, v1::CacheReply* reply) {
  if (!control.allow_drop_caches) return "dropping caches is disabled in this agent's configuration";
  const int64_t t0 = MonotonicNs();
  int fd = ::open(control.drop_caches_path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::StrFormat("cannot open %s: %s (needs uid 0 in the initial user namespace)",
                           control.drop_caches_path, std::strerror(errno));
  }
  std::string why;
  std::string v = absl::StrFormat("%u\n", mode);
  if (::write(fd, v.data(), v.size()) != static_cast<ssize_t>(v.size())) {
    why = absl::StrFormat("cannot write %s: %s", control.drop_caches_path, std::strerror(errno));
  } else {
    reply->set_dropped(true);
    reply->set_drop_duration_ns(MonotonicNs() - t0);
  }
  ::close(fd);
  return why;
}

// The client caches of each file system the roots are on, once each: ""
// when dropped, else why not.
std::string DropClientCaches(const CacheControl& control) {
  std::set<std::string> done;
  std::vector<std::string> failed;
  for (const std::string& root : *control.roots) {
    absl::StatusOr<std::unique_ptr<FileSystem>> fs = FileSystemFor(root, *control.fs);
    if (!fs.ok() || !(*fs)->HasClientCaches() || !done.insert((*fs)->Name()).second) continue;
    if (absl::Status s = (*fs)->DropClientCaches(); !s.ok()) {
      failed.push_back(std::string(s.message()));
    }
  }
  if (!failed.empty()) return absl::StrJoin(failed, "; ");
  if (done.empty()) {
    return absl::StrFormat(
        "lustre_lru_clear: no root of this agent (%s) is on a file system with client lock "
        "caches (Lustre); nothing was cleared",
        absl::StrJoin(*control.roots, ", "));
  }
  return "";
}

}  // namespace

absl::StatusOr<v1::CacheReply> DropCaches(const v1::CacheRequest& request,
                                          const CacheControl& control) {
  v1::CacheReply reply;
  if (request.sync()) {
    const int64_t t0 = MonotonicNs();
    ::sync();
    reply.set_sync_duration_ns(MonotonicNs() - t0);
    reply.set_synced(true);
  }
  if (request.drop_mode() > 3) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "drop mode %u is not 1 (page cache), 2 (dentries and inodes) or 3 (both)",
        request.drop_mode()));
  }
  if (request.drop_mode() != 0) {
    // The daemons first: an MDS that recalls client caps, an OSD that drops
    // its onodes, before the page cache goes.
    if (control.daemons != nullptr && !control.daemons->empty()) {
      int64_t ns = 0;
      for (CephDaemons::CacheDrop& drop : control.daemons->DropCaches(&ns)) {
        if (!drop.dropped) {
          if (request.required()) {
            return absl::FailedPreconditionError(absl::StrFormat(
                "a daemon cache required by the plan was not dropped: %s", drop.line));
          }
          AddWarning(&reply, drop.line);
        }
        reply.add_daemon_caches(std::move(drop.line));
      }
      reply.set_daemon_cache_duration_ns(ns);
    }
    if (std::string why = WriteDropCaches(request.drop_mode(), control, &reply); !why.empty()) {
      if (request.required()) {
        return absl::PermissionDeniedError(
            absl::StrFormat("drop_caches required by the plan but not done: %s", why));
      }
      AddWarning(&reply, why);
    }
  }
  if (request.lustre_lru_clear()) {
    const int64_t t0 = MonotonicNs();
    if (std::string why = DropClientCaches(control); why.empty()) {
      reply.set_lru_cleared(true);
      reply.set_lru_duration_ns(MonotonicNs() - t0);
    } else {
      if (request.required()) return absl::FailedPreconditionError(why);
      AddWarning(&reply, why);
    }
  }
  return reply;
}

}  // namespace lockstep
