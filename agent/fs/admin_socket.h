// A Ceph daemon's admin socket (the Unix socket `ceph daemon NAME ...` and
// `ceph --admin-daemon PATH ...` talk to), spoken directly: the command as
// JSON followed by a NUL byte, the answer as a 4-byte big-endian length and
// that many bytes. Direct, because the `ceph` CLI is a Python program that
// takes hundreds of milliseconds of CPU to start, once per sample per daemon.
//
//   ASSIGN_OR_RETURN(std::string json,
//                    AdminSocketCommand("/var/run/ceph/ceph-osd.0.asok",
//                                       R"({"prefix": "perf dump"})", absl::Seconds(5)));
#ifndef LOCKSTEP_AGENT_FS_ADMIN_SOCKET_H_
#define LOCKSTEP_AGENT_FS_ADMIN_SOCKET_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace lockstep {

// Sends `command_json` and returns the daemon's answer (JSON for the
// commands used here). Errors name the socket:
//   Unavailable        no socket file, or nobody listens (the daemon is not running)
//   DeadlineExceeded   no whole answer within `timeout` (a hung daemon)
//   Internal           a short or oversized answer, a failed read or write
absl::StatusOr<std::string> AdminSocketCommand(const std::string& socket_path,
                                               const std::string& command_json,
                                               absl::Duration timeout);

// "osd.0" with pattern "/var/run/ceph/$cluster-$name.asok" and cluster
// "ceph" -> "/var/run/ceph/ceph-osd.0.asok" (Ceph's metavariables $name,
// $cluster, $type "osd", $id "0").
std::string AdminSocketPath(const std::string& pattern, const std::string& cluster,
                            const std::string& daemon);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_FS_ADMIN_SOCKET_H_
