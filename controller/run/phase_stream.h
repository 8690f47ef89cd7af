// One agent's call for one phase, as the coordinator reads it: the agent's
// events until its PhaseResult and the end of the call. Two kinds:
//   StartStream  the Start call (agents before wire minor 6): begins with
//                the StartRequest.
//   PhaseCall    the Phase call (wire minor 6): begins with the Prepare,
//                whose reply is its first event; the StartRequest follows
//                as a message on the same call, so that the start instant
//                reaches every agent without a new call.
//
// Owns: the call (its ClientContext and requests), the latest progress
// event, and the result or the call's final status.
// Threads: the coordinator's thread constructs it, waits on it, reads it and
// destroys it; gRPC's callback threads run the reactions.
// Lifetime: the destructor cancels the call if it still runs and waits for
// its end (gRPC calls OnDone last).
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

// `answered(agent, sent_mono_ns)`: CallWatch::answered, told on a gRPC
// thread when an agent that renews its lease on the call's requests
// answered one (common/wire_version.h minors 4 and 5).
using AnsweredFn = std::function<void(const AgentClient *, int64_t sent_mono_ns)>;

class PhaseStream {
 public:
  PhaseStream(const PhaseStream &) = delete;
  PhaseStream &operator=(const PhaseStream &) = delete;
  virtual ~PhaseStream() = default;

  AgentClient *agent() const { return agent_; }
  // The StartRequest's instant (agent clock); 0 before it was sent.
  int64_t start_at_unix_ns() const { return start_at_unix_ns_; }

  // Whether the call has ended, waiting up to `timeout` for it.
  bool WaitDone(absl::Duration timeout);

  // Asks gRPC to end the call; it ends soon with CANCELLED unless it had
  // ended already. WaitDone still tells when.
  virtual void Cancel() { ctx_.TryCancel(); }

  // The agent's latest progress event; empty before the first.
  v1::Progress LatestProgress();

  // REQUIRES: WaitDone returned true.
  // The agent's PhaseResult (which may itself say the phase failed); else
  // the call's status, prefixed with the agent's address and keeping its
  // ErrorKind; Unavailable if the call ended OK without a result.
  absl::StatusOr<v1::PhaseResult> Result();

 protected:
  PhaseStream(AgentClient *agent, size_t index, AnsweredFn answered);

  // From the reactions. Event: a progress, result or rendezvous event after
  // the start (the first tells `answered`). Ended: the call's end.
  void Event(const v1::PhaseEvent &event);
  void Ended(const grpc::Status &status);

  AgentClient *const agent_;
  const size_t index_;
  const AnsweredFn answered_;
  grpc::ClientContext ctx_;
  int64_t start_at_unix_ns_ = 0;
  // Set before the start is sent (Start: before the call).
  std::atomic<int64_t> start_sent_mono_ns_{0};
  std::atomic<RendezvousHub *> hub_{nullptr};
  bool told_start_ = false;  // only the reactions touch it (reads are serial)

  absl::Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  bool have_result_ ABSL_GUARDED_BY(mu_) = false;
  v1::PhaseResult result_ ABSL_GUARDED_BY(mu_);
  v1::Progress progress_ ABSL_GUARDED_BY(mu_);
  grpc::Status status_ ABSL_GUARDED_BY(mu_);
};

class StartStream final : public PhaseStream, public grpc::ClientReadReactor<v1::PhaseEvent> {
 public:
  // Starts the call on `agent` (which must outlive this) at once. With a
  // `hub` (a phase that synchronises across agents; must outlive this), the
  // agent's rendezvous events and the end of the call go to it as agent
  // `index`.
  StartStream(AgentClient *agent, v1::StartRequest request, RendezvousHub *hub = nullptr,
              size_t index = 0, AnsweredFn answered = nullptr);
  ~StartStream() override;

  void OnReadDone(bool ok) override;
  void OnDone(const grpc::Status &status) override;

 private:
  const v1::StartRequest request_;
  v1::PhaseEvent event_;  // the read in flight; only gRPC's threads touch it
};

class PhaseCall final : public PhaseStream,
                        public grpc::ClientBidiReactor<v1::PhaseCommand, v1::PhaseEvent> {
 public:
  // Starts the call on `agent` (which must outlive this) with `prepare`.
  // `answered` is told of the Prepare's reply and of the first event after
  // the start.
  PhaseCall(AgentClient *agent, v1::PrepareRequest prepare, size_t index,
            AnsweredFn answered = nullptr);
  ~PhaseCall() override;

  // Whether the Prepare is settled (answered, or the call ended without an
  // answer), waiting up to `timeout`.
  bool WaitPrepared(absl::Duration timeout);
  // REQUIRES: WaitPrepared returned true.
  // The agent's PrepareReply, or the status the call ended with (as
  // Result()); waits for that end.
  absl::StatusOr<v1::PrepareReply> Prepared();

  // REQUIRES: Prepared() was OK. Sends the start on the call (the last
  // message); `hub` as for StartStream. Once only.
  void SendStart(v1::StartRequest request, RendezvousHub *hub = nullptr);

  void Cancel() override;

  void OnWriteDone(bool ok) override;
  void OnReadDone(bool ok) override;
  void OnDone(const grpc::Status &status) override;

 private:
  // Lets gRPC end the call (OnDone) once it is over: the hold kept it while
  // a start might still be sent.
  void Release() ABSL_LOCKS_EXCLUDED(mu_);

  v1::PhaseCommand prepare_;
  v1::PhaseCommand start_;
  const int64_t prepare_sent_mono_ns_;
  v1::PhaseEvent event_;  // the read in flight; only gRPC's threads touch it
  bool held_ ABSL_GUARDED_BY(mu_) = true;
  bool prepare_written_ ABSL_GUARDED_BY(mu_) = false;
  bool start_waiting_ ABSL_GUARDED_BY(mu_) = false;  // SendStart came before OnWriteDone
  bool settled_ ABSL_GUARDED_BY(mu_) = false;
  bool have_prepared_ ABSL_GUARDED_BY(mu_) = false;
  v1::PrepareReply prepared_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_PHASE_STREAM_H_
