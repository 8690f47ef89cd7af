// The NET workload's streams (agent/workloads/net.h): the wire format's
// constants and frame headers, and the socket calls of one stream, each
// bounded by the phase's abort flag and a deadline.
//
// A stream's socket, once connected or accepted, is made blocking with
// send and receive timeouts (BlockWithTimeouts) of 200 ms: SendAll, SendBytes
// and RecvAll then look at the task's abort flag and their deadline between
// calls, and return false with errno ECANCELED (the phase stopped) or
// ETIMEDOUT (the deadline passed), or the call's own errno; RecvAll sets
// errno 0 when the other end closed first. NetErrnoText words each of these
// for a task's failure. `task` may be null (no abort flag to look at).
// Nothing here keeps state: the calls on one descriptor are its owner's.
#ifndef LOCKSTEP_AGENT_WORKLOADS_NET_STREAMS_H_
#define LOCKSTEP_AGENT_WORKLOADS_NET_STREAMS_H_

#include <sys/socket.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "agent/workloads/workload.h"
#include "common/unique_fd.h"

namespace lockstep {

// The hello: "LSNT", u32 version, u32 rank, the 32-byte proof (NetStreamProof).
inline constexpr char kNetHelloMagic[4] = {'L', 'S', 'N', 'T'};
inline constexpr uint32_t kNetProtocolVersion = 1;
inline constexpr size_t kNetProofBytes = 32;
inline constexpr size_t kNetHelloBytes = 4 + 4 + 4 + kNetProofBytes;
// A frame: u32 type, u32 0, u64 length (big-endian), then the payload.
inline constexpr uint32_t kNetData = 1, kNetPing = 2, kNetEnd = 3;
inline constexpr size_t kNetFrameHeaderBytes = 16;

struct NetFrameHeader {
  uint32_t type = 0;
  uint64_t length = 0;
};

void EncodeNetFrameHeader(uint32_t type, uint64_t length,
                          unsigned char out[kNetFrameHeaderBytes]);
NetFrameHeader DecodeNetFrameHeader(const unsigned char in[kNetFrameHeaderBytes]);

// Waits until `fd` is ready for `events` (poll), looking at the abort flag
// every 200 ms; false (errno ETIMEDOUT or ECANCELED) past `deadline_mono_ns`
// or on abort.
bool WaitReady(int fd, short events, const TaskContext* task, int64_t deadline_mono_ns);

// Makes a connected stream's calls block, each for 200 ms at most: one send
// or receive per message where a non-blocking socket would add a poll and a
// short count.
void BlockWithTimeouts(int fd);

// All of iov (a header and a payload) or false with errno.
bool SendAll(int fd, iovec* iov, int count, const TaskContext* task, int64_t deadline_mono_ns);
bool SendBytes(int fd, const void* data, size_t n, const TaskContext* task,
               int64_t deadline_mono_ns);
// Exactly n bytes, or false: errno set, or 0 when the other end closed first.
bool RecvAll(int fd, void* data, size_t n, const TaskContext* task, int64_t deadline_mono_ns);

// errno as a failure's words: "the other end closed the connection" (0),
// "the phase stopped" (ECANCELED), else strerror and the number.
std::string NetErrnoText(int err);

// "host:port" ("[v6]:port"), numeric; an IPv4 peer of a dual-stack socket
// as IPv4; "?" when getnameinfo fails.
std::string NetEndpoint(sockaddr_storage a);

// A listening socket for the phase's streams, non-blocking, on a free port
// (*port) of `interface_address`, or of every address (IPv6 and IPv4; IPv4
// only on a host without IPv6) when it is "". Internal naming the call and
// the errno otherwise.
absl::StatusOr<UniqueFd> ListenForNetStreams(const std::string& interface_address, int backlog,
                                             uint32_t* port);

// The connection's TCP_INFO into `r`: retransmits, RTT and its variance,
// the congestion window. Nothing when getsockopt fails.
void ReadTcpInfo(int fd, v1::NetResult* r);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_NET_STREAMS_H_
