// One agent's Start call for one phase: a gRPC callback reactor that reads
// the agent's progress events until its PhaseResult and the end of the call.
//
// Owns: the call (its ClientContext and request), the latest progress event,
// and the result or the call's final status.
// Threads: the coordinator's thread constructs it, waits on it, reads it and
// destroys it; gRPC's callback threads run OnReadDone and OnDone.
// Lifetime: destroy only after WaitDone returned true (gRPC calls OnDone
// last); Cancel first to end a call early.
#ifndef LOCKSTEP_CONTROLLER_RUN_PHASE_STREAM_H_
#define LOCKSTEP_CONTROLLER_RUN_PHASE_STREAM_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "controller/run/agent_client.h"
#include "controller/run/rendezvous.h"
#include "lockstep/v1/agent.grpc.pb.h"

namespace lockstep {

class PhaseStream : public grpc::ClientReadReactor<v1::PhaseEvent> {
 public:
  // Starts the call on `agent` (which must outlive this) at once. With a
  // `hub` (a phase that synchronises across agents; must outlive this), the
  // agent's rendezvous events and the end of the call go to it as agent
  // `index`. `answered`, if set (for agents that renew their lease on Start:
  // common/wire_version.h minor 5), is told once, on a gRPC thread, when the
  // first event arrives, with the instant the call was started (the agent
  // renewed its lease between the two): CallWatch::answered.
  PhaseStream(AgentClient* agent, v1::StartRequest request, RendezvousHub* hub = nullptr,
              size_t index = 0,
              std::function<void(const AgentClient*, int64_t sent_mono_ns)> answered = nullptr);

  PhaseStream(const PhaseStream&) = delete;
  PhaseStream& operator=(const PhaseStream&) = delete;

  AgentClient* agent() const { return agent_; }
  const v1::StartRequest& request() const { return request_; }

  // Whether the call has ended, waiting up to `timeout` for it.
  bool WaitDone(absl::Duration timeout);

  // Asks gRPC to end the call; it ends soon with CANCELLED unless it had
  // ended already. WaitDone still tells when.
  void Cancel() { ctx_.TryCancel(); }

  // The agent's latest progress event; empty before the first.
  v1::Progress LatestProgress();

  // When (controller's monotonic clock) the agent's StartAck arrived; 0
  // before it (and always for agents before wire minor 7). Any thread.
  int64_t acked_mono_ns() const { return acked_mono_ns_.load(std::memory_order_acquire); }

  // REQUIRES: WaitDone returned true.
  // The agent's PhaseResult (which may itself say the phase failed); else
  // the call's status, prefixed with the agent's address and keeping its
  // ErrorKind; Unavailable if the call ended OK without a result.
  absl::StatusOr<v1::PhaseResult> Result();

  // grpc::ClientReadReactor, on gRPC's threads.
  void OnReadDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  AgentClient* const agent_;
  RendezvousHub* const hub_;
  const size_t index_;
  grpc::ClientContext ctx_;
  const v1::StartRequest request_;
  const std::function<void(const AgentClient*, int64_t)> answered_;
  int64_t sent_mono_ns_ = 0;  // set before the call starts
  std::atomic<int64_t> acked_mono_ns_{0};
  v1::PhaseEvent event_;  // the read in flight; only gRPC's threads touch it
  bool told_ = false;     // answered_ called; only gRPC's threads touch it (reads are serial)

  absl::Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  bool have_result_ ABSL_GUARDED_BY(mu_) = false;
  v1::PhaseResult result_ ABSL_GUARDED_BY(mu_);
  v1::Progress progress_ ABSL_GUARDED_BY(mu_);
  grpc::Status status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_PHASE_STREAM_H_
