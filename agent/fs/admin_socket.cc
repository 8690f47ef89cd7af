#include "agent/fs/admin_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "common/clock.h"
#include "common/unique_fd.h"

namespace lockstep {
namespace {

// Answers (perf dump of an OSD is ~30 KB) are far below this.
constexpr uint32_t kMaxAnswerBytes = 64 << 20;

// Waits until `fd` is ready for `events` or the deadline passes.
absl::Status WaitFor(int fd, short events, int64_t deadline_mono_ns, const std::string& path) {
  for (;;) {
    const int64_t left_ms = (deadline_mono_ns - MonotonicNs()) / 1'000'000;
    if (left_ms <= 0) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "admin socket %s: no answer in time (the daemon is hung or overloaded)", path));
    }
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>(left_ms));
    if (n > 0) return absl::OkStatus();
    if (n < 0 && errno != EINTR) {
      return absl::InternalError(absl::StrFormat("admin socket %s: poll: %s", path,
                                                 std::strerror(errno)));
    }
  }
}

absl::Status ReadAll(int fd, char* out, size_t n, int64_t deadline_mono_ns,
                     const std::string& path) {
  size_t got = 0;
  while (got < n) {
    if (absl::Status s = WaitFor(fd, POLLIN, deadline_mono_ns, path); !s.ok()) return s;
    ssize_t r = ::read(fd, out + got, n - got);
    if (r == 0) {
      return absl::InternalError(absl::StrFormat(
          "admin socket %s: the daemon closed the connection after %u of %u bytes", path, got, n));
    }
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return absl::InternalError(absl::StrFormat("admin socket %s: read: %s", path,
                                                 std::strerror(errno)));
    }
    got += static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> AdminSocketCommand(const std::string& socket_path,
                                               const std::string& command_json,
                                               absl::Duration timeout) {
  const int64_t deadline = MonotonicNs() + absl::ToInt64Nanoseconds(timeout);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "admin socket path %s is longer than %u bytes; use a shorter run_dir", socket_path,
        sizeof(addr.sun_path) - 1));
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) {
    return absl::InternalError(absl::StrFormat("socket(AF_UNIX): %s", std::strerror(errno)));
  }
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (errno == EINPROGRESS || errno == EAGAIN) {
      if (absl::Status s = WaitFor(fd.get(), POLLOUT, deadline, socket_path); !s.ok()) return s;
    } else {
      return absl::UnavailableError(absl::StrFormat(
          "admin socket %s: %s (the daemon is not running, or the socket path is wrong)",
          socket_path, std::strerror(errno)));
    }
  }
  std::string out = command_json;
  out.push_back('\0');
  size_t sent = 0;
  while (sent < out.size()) {
    if (absl::Status s = WaitFor(fd.get(), POLLOUT, deadline, socket_path); !s.ok()) return s;
    ssize_t w = ::send(fd.get(), out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return absl::UnavailableError(absl::StrFormat("admin socket %s: send: %s", socket_path,
                                                    std::strerror(errno)));
    }
    sent += static_cast<size_t>(w);
  }
  unsigned char len_be[4];
  if (absl::Status s = ReadAll(fd.get(), reinterpret_cast<char*>(len_be), 4, deadline,
                               socket_path);
      !s.ok()) {
    return s;
  }
  const uint32_t len = (uint32_t{len_be[0]} << 24) | (uint32_t{len_be[1]} << 16) |
                       (uint32_t{len_be[2]} << 8) | uint32_t{len_be[3]};
  if (len > kMaxAnswerBytes) {
    return absl::InternalError(absl::StrFormat(
        "admin socket %s: an answer of %u bytes (over %u): not a Ceph admin socket?", socket_path,
        len, kMaxAnswerBytes));
  }
  std::string answer(len, '\0');
  if (absl::Status s = ReadAll(fd.get(), answer.data(), len, deadline, socket_path); !s.ok()) {
    return s;
  }
  return answer;
}

std::string AdminSocketPath(const std::string& pattern, const std::string& cluster,
                            const std::string& daemon) {
  const size_t dot = daemon.find('.');
  const std::string type = dot == std::string::npos ? daemon : daemon.substr(0, dot);
  const std::string id = dot == std::string::npos ? "" : daemon.substr(dot + 1);
  return absl::StrReplaceAll(pattern,
                             {{"$cluster", cluster}, {"$name", daemon}, {"$type", type}, {"$id", id}});
}

}  // namespace lockstep
