// Who holds a TCP port: the listening sockets on a port and the processes
// that own them, read from /proc. The agent uses it to say why it cannot
// listen (it turns SO_REUSEPORT off, so a second agent on a taken port fails
// to bind instead of silently sharing the port's connections).
#ifndef LOCKSTEP_AGENT_PORT_HOLDER_H_
#define LOCKSTEP_AGENT_PORT_HOLDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace lockstep {

// One TCP socket in LISTEN state.
struct PortHolder {
  std::string local_address;   // "127.0.0.1:7070", "[::]:7070"
  uint64_t inode = 0;          // the socket's inode (socket:[inode] in /proc/PID/fd)
  int pid = 0;                 // 0: no process this user may inspect owns it
  std::string command_line;    // the owner's argv joined by spaces; empty when pid == 0
};

// The listening TCP sockets (IPv4 and IPv6) on `port` in this process's
// network namespace, read from PROC/net/tcp and PROC/net/tcp6, each with the
// process owning it, found by scanning PROC/*/fd for "socket:[inode]". Only
// the first process found is named when several share a socket (a forked
// child). Processes of other users are invisible without root: their sockets
// come back with pid 0. An empty vector: nothing listens on the port.
// InvalidArgument for a port outside 1..65535; NotFound names the file when
// neither PROC/net/tcp nor PROC/net/tcp6 can be read. `proc` is "/proc"
// outside tests.
absl::StatusOr<std::vector<PortHolder>> FindPortHolders(int port,
                                                        const std::string& proc = "/proc");

// The error the agent prints when it cannot listen on `listen` (HOST:PORT):
// which sockets hold `port` and their pid and command line, or, when the
// holder cannot be told, that it cannot, and the `ss -ltnp` command that
// tells (as root). Names `listen` and the port in every case. For port 0
// (any free port) the host part is what is wrong, and it says so.
std::string DescribeListenFailure(const std::string& listen, int port,
                                  const std::string& proc = "/proc");

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_PORT_HOLDER_H_
