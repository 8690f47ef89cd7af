// The checks every RPC's request passes before the agent acts on it: empty
// or absurd fields are refused with InvalidArgument naming the field, its
// value (cut short) and the bound, so that no hand-written client can hold
// the agent with an empty Attach or steer it with an absurd number. What a
// phase may do (tasks, sizes, paths) is the preparer's check (limits.h,
// roots.h); these are the request's shape. One overload per request type.
#ifndef LOCKSTEP_AGENT_REQUEST_CHECKS_H_
#define LOCKSTEP_AGENT_REQUEST_CHECKS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// The longest lease an Attach may ask for (0: the agent's default): the
// plan's bound (controller/plan/limits.h kMaxLeaseMs), checked again here.
inline constexpr uint32_t kMaxAgentLeaseMs = 600'000;
// Bounds of the identifiers and free texts of requests.
inline constexpr size_t kMaxRunIdBytes = 256;
inline constexpr size_t kMaxControllerBytes = 512;
inline constexpr size_t kMaxSessionIdBytes = 128;
inline constexpr size_t kMaxPhaseIdBytes = 1024;
inline constexpr size_t kMaxReasonBytes = 4096;
// Start: how far the spin and the first-transfer delay may reach, and the
// longest progress interval.
inline constexpr int64_t kMaxSpinNs = int64_t{60} * 1'000'000'000;
inline constexpr uint32_t kMaxProgressIntervalMs = 3'600'000;
inline constexpr uint32_t kMaxStallMs = 86'400'000;

absl::Status CheckRequest(const v1::AttachRequest& r);
absl::Status CheckRequest(const v1::HeartbeatRequest& r);
absl::Status CheckRequest(const v1::DetachRequest& r);
absl::Status CheckRequest(const v1::ClockRequest& r);
absl::Status CheckRequest(const v1::PrepareRequest& r);
absl::Status CheckRequest(const v1::CacheRequest& r);
absl::Status CheckRequest(const v1::StartRequest& r);
absl::Status CheckRequest(const v1::AbortRequest& r);
absl::Status CheckRequest(const v1::ReleaseRequest& r);
absl::Status CheckRequest(const v1::TelemetryRequest& r);
absl::Status CheckRequest(const v1::CleanupRequest& r);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_REQUEST_CHECKS_H_
