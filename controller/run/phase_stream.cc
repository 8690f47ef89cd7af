#include "controller/run/phase_stream.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/errors.h"
#include "controller/run/agent_text.h"

namespace lockstep {

PhaseStream::PhaseStream(AgentClient* agent, v1::StartRequest request, RendezvousHub* hub,
                         size_t index,
                         std::function<void(const AgentClient*, int64_t sent_mono_ns)> answered)
    : agent_(agent),
      hub_(hub),
      index_(index),
      request_(std::move(request)),
      answered_(std::move(answered)) {
  sent_mono_ns_ = MonotonicNs();
  agent_->stub()->async()->Start(&ctx_, &request_, this);
  StartRead(&event_);
  StartCall();
}

void PhaseStream::OnReadDone(bool ok) {
  if (!ok) return;  // the stream ended: OnDone follows
  if (answered_ && !told_) {
    told_ = true;
    answered_(agent_, sent_mono_ns_);
  }
  if (event_.has_started()) {
    acked_mono_ns_.store(MonotonicNs(), std::memory_order_release);
    StartRead(&event_);
    return;
  }
  if (event_.has_rendezvous()) {
    if (hub_ != nullptr) hub_->Arrived(index_, event_.rendezvous());
    StartRead(&event_);
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    if (event_.has_result()) {
      result_ = std::move(*event_.mutable_result());
      EscapeAgentText(&result_);  // where agent text enters: controller/run/agent_text.h
      have_result_ = true;
    } else if (event_.has_progress()) {
      progress_ = event_.progress();
    }
  }
  StartRead(&event_);
}

void PhaseStream::OnDone(const grpc::Status& status) {
  if (hub_ != nullptr) hub_->Ended(index_);
  absl::MutexLock lock(&mu_);
  status_ = status;
  done_ = true;
}

bool PhaseStream::WaitDone(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&done_), timeout);
  return done_;
}

v1::Progress PhaseStream::LatestProgress() {
  absl::MutexLock lock(&mu_);
  return progress_;
}

absl::StatusOr<v1::PhaseResult> PhaseStream::Result() {
  absl::MutexLock lock(&mu_);
  if (have_result_) return result_;
  if (!status_.ok()) return FromGrpcStatus(status_, agent_->address());
  return absl::UnavailableError(
      absl::StrFormat("agent %s: the phase stream ended without a result", agent_->address()));
}

}  // namespace lockstep
