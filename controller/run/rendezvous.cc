#include "controller/run/rendezvous.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/errors.h"

namespace lockstep {

struct RendezvousHub::Call {
  grpc::ClientContext ctx;
  v1::ReleaseRequest request;
  v1::ReleaseReply reply;
  AgentClient* agent = nullptr;
};

RendezvousHub::RendezvousHub(std::vector<AgentClient*> agents, std::vector<int64_t> offsets_ns,
                             std::string phase_id)
    : agents_(std::move(agents)),
      offsets_ns_(std::move(offsets_ns)),
      phase_id_(std::move(phase_id)),
      reached_(agents_.size(), 0),
      ended_(agents_.size(), false) {}

RendezvousHub::~RendezvousHub() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](size_t* n) { return *n == 0; }, &calls_in_flight_));
}

void RendezvousHub::Arrived(size_t index, const v1::Rendezvous& r) {
  std::vector<Call*> to_send;
  {
    absl::MutexLock lock(&mu_);
    if (index >= agents_.size()) return;
    if (r.seq() != round_ || reached_[index] != round_) {
      if (broken_.empty()) {
        broken_ = absl::StrFormat(
            "agent %s arrived at rendezvous %u of %s while the others are at %u",
            agents_[index]->address(), r.seq(), phase_id_, round_);
      }
      return;
    }
    ++reached_[index];
    const int64_t at_unix_ns = r.arrived_unix_ns() - offsets_ns_[index];
    if (arrived_ == 0) {
      current_ = v1::RendezvousRound();
      current_.set_seq(round_);
      current_.set_first_arrived_unix_ns(at_unix_ns);
    }
    current_.set_first_arrived_unix_ns(std::min(current_.first_arrived_unix_ns(), at_unix_ns));
    current_.set_last_arrived_unix_ns(std::max(current_.last_arrived_unix_ns(), at_unix_ns));
    current_.set_value(std::max(current_.value(), r.value()));
    ++arrived_;
    for (size_t i = 0; i < agents_.size(); ++i) NoteEndedBeforeRound(i);
    if (arrived_ < agents_.size()) return;
    current_.set_released_unix_ns(RealtimeNs());
    rounds_.push_back(current_);
    for (AgentClient* a : agents_) {
      auto call = std::make_unique<Call>();
      call->agent = a;
      call->request.set_session_id(a->session_id);
      call->request.set_phase_id(phase_id_);
      call->request.set_seq(round_);
      call->request.set_value(current_.value());
      call->ctx.set_deadline(std::chrono::system_clock::now() +
                             absl::ToChronoNanoseconds(kRpcTimeout));
      to_send.push_back(call.get());
      calls_.push_back(std::move(call));
    }
    calls_in_flight_ += to_send.size();
    arrived_ = 0;
    ++round_;
  }
  // Outside mu_: a callback may run before Release returns.
  for (Call* call : to_send) {
    call->agent->stub()->async()->Release(&call->ctx, &call->request, &call->reply,
                                          [this, call](grpc::Status s) { CallDone(call, s); });
  }
}

void RendezvousHub::CallDone(Call* call, const grpc::Status& status) {
  absl::MutexLock lock(&mu_);
  if (!status.ok() && broken_.empty()) {
    broken_ = absl::StrFormat("release of rendezvous %u of %s on agent %s failed: %s",
                              call->request.seq(), phase_id_, call->agent->address(),
                              status.error_message());
  }
  --calls_in_flight_;
}

void RendezvousHub::Ended(size_t index) {
  absl::MutexLock lock(&mu_);
  if (index >= agents_.size()) return;
  ended_[index] = true;
  NoteEndedBeforeRound(index);
}

void RendezvousHub::NoteEndedBeforeRound(size_t index) {
  // Only a round someone waits at can be stranded.
  if (!broken_.empty() || !ended_[index] || arrived_ == 0 || reached_[index] > round_) return;
  broken_ = absl::StrFormat("agent %s ended %s before rendezvous %u that the others reached",
                            agents_[index]->address(), phase_id_, round_);
}

std::string RendezvousHub::Broken() const {
  absl::MutexLock lock(&mu_);
  return broken_;
}

std::vector<v1::RendezvousRound> RendezvousHub::Rounds() const {
  absl::MutexLock lock(&mu_);
  return rounds_;
}

}  // namespace lockstep
