#include "agent/phase_telemetry.h"

#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/status_macros.h"

namespace lockstep {

PhaseTelemetry::PhaseTelemetry(TelemetrySampler* sampler, CephDaemons* daemons)
    : sampler_(sampler), daemons_(daemons) {}

void PhaseTelemetry::Prime() {
  if (sampler_ != nullptr) sampler_->Prime();
}

PhaseRunner::EventSink PhaseTelemetry::WrapSink(PhaseRunner::EventSink sink) {
  if (sampler_ == nullptr) return sink;
  // Its first sample is Prepare's or the cache barrier's: none is read here.
  const uint64_t window = sampler_->BeginWindow(kPrimedMaxAge);
  return [sampler = sampler_, window, inner = std::move(sink)](const v1::PhaseEvent& event) {
    if (!event.has_result()) return inner(event);
    v1::PhaseEvent with = event;
    auto summary = sampler->EndWindow(window);
    if (summary.ok()) {
      *with.mutable_result()->mutable_telemetry() = std::move(*summary);
    } else {
      with.mutable_result()->mutable_telemetry()->add_warnings(
          std::string(summary.status().message()));
    }
    inner(with);
  };
}

absl::StatusOr<v1::TelemetryReply> PhaseTelemetry::Window(const v1::TelemetryRequest& request) {
  v1::TelemetryReply reply;
  if (sampler_ == nullptr && daemons_->empty()) {
    if (request.end()) reply.mutable_telemetry()->add_warnings("telemetry is off on this agent");
    return reply;
  }
  if (!request.end()) {
    // The daemons' counters are read outside mu_ (admin-socket calls).
    Open open;
    if (sampler_ != nullptr) open.host = sampler_->BeginWindow(kPrimedMaxAge);
    if (!daemons_->empty()) open.daemons = daemons_->BeginWindow();
    absl::MutexLock lock(&mu_);
    windows_[request.phase_id()] = open;
    return reply;
  }
  Open open;
  {
    absl::MutexLock lock(&mu_);
    auto it = windows_.find(request.phase_id());
    if (it == windows_.end()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "no telemetry window is open for phase %s; open it first", request.phase_id()));
    }
    open = it->second;
    windows_.erase(it);
  }
  if (sampler_ != nullptr) {
    ASSIGN_OR_RETURN(*reply.mutable_telemetry(), sampler_->EndWindow(open.host));
  }
  if (open.daemons != 0) {
    for (v1::DaemonStats& d : daemons_->EndWindow(open.daemons)) {
      if (!d.warning().empty()) reply.mutable_telemetry()->add_warnings(d.warning());
      *reply.mutable_telemetry()->add_daemons() = std::move(d);
    }
  }
  return reply;
}

void PhaseTelemetry::Clear() {
  absl::MutexLock lock(&mu_);
  windows_.clear();
}

}  // namespace lockstep
