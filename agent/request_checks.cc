#include "agent/request_checks.h"

#include <string>

#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "common/text_escape.h"

namespace lockstep {
namespace {

// `field` of `request` ("AttachRequest.run_id"): 1..max bytes (0..max when
// `may_be_empty`), no control characters.
absl::Status Text(const char* request, const char* field, const std::string& value,
                  size_t max_bytes, bool may_be_empty = false) {
  if (value.empty() && !may_be_empty) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.%s is empty; a controller always sends it", request, field));
  }
  if (value.size() > max_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s.%s is %u bytes long; at most %u are allowed", request, field, value.size(),
        max_bytes));
  }
  if (HasControlCharacters(value)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s.%s \"%s\" holds control characters; it must be printable text", request, field,
        EscapeForTerminal(value.substr(0, 80))));
  }
  return absl::OkStatus();
}

absl::Status Range(const char* request, const char* field, int64_t value, int64_t min,
                   int64_t max) {
  if (value < min || value > max) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s.%s = %d is outside %d..%d", request, field, value, min, max));
  }
  return absl::OkStatus();
}

absl::Status Session(const char* request, const std::string& session_id) {
  return Text(request, "session_id", session_id, kMaxSessionIdBytes);
}

absl::Status Phase(const char* request, const std::string& phase_id) {
  return Text(request, "phase_id", phase_id, kMaxPhaseIdBytes);
}

absl::Status Spec(const char* request, bool has_spec, const v1::PhaseSpec& spec) {
  if (!has_spec) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.spec is missing; it says which phase", request));
  }
  return Text(request, "spec.phase_id", spec.phase_id(), kMaxPhaseIdBytes);
}

}  // namespace

absl::Status CheckRequest(const v1::AttachRequest& r) {
  constexpr const char* kWhat = "AttachRequest";
  RETURN_IF_ERROR(Text(kWhat, "run_id", r.run_id(), kMaxRunIdBytes));
  RETURN_IF_ERROR(Text(kWhat, "controller", r.controller(), kMaxControllerBytes));
  if (r.wire_major() == 0 && r.controller_version().empty()) {
    return absl::InvalidArgumentError(
        "AttachRequest.wire_major and controller_version are empty: the controller says no "
        "version; use a `lockstep` of this release");
  }
  RETURN_IF_ERROR(Text(kWhat, "controller_version", r.controller_version(), 64,
                       /*may_be_empty=*/true));
  // 0: the agent's default lease.
  return Range(kWhat, "lease_ms", r.lease_ms(), 0, kMaxAgentLeaseMs);
}

absl::Status CheckRequest(const v1::HeartbeatRequest& r) {
  RETURN_IF_ERROR(Session("HeartbeatRequest", r.session_id()));
  return Range("HeartbeatRequest", "stall_ms", r.stall_ms(), 0, kMaxStallMs);
}

absl::Status CheckRequest(const v1::DetachRequest& r) {
  return Session("DetachRequest", r.session_id());
}

absl::Status CheckRequest(const v1::ClockRequest& r) {
  return Session("ClockRequest", r.session_id());
}

absl::Status CheckRequest(const v1::PrepareRequest& r) {
  RETURN_IF_ERROR(Session("PrepareRequest", r.session_id()));
  return Spec("PrepareRequest", r.has_spec(), r.spec());
}

absl::Status CheckRequest(const v1::CacheRequest& r) {
  RETURN_IF_ERROR(Session("CacheRequest", r.session_id()));
  return Phase("CacheRequest", r.phase_id());
}

absl::Status CheckRequest(const v1::StartRequest& r) {
  constexpr const char* kWhat = "StartRequest";
  RETURN_IF_ERROR(Session(kWhat, r.session_id()));
  RETURN_IF_ERROR(Phase(kWhat, r.phase_id()));
  RETURN_IF_ERROR(Range(kWhat, "start_at_unix_ns", r.start_at_unix_ns(), 1, INT64_MAX));
  RETURN_IF_ERROR(Range(kWhat, "progress_interval_ms", r.progress_interval_ms(), 0,
                        kMaxProgressIntervalMs));
  RETURN_IF_ERROR(Range(kWhat, "spin_duration_ns", r.spin_duration_ns(), 0, kMaxSpinNs));
  RETURN_IF_ERROR(Range(kWhat, "host_agents", r.host_agents(), 0, 1'000'000));
  return Range(kWhat, "first_transfer_after_ns", r.first_transfer_after_ns(), 0, kMaxSpinNs);
}

absl::Status CheckRequest(const v1::AbortRequest& r) {
  RETURN_IF_ERROR(Session("AbortRequest", r.session_id()));
  // An empty phase_id aborts whatever runs (the controller's interrupt).
  RETURN_IF_ERROR(Text("AbortRequest", "phase_id", r.phase_id(), kMaxPhaseIdBytes, true));
  return Text("AbortRequest", "reason", r.reason(), kMaxReasonBytes, true);
}

absl::Status CheckRequest(const v1::ReleaseRequest& r) {
  RETURN_IF_ERROR(Session("ReleaseRequest", r.session_id()));
  return Phase("ReleaseRequest", r.phase_id());
}

absl::Status CheckRequest(const v1::TelemetryRequest& r) {
  RETURN_IF_ERROR(Session("TelemetryRequest", r.session_id()));
  return Phase("TelemetryRequest", r.phase_id());
}

absl::Status CheckRequest(const v1::CleanupRequest& r) {
  RETURN_IF_ERROR(Session("CleanupRequest", r.session_id()));
  return Spec("CleanupRequest", r.has_spec(), r.spec());
}

}  // namespace lockstep
