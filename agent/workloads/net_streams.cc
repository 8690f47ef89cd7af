// A NET stream's wire format and socket calls (agent/workloads/net_streams.h).
#include "agent/workloads/net_streams.h"

#include <arpa/inet.h>
#include <endian.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/net.h"

namespace lockstep {
namespace {

// How often a blocked send, receive or accept looks at the abort flag.
constexpr int kPollMs = 200;

// Whether to go on after a call timed out (SO_SNDTIMEO/SO_RCVTIMEO, kPollMs):
// false, errno ECANCELED or ETIMEDOUT, once the phase stopped or the deadline passed.
bool StillWaiting(const TaskContext* task, int64_t deadline_mono_ns) {
  if (task != nullptr && task->Aborted()) {
    errno = ECANCELED;
    return false;
  }
  if (MonotonicNs() >= deadline_mono_ns) {
    errno = ETIMEDOUT;
    return false;
  }
  return true;
}

}  // namespace

void EncodeNetFrameHeader(uint32_t type, uint64_t length, unsigned char out[kNetFrameHeaderBytes]) {
  const uint32_t t = htobe32(type), zero = 0;
  const uint64_t l = htobe64(length);
  std::memcpy(out, &t, 4);
  std::memcpy(out + 4, &zero, 4);
  std::memcpy(out + 8, &l, 8);
}

NetFrameHeader DecodeNetFrameHeader(const unsigned char in[kNetFrameHeaderBytes]) {
  uint32_t t;
  uint64_t l;
  std::memcpy(&t, in, 4);
  std::memcpy(&l, in + 8, 8);
  return {be32toh(t), be64toh(l)};
}

// Waits until `fd` is ready for `events`, looking at the abort flag every
// kPollMs; false (errno ETIMEDOUT or ECANCELED) past `deadline_mono_ns` or
// on abort.
bool WaitReady(int fd, short events, const TaskContext* task, int64_t deadline_mono_ns) {
  while (true) {
    if (task != nullptr && task->Aborted()) {
      errno = ECANCELED;
      return false;
    }
    const int64_t left_ns = deadline_mono_ns - MonotonicNs();
    if (left_ns <= 0) {
      errno = ETIMEDOUT;
      return false;
    }
    pollfd p{fd, events, 0};
    const int wait_ms = static_cast<int>(std::min<int64_t>(kPollMs, left_ns / 1'000'000 + 1));
    const int n = ::poll(&p, 1, wait_ms);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

// A connected stream's calls block, each for kPollMs at most (then the
// caller looks at the abort flag and its deadline): one send or receive per
// message where a non-blocking socket would add a poll and a short count.
void BlockWithTimeouts(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  timeval tv{0, kPollMs * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

// All of iov (a header and a payload) or false with errno.
bool SendAll(int fd, iovec* iov, int count, const TaskContext* task, int64_t deadline_mono_ns) {
  while (count > 0) {
    msghdr m{};
    m.msg_iov = iov;
    m.msg_iovlen = static_cast<size_t>(count);
    const ssize_t n = ::sendmsg(fd, &m, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN || !StillWaiting(task, deadline_mono_ns)) return false;
      continue;
    }
    size_t sent = static_cast<size_t>(n);
    while (count > 0 && sent >= iov->iov_len) {
      sent -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + sent;
      iov->iov_len -= sent;
    }
  }
  return true;
}

bool SendBytes(int fd, const void* data, size_t n, const TaskContext* task,
               int64_t deadline_mono_ns) {
  iovec v{const_cast<void*>(data), n};
  return SendAll(fd, &v, 1, task, deadline_mono_ns);
}

// Exactly n bytes, or false: errno set, or 0 when the other end closed first.
bool RecvAll(int fd, void* data, size_t n, const TaskContext* task, int64_t deadline_mono_ns) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t got = ::recv(fd, p, n, MSG_WAITALL);
    if (got > 0) {
      p += got;
      n -= static_cast<size_t>(got);
      continue;
    }
    if (got == 0) {
      errno = 0;
      return false;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN || !StillWaiting(task, deadline_mono_ns)) return false;
  }
  return true;
}

std::string NetErrnoText(int err) {
  if (err == 0) return "the other end closed the connection";
  if (err == ECANCELED) return "the phase stopped";
  return absl::StrFormat("%s (errno %d)", std::strerror(err), err);
}

std::string NetEndpoint(sockaddr_storage a) {
  if (a.ss_family == AF_INET6) {  // an IPv4 peer on the dual-stack socket: as IPv4
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&a);
    if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
      sockaddr_in a4{};
      a4.sin_family = AF_INET;
      a4.sin_port = a6->sin6_port;
      std::memcpy(&a4.sin_addr, &a6->sin6_addr.s6_addr[12], 4);
      a = sockaddr_storage{};
      std::memcpy(&a, &a4, sizeof(a4));
    }
  }
  char host[NI_MAXHOST] = {}, port[NI_MAXSERV] = {};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&a), sizeof(a), host, sizeof(host), port,
                    sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "?";
  }
  return a.ss_family == AF_INET6 ? absl::StrFormat("[%s]:%s", host, port)
                                 : absl::StrFormat("%s:%s", host, port);
}

absl::StatusOr<UniqueFd> ListenForNetStreams(const std::string& interface_address, int backlog,
                                             uint32_t* port) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (!interface_address.empty()) {
    auto* a4 = reinterpret_cast<sockaddr_in*>(&addr);
    a4->sin_family = AF_INET;
    ::inet_pton(AF_INET, interface_address.c_str(), &a4->sin_addr);
    len = sizeof(sockaddr_in);
  } else {
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&addr);
    a6->sin6_family = AF_INET6;
    a6->sin6_addr = in6addr_any;
    len = sizeof(sockaddr_in6);
  }
  UniqueFd fd(::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0 && addr.ss_family == AF_INET6) {  // a host without IPv6
    auto* a4 = reinterpret_cast<sockaddr_in*>(&addr);
    *a4 = sockaddr_in{};
    a4->sin_family = AF_INET;
    a4->sin_addr.s_addr = htonl(INADDR_ANY);
    len = sizeof(sockaddr_in);
    fd = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  }
  if (fd.get() < 0) {
    return absl::InternalError(absl::StrFormat("socket: %s", NetErrnoText(errno)));
  }
  if (addr.ss_family == AF_INET6) {
    int off = 0;
    ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
  }
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      ::listen(fd.get(), backlog) != 0) {
    return absl::InternalError(absl::StrFormat(
        "cannot listen on %s of host %s: %s",
        interface_address.empty() ? "any address" : interface_address, LocalHostName(),
        NetErrnoText(errno)));
  }
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof(bound);
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &bound_len);
  *port = ntohs(bound.ss_family == AF_INET6
                    ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                    : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return fd;
}

void ReadTcpInfo(int fd, v1::NetResult* r) {
  tcp_info info{};
  socklen_t len = sizeof(info);
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return;
  r->set_retransmits(info.tcpi_total_retrans);
  r->set_rtt_us(info.tcpi_rtt);
  r->set_rtt_var_us(info.tcpi_rttvar);
  r->set_snd_cwnd(info.tcpi_snd_cwnd);
}

}  // namespace lockstep
