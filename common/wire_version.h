// The wire protocol's version, and the rule for who can work with whom.
//
// Attach carries it both ways: the controller sends its major, minor and
// release in AttachRequest; the agent answers with HostFacts.wire_version
// (the major), wire_minor and agent_version, which run.json keeps per agent.
//
// The rule: a controller and an agent work together when their wire majors
// are equal. Within a major, a minor only adds fields and calls that the
// other side ignores (proto3), so every minor works with every other minor
// of its major. A breaking change is a new major and a new proto package
// (lockstep.v2). Both sides check: the agent refuses an Attach of another
// major, and the controller refuses an agent that answered with another
// major (an agent older than the check attaches anyone).
#ifndef LOCKSTEP_COMMON_WIRE_VERSION_H_
#define LOCKSTEP_COMMON_WIRE_VERSION_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace lockstep {

inline constexpr uint32_t kWireMajor = 1;
// 0: before Attach carried versions; 1: it does (issue 12); 2: Release,
// PhaseEvent.rendezvous, FIND, mdtest stonewall (issue 13); 3: COMMAND and
// SEEKS kinds, per-process CPU telemetry, HostFacts.allowed_commands (issue 14);
// 4: Prepare, CacheBarrier, Telemetry and Cleanup renew the lease as a
// Heartbeat does, so a controller skips heartbeats to an agent that just
// answered one of them; StartRequest.host_agents (issue 12); 5: Start renews
// the lease too, when it reaches the agent; 6: TRAIN, DATAGEN and CHECKPOINT
// kinds, their PhaseSpec and TaskResult fields (issue 30); 7: the agent
// acknowledges a Start as soon as its tasks wait for the instant
// (PhaseEvent.started), so the controller can say before the instant which
// clients will be late (issue 31); 8: TaskResult.file_size_bytes, the size of
// each task's file after a transfer phase, for IOR's file-size warnings
// (issue 28); 9: HostFacts.cpu_model, nics, block_devices and
// RootFacts.fs_name, fs_version, for the system description of a run
// (issue 40); 10: RootFacts.capabilities, what a root's file system can do
// (layouts, checksums, shared), from the agent's fs/ layer (issue 41), and
// HostFacts.thread_limit, thread_limit_name, threads_in_use (issue 43); 11:
// NET and BACKEND kinds, PhaseSpec.net/backend, PrepareReply.net_port,
// StartRequest.peers, TaskResult.net/backend (issue 42).
inline constexpr uint32_t kWireMinor = 11;
// The first minor whose agents run NET and BACKEND phases.
inline constexpr uint32_t kLayersWireMinor = 11;
// The first minor whose agents renew their lease on those calls.
inline constexpr uint32_t kRenewingCallsWireMinor = 4;
// The first minor whose agents renew it on Start.
inline constexpr uint32_t kStartRenewsWireMinor = 5;
// The first minor whose agents send PhaseEvent.started.
inline constexpr uint32_t kStartAckWireMinor = 7;

struct WireVersion {
  uint32_t major = 0;  // 0: a peer from before Attach carried versions (lockstep.v1: 1)
  uint32_t minor = 0;
  std::string release;  // "0.1.0"; "" when the peer did not say
};

// This binary's.
WireVersion OwnWireVersion();

// OK when `controller` and `agent` can work together (same major, a major of
// 0 counting as 1). Otherwise FailedPrecondition with kind VERSION_MISMATCH:
// "controller lockstep 2.0.0 (wire protocol 2.0) and agent lockstep 0.1.0
// (wire protocol 1.1) on n01:7070 cannot work together ...; upgrade the agent
// on n01:7070 to a release that speaks wire protocol 2". `agent_where` names
// the agent (its address or host).
absl::Status CheckWireVersions(const WireVersion& controller, const WireVersion& agent,
                               const std::string& agent_where);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_WIRE_VERSION_H_
