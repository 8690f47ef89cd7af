// The account on the other end of a loopback TCP connection, from the
// kernel's socket table (NETLINK_SOCK_DIAG, what `ss -tep` shows): an agent
// that takes plaintext calls on loopback (--insecure) as root answers only
// root and its own account, not every user of the host.
#ifndef LOCKSTEP_AGENT_LOOPBACK_PEER_H_
#define LOCKSTEP_AGENT_LOOPBACK_PEER_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace lockstep {

// The uid owning the client socket of the connection from `peer` (gRPC's
// ServerContext::peer(): "ipv4:127.0.0.1:41234", "ipv6:[::1]:41234") to
// `server_ip` (the address listened on: "127.0.0.1", "::1"; empty: both of
// those) port `server_port`, in this network namespace. One exact lookup
// per address family the client's socket may have (gRPC's clients make
// dual-stack sockets: an IPv4 peer may be ::ffff:127.0.0.1), never a walk
// of the table. InvalidArgument for a peer that is not a loopback TCP
// address; NotFound when no such connection is in the table (it closed, or
// went to another address); Internal when the table cannot be read.
absl::StatusOr<uid_t> LoopbackPeerUid(const std::string& peer, const std::string& server_ip,
                                      uint16_t server_port);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_LOOPBACK_PEER_H_
