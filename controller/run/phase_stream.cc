#include "controller/run/phase_stream.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/errors.h"

namespace lockstep {

PhaseStream::PhaseStream(AgentClient *agent, size_t index, AnsweredFn answered)
    : agent_(agent), index_(index), answered_(std::move(answered)) {}

void PhaseStream::Event(const v1::PhaseEvent &event) {
  if (answered_ && !told_start_) {
    told_start_ = true;
    answered_(agent_, start_sent_mono_ns_.load());
  }
  if (event.has_rendezvous()) {
    if (RendezvousHub *hub = hub_.load()) hub->Arrived(index_, event.rendezvous());
    return;
  }
  absl::MutexLock lock(&mu_);
  if (event.has_result()) {
    result_ = event.result();
    have_result_ = true;
  } else if (event.has_progress()) {
    progress_ = event.progress();
  }
}

void PhaseStream::Ended(const grpc::Status &status) {
  if (RendezvousHub *hub = hub_.load()) hub->Ended(index_);
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

// StartStream.

StartStream::StartStream(AgentClient *agent, v1::StartRequest request, RendezvousHub *hub,
                         size_t index, AnsweredFn answered)
    : PhaseStream(agent, index, std::move(answered)), request_(std::move(request)) {
  start_at_unix_ns_ = request_.start_at_unix_ns();
  hub_.store(hub);
  start_sent_mono_ns_.store(MonotonicNs());
  agent_->stub()->async()->Start(&ctx_, &request_, this);
  StartRead(&event_);
  StartCall();
}

StartStream::~StartStream() {
  Cancel();
  WaitDone(absl::InfiniteDuration());
}

void StartStream::OnReadDone(bool ok) {
  if (!ok) return;  // the stream ended: OnDone follows
  Event(event_);
  StartRead(&event_);
}

void StartStream::OnDone(const grpc::Status &status) { Ended(status); }

// PhaseCall.

PhaseCall::PhaseCall(AgentClient *agent, v1::PrepareRequest prepare, size_t index,
                     AnsweredFn answered)
    : PhaseStream(agent, index, std::move(answered)), prepare_sent_mono_ns_(MonotonicNs()) {
  *prepare_.mutable_prepare() = std::move(prepare);
  agent_->stub()->async()->Phase(&ctx_, this);
  AddHold();  // until the start is sent or the call given up: Release()
  StartWrite(&prepare_);
  StartRead(&event_);
  StartCall();
}

PhaseCall::~PhaseCall() {
  Cancel();
  WaitDone(absl::InfiniteDuration());
}

bool PhaseCall::WaitPrepared(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&settled_), timeout);
  return settled_;
}

absl::StatusOr<v1::PrepareReply> PhaseCall::Prepared() {
  {
    absl::MutexLock lock(&mu_);
    if (have_prepared_) return prepared_;
  }
  // The call ended without an answer: its status says why.
  Release();
  WaitDone(absl::InfiniteDuration());
  absl::MutexLock lock(&mu_);
  if (!status_.ok()) return FromGrpcStatus(status_, agent_->address());
  return absl::UnavailableError(absl::StrFormat(
      "agent %s: the Phase call ended without answering its Prepare", agent_->address()));
}

void PhaseCall::SendStart(v1::StartRequest request, RendezvousHub *hub) {
  start_at_unix_ns_ = request.start_at_unix_ns();
  *start_.mutable_start() = std::move(request);
  hub_.store(hub);
  start_sent_mono_ns_.store(MonotonicNs());
  bool write_now = false;
  {
    absl::MutexLock lock(&mu_);
    // One write at a time: the Prepare's may not have completed yet.
    if (prepare_written_) {
      write_now = true;
    } else {
      start_waiting_ = true;
    }
  }
  if (write_now) StartWriteLast(&start_, grpc::WriteOptions());
  Release();  // the start write, or the Prepare's, still holds the call
}

void PhaseCall::Cancel() {
  ctx_.TryCancel();
  Release();
}

void PhaseCall::Release() {
  {
    absl::MutexLock lock(&mu_);
    if (!held_) return;
    held_ = false;
  }
  RemoveHold();
}

void PhaseCall::OnWriteDone(bool ok) {
  bool write_start = false;
  {
    absl::MutexLock lock(&mu_);
    if (prepare_written_) return;  // the start's
    prepare_written_ = true;
    write_start = start_waiting_ && ok;
    start_waiting_ = false;
  }
  if (write_start) StartWriteLast(&start_, grpc::WriteOptions());
}

void PhaseCall::OnReadDone(bool ok) {
  if (!ok) {  // the stream ended: OnDone follows once the hold is gone
    absl::MutexLock lock(&mu_);
    settled_ = true;
    return;
  }
  if (event_.has_prepared()) {
    if (answered_) answered_(agent_, prepare_sent_mono_ns_);
    {
      absl::MutexLock lock(&mu_);
      prepared_ = std::move(*event_.mutable_prepared());
      have_prepared_ = true;
      settled_ = true;
    }
    StartRead(&event_);
    return;
  }
  Event(event_);
  StartRead(&event_);
}

void PhaseCall::OnDone(const grpc::Status &status) {
  {
    absl::MutexLock lock(&mu_);
    settled_ = true;
  }
  Ended(status);
}

}  // namespace lockstep
