// The cross-agent rendezvous of one phase attempt (PhaseSpec.
// sync_across_agents): IOR -g barriers and the stonewall wear-out agreement
// over the tasks of every client agent. Each agent's PhaseStream reports its
// v1::Rendezvous here; once every agent of the attempt arrived at round
// `seq`, the hub sends Release(seq, largest value) to all of them at once.
//
// Owns: the rounds' state and the Release calls in flight.
// Threads: Arrived and Ended come from gRPC's callback threads (PhaseStream
// calls them), Broken and Rounds from the coordinator's thread. The
// destructor waits for the Release calls in flight (each has a deadline).
#ifndef LOCKSTEP_CONTROLLER_RUN_RENDEZVOUS_H_
#define LOCKSTEP_CONTROLLER_RUN_RENDEZVOUS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "controller/run/agent_client.h"
#include "lockstep/v1/agent.pb.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

class RendezvousHub {
 public:
  // `agents`: the attempt's clients in stream order; `offsets_ns`: each one's
  // clock offset (agent clock = ours + offset), for the rounds' record.
  RendezvousHub(std::vector<AgentClient*> agents, std::vector<int64_t> offsets_ns,
                std::string phase_id);
  ~RendezvousHub();

  RendezvousHub(const RendezvousHub&) = delete;
  RendezvousHub& operator=(const RendezvousHub&) = delete;

  // Agent `index` reached round r.seq(); the last arrival releases everyone.
  void Arrived(size_t index, const v1::Rendezvous& r);
  // Agent `index`'s stream ended (result or error).
  void Ended(size_t index);

  // Why the phase cannot go on, or "": an agent ended while others wait at a
  // round it never reached (its own failure stopped it), a Release failed, or
  // an agent arrived out of order.
  std::string Broken() const;

  // The rounds that ended, in order, in the controller's clock.
  std::vector<v1::RendezvousRound> Rounds() const;

 private:
  struct Call;
  void CallDone(Call* call, const grpc::Status& status);
  // Marks the hub broken when agent `index` ended before the round others wait at.
  void NoteEndedBeforeRound(size_t index) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::vector<AgentClient*> agents_;
  const std::vector<int64_t> offsets_ns_;
  const std::string phase_id_;

  mutable absl::Mutex mu_;
  uint32_t round_ ABSL_GUARDED_BY(mu_) = 0;         // the round in progress
  std::vector<uint32_t> reached_ ABSL_GUARDED_BY(mu_);  // per agent: rounds arrived at
  std::vector<bool> ended_ ABSL_GUARDED_BY(mu_);
  uint32_t arrived_ ABSL_GUARDED_BY(mu_) = 0;        // agents at round_
  v1::RendezvousRound current_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::RendezvousRound> rounds_ ABSL_GUARDED_BY(mu_);
  std::string broken_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Call>> calls_ ABSL_GUARDED_BY(mu_);
  size_t calls_in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_RENDEZVOUS_H_
