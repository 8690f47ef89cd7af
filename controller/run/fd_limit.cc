#include "controller/run/fd_limit.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"

namespace lockstep {

absl::Status EnsureFileLimit(size_t agents) {
  const uint64_t needed = FdsNeeded(agents);
  struct rlimit rl = {};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) {
    return absl::InternalError(absl::StrFormat("getrlimit(RLIMIT_NOFILE): %s", std::strerror(errno)));
  }
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= needed) return absl::OkStatus();
  if (rl.rlim_cur == RLIM_INFINITY) return absl::OkStatus();
  const rlim_t soft = rl.rlim_cur;
  rl.rlim_cur = rl.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &rl) == 0 &&
      (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= needed)) {
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(absl::StrFormat(
      "%u agents need about %u open files in the controller (one connection per agent and %u "
      "of its own) but RLIMIT_NOFILE allows %u (soft limit %u, hard limit %u): raise the hard "
      "limit, e.g. `ulimit -Hn %u; ulimit -n %u` as root before `lockstep run`, LimitNOFILE=%u "
      "in a systemd unit, or nofile in /etc/security/limits.conf",
      agents, needed, kControllerSpareFds, rl.rlim_max, soft, rl.rlim_max, needed, needed,
      needed));
}

}  // namespace lockstep
