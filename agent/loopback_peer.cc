#include "agent/loopback_peer.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "common/unique_fd.h"

namespace lockstep {
namespace {

struct Endpoint {
  int family = AF_INET;
  unsigned char addr[16] = {};  // network order; 4 bytes for AF_INET
  uint16_t port = 0;
};

// "ipv4:127.0.0.1:41234" or "ipv6:[::1]:41234"; loopback only.
absl::StatusOr<Endpoint> ParsePeer(const std::string& peer) {
  Endpoint e;
  std::string host, port;
  if (absl::StartsWith(peer, "ipv4:")) {
    const size_t colon = peer.rfind(':');
    host = peer.substr(5, colon - 5);
    port = peer.substr(colon + 1);
  } else if (absl::StartsWith(peer, "ipv6:[")) {
    const size_t close = peer.find("]:");
    if (close != std::string::npos) {
      e.family = AF_INET6;
      host = peer.substr(6, close - 6);
      port = peer.substr(close + 2);
    }
  }
  uint32_t p = 0;
  const bool parsed = !host.empty() && absl::SimpleAtoi(port, &p) && p > 0 && p < 65536 &&
                      ::inet_pton(e.family, host.c_str(), e.addr) == 1;
  const bool loopback =
      parsed && (e.family == AF_INET
                     ? e.addr[0] == 127
                     : IN6_IS_ADDR_LOOPBACK(reinterpret_cast<const in6_addr*>(e.addr)) ||
                           (IN6_IS_ADDR_V4MAPPED(reinterpret_cast<const in6_addr*>(e.addr)) &&
                            e.addr[12] == 127));
  if (!loopback) {
    return absl::InvalidArgumentError(
        absl::StrFormat("peer %s is not a loopback TCP address", peer));
  }
  e.port = static_cast<uint16_t>(p);
  return e;
}

// A 4 or 16 byte address of `family` (network order); IPv4 is stored as
// the first 4 bytes.
struct Address {
  int family = AF_INET;
  unsigned char bytes[16] = {};
};

Address V4Mapped(const Address& v4) {
  Address a{.family = AF_INET6};
  a.bytes[10] = a.bytes[11] = 0xff;
  std::memcpy(a.bytes + 12, v4.bytes, 4);
  return a;
}

// The owner of the one TCP socket from `src`:`sport` to `dst`:`dport`
// (both of one family), by the kernel's exact lookup.
absl::StatusOr<uid_t> FindOwner(const Address& src, uint16_t sport, const Address& dst,
                                uint16_t dport) {
  UniqueFd fd(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
  if (fd.get() < 0) {
    return absl::InternalError(absl::StrFormat("sock_diag socket: %s", std::strerror(errno)));
  }
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } ask = {};
  ask.header.nlmsg_len = sizeof(ask);
  ask.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  ask.header.nlmsg_flags = NLM_F_REQUEST;
  ask.request.sdiag_family = static_cast<uint8_t>(src.family);
  ask.request.sdiag_protocol = IPPROTO_TCP;
  ask.request.idiag_states = ~0u;
  ask.request.id.idiag_sport = htons(sport);
  ask.request.id.idiag_dport = htons(dport);
  const size_t bytes = src.family == AF_INET ? 4 : 16;
  std::memcpy(ask.request.id.idiag_src, src.bytes, bytes);
  std::memcpy(ask.request.id.idiag_dst, dst.bytes, bytes);
  ask.request.id.idiag_cookie[0] = ask.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  sockaddr_nl kernel = {};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd.get(), &ask, sizeof(ask), 0, reinterpret_cast<sockaddr*>(&kernel),
               sizeof(kernel)) < 0) {
    return absl::InternalError(absl::StrFormat("sock_diag request: %s", std::strerror(errno)));
  }
  alignas(nlmsghdr) char buf[8192];
  ssize_t n;
  while ((n = ::recv(fd.get(), buf, sizeof(buf), 0)) < 0 && errno == EINTR) {
  }
  if (n <= 0) {
    return absl::InternalError(absl::StrFormat("sock_diag answer: %s", std::strerror(errno)));
  }
  int left = static_cast<int>(n);
  for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
    if (h->nlmsg_type == NLMSG_ERROR) {
      const int err = -static_cast<const nlmsgerr*>(NLMSG_DATA(h))->error;
      if (err == ENOENT) return absl::NotFoundError("no such connection");
      return absl::InternalError(absl::StrFormat("sock_diag lookup: %s", std::strerror(err)));
    }
    if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY) {
      return static_cast<uid_t>(static_cast<const inet_diag_msg*>(NLMSG_DATA(h))->idiag_uid);
    }
  }
  return absl::NotFoundError("no such connection");
}

}  // namespace

absl::StatusOr<uid_t> LoopbackPeerUid(const std::string& peer, const std::string& server_ip,
                                      uint16_t server_port) {
  auto endpoint = ParsePeer(peer);
  if (!endpoint.ok()) return endpoint.status();
  const auto* in6 = reinterpret_cast<const in6_addr*>(endpoint->addr);
  const bool v4 = endpoint->family == AF_INET || IN6_IS_ADDR_V4MAPPED(in6);
  Address src{.family = AF_INET};
  std::memcpy(src.bytes, endpoint->family == AF_INET ? endpoint->addr : endpoint->addr + 12, 4);
  if (!v4) {
    src.family = AF_INET6;
    std::memcpy(src.bytes, endpoint->addr, 16);
  }
  Address dst{.family = src.family};
  const std::string server = !server_ip.empty() ? server_ip : v4 ? "127.0.0.1" : "::1";
  if (::inet_pton(dst.family, server.c_str(), dst.bytes) != 1) {
    return absl::NotFoundError(absl::StrFormat(
        "the server address %s is not of the family of peer %s", server, peer));
  }
  // An IPv4 connection's client socket may be IPv4 or dual-stack IPv6.
  absl::StatusOr<uid_t> owner = FindOwner(src, endpoint->port, dst, server_port);
  if (v4 && absl::IsNotFound(owner.status())) {
    owner = FindOwner(V4Mapped(src), endpoint->port, V4Mapped(dst), server_port);
  }
  if (absl::IsNotFound(owner.status())) {
    return absl::NotFoundError(absl::StrFormat(
        "no connection from %s to %s port %u is in this host's socket table", peer, server,
        server_port));
  }
  return owner;
}

}  // namespace lockstep
