// NET: the network between agents at one instant, the way lnet_selftest's
// brw test or iperf3 measures it, over the data network (an address of the
// agent's host, or of the interface PhaseSpec.net.interface names), never
// the gRPC control channel.
//
// An agent's tasks are senders, receivers or both (PhaseSpec.net:
// send_peers × streams_per_peer sending tasks first, then receive_streams
// receiving ones). A receiving agent's Prepare opens one listening socket on
// a free port for the phase only (PrepareReply.net_port); the controller
// hands the ports to the senders in StartRequest.peers (SetPeers). At the
// instant each sending task connects to its peer, proves the phase's token,
// sends message_bytes messages for duration_ms, ends with a mark the
// receiver answers with the bytes it counted (the two must be equal), then
// times ping_count round trips of ping_bytes on the quiet connection
// (TaskResult.latency) and reads TCP_INFO (retransmits, RTT, cwnd).
//
// The stream, in order (integers big-endian):
//   hello  "LSNT", u32 version 1, u32 rank, HMAC-SHA256(token, phase_id '\0' rank) (32 bytes)
//   frames u32 type, u32 0, u64 length, then `length` payload bytes:
//          DATA (counted), PING (the receiver echoes the frame back), END
//          (length 0: the receiver answers u64 bytes counted, and both close)
// Without an interface the port listens on every address of the host (IPv6
// and IPv4), as iperf3's does, from Prepare until the phase's tasks are done;
// only streams whose hello proves the token are measured. The receiving
// tasks share one acceptor (agent/workloads/net_acceptor.h) that reads each
// connection's hello without blocking: a connection whose hello does not
// verify, repeats a rank already seen in the phase, or is not complete
// within kNetHelloWindowNs of its accept is closed before any of its data
// is read, and no receiving task ever waits on a connection that has not
// proven itself. The token travels only over the control channel (mutual
// TLS), and never on the data stream.
#ifndef LOCKSTEP_AGENT_WORKLOADS_NET_H_
#define LOCKSTEP_AGENT_WORKLOADS_NET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/workloads/workload.h"

namespace lockstep {

std::unique_ptr<Workload> MakeNetWorkload(const v1::PhaseSpec& spec,
                                          const WorkloadOptions& options);

// The 32-byte proof a stream of task `rank` sends: HMAC-SHA256(token,
// phase_id '\0' rank as 4 big-endian bytes).
std::string NetStreamProof(const std::string& token, const std::string& phase_id, uint32_t rank);

// The IPv4 address of this host's interface `name`; NotFound naming the
// interface, this host and the interfaces it has (getifaddrs) otherwise.
absl::StatusOr<std::string> InterfaceAddress(const std::string& name);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_NET_H_
