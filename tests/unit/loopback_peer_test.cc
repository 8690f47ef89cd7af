// LoopbackPeerUid (agent/loopback_peer.h) on real loopback connections: the
// owner of the client's socket, IPv4 and dual-stack IPv6 (as gRPC's clients
// make them); a connection not in the table and an off-loopback peer: no answer.
#include "agent/loopback_peer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_format.h"
#include "common/unique_fd.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

// A listener on 127.0.0.1 and a connection to it from a socket of `family`.
struct Connection {
  UniqueFd listener, client;
  uint16_t server_port = 0, client_port = 0;
};

Connection Connect(int family) {
  Connection c;
  c.listener = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t n = sizeof(a);
  EXPECT_EQ(::bind(c.listener.get(), reinterpret_cast<sockaddr*>(&a), n), 0);
  EXPECT_EQ(::listen(c.listener.get(), 4), 0);
  ::getsockname(c.listener.get(), reinterpret_cast<sockaddr*>(&a), &n);
  c.server_port = ntohs(a.sin_port);
  c.client = UniqueFd(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in6 mapped{};
  mapped.sin6_family = AF_INET6;
  mapped.sin6_port = a.sin_port;
  ::inet_pton(AF_INET6, "::ffff:127.0.0.1", &mapped.sin6_addr);
  const int connected =
      family == AF_INET ? ::connect(c.client.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a))
                        : ::connect(c.client.get(), reinterpret_cast<sockaddr*>(&mapped),
                                    sizeof(mapped));
  EXPECT_EQ(connected, 0);
  sockaddr_storage me{};
  n = sizeof(me);
  ::getsockname(c.client.get(), reinterpret_cast<sockaddr*>(&me), &n);
  c.client_port = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&me)->sin_port
                                          : reinterpret_cast<sockaddr_in6*>(&me)->sin6_port);
  return c;
}

TEST(LoopbackPeer, TheClientSocketsOwnerIPv4AndDualStack) {
  for (int family : {AF_INET, AF_INET6}) {
    SCOPED_TRACE(family == AF_INET ? "IPv4" : "dual-stack IPv6");
    Connection c = Connect(family);
    // gRPC names an IPv4 peer so, whichever socket the client made.
    const std::string peer = absl::StrFormat("ipv4:127.0.0.1:%u", c.client_port);
    auto uid = LoopbackPeerUid(peer, "127.0.0.1", c.server_port);
    ASSERT_TRUE(uid.ok()) << uid.status();
    EXPECT_EQ(*uid, ::geteuid());
    auto any = LoopbackPeerUid(peer, "", c.server_port);  // "localhost"
    ASSERT_TRUE(any.ok()) << any.status();
    // No connection from that port to another server port.
    const uint16_t other = c.server_port == 65535 ? 1 : c.server_port + 1;
    EXPECT_TRUE(absl::IsNotFound(LoopbackPeerUid(peer, "127.0.0.1", other).status()));
  }
}

TEST(LoopbackPeer, APeerOffLoopbackIsNoAnswer) {
  EXPECT_TRUE(absl::IsInvalidArgument(LoopbackPeerUid("ipv4:10.0.0.1:5", "", 7070).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(LoopbackPeerUid("unix:/tmp/s", "", 7070).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(LoopbackPeerUid("ipv4:127.0.0.1:x", "", 7070).status()));
}

}  // namespace
}  // namespace lockstep
