// Plain TCP connections to agents that did not connect, to tell "nothing
// listens or answers there" apart from "something listens but the gRPC/TLS
// handshake fails" (AgentClient::ExplainNotConnected).
#ifndef LOCKSTEP_CONTROLLER_RUN_TCP_PROBE_H_
#define LOCKSTEP_CONTROLLER_RUN_TCP_PROBE_H_

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace lockstep {

// How long a probe waits for an answer.
inline constexpr absl::Duration kTcpProbeTimeout = absl::Seconds(1);
// Sockets connecting at once; more addresses wait for a free one.
inline constexpr size_t kMaxTcpProbesAtOnce = 1024;

// For each address (HOST:PORT), in order: empty when a TCP connection to it
// was accepted within `timeout`, else why not ("Connection refused",
// "Connection timed out", "cannot resolve HOST: ..."). A host's resolved
// addresses are tried in turn within its `timeout`. All addresses are
// resolved (by a bounded pool) and then tried together, so that N silent
// hosts cost about `timeout` for each kMaxTcpProbesAtOnce of them, not N
// waits. When this process runs out of descriptors, the addresses left
// wait for the sockets in flight to finish. Once `*interrupted` is set
// (looked at every 50 ms), what is not settled yet says "interrupted".
std::vector<std::string> TcpProbe(const std::vector<std::string>& addresses,
                                  absl::Duration timeout = kTcpProbeTimeout,
                                  const std::atomic<bool>* interrupted = nullptr);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_TCP_PROBE_H_
