// One attempt at one phase on the run's agents, the protocol's steps in order:
//   1. Prepare on every client at once: files laid out, one parked thread
//      per task (IOR's barrier before open).
//   2. Cache barrier: sync clients, then servers, then drop caches.
//   3. A telemetry window opens on the servers.
//   4. Start: one instant for all, far enough ahead for the slowest agent to
//      hear of it (BarrierLead); one PhaseStream per client.
//   5. Await every result, watching leases, stalls and interrupts, with the
//      progress line meanwhile; the servers' window closes.
//   6. Collect each agent's answer into the PhaseRecord, in our clock.
//   7. Reduce: IOR's rows, start skew and its error bound, latency,
//      telemetry lines.
// A failure aborts the phase on the clients still reachable and marks lost
// the agents found lost (AgentRoster); the run decides what follows.
// Steps 1 to 5 are in phase_attempt.cc, 6 and 7 in phase_attempt_collect.cc.
//
// Owns: the attempt's state (client specs, Prepare and cache replies, streams).
// Thread: the coordinator's; one attempt at a time.
#ifndef LOCKSTEP_CONTROLLER_RUN_PHASE_ATTEMPT_H_
#define LOCKSTEP_CONTROLLER_RUN_PHASE_ATTEMPT_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/plan/plan.h"
#include "controller/run/agent_roster.h"
#include "controller/run/barrier_lead.h"
#include "controller/run/coordinator.h"
#include "controller/run/heartbeater.h"
#include "controller/run/phase_stream.h"
#include "controller/run/run_error.h"
#include "controller/record/run_observer.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// The parts of a run that a phase attempt uses; all outlive it.
struct RunParts {
  const Plan& plan;
  const RunOptions& options;
  AgentRoster& roster;
  Heartbeater& heartbeater;
  RunEmitter& events;  // what the run prints (RunOptions.observer)
  BarrierLead& lead;  // across the run's phases
};

class PhaseAttempt {
 public:
  // `base`: the phase's spec (BaseSpecOf); `test`: the test it belongs to
  // (for IOR's test header); `partial`: an agent was lost earlier and the run
  // went on without it. Fills `*record`, which must outlive the attempt.
  PhaseAttempt(const RunParts& run, const PhasePlan& phase, const v1::PhaseSpec& base,
               const v1::TestRecord& test, bool partial, v1::PhaseRecord* record);

  // Runs the steps; the record is complete when this returns, failed or not.
  RunError Run();

 private:
  RunError Prepare();
  std::vector<v1::PrepareRequest> PrepareRequests() const;
  RunError CacheBarrier();
  RunError CacheStep(const std::vector<AgentClient*>& who, bool sync, uint32_t drop_mode,
                     bool lustre_lru_clear);
  std::vector<absl::StatusOr<v1::TelemetryReply>> ServerWindow(bool end);
  void Start();
  RunError AwaitResults();
  // Once, start_check_before ahead of the instant: which clients have not
  // acknowledged their Start; says so (and records it) while the instant is
  // still ahead (barrier_lead.h StartDelivery).
  void CheckDelivery();
  // Sets when CheckDelivery is due (none when the lead is too short for it).
  void ScheduleDeliveryCheck(absl::Duration lead);
  // One look at leases, stalls and the interrupt flag while streams run.
  RunError Watch();
  RunError LoseDuringPhase(AgentClient* agent, const std::string& reason, bool restarted);
  // Steps 6 and 7 (phase_attempt_collect.cc).
  void Collect(RunError* failure);
  void CollectClient(size_t i, RunError* failure);
  void NameVerifiedFiles();
  void CollectServers(const std::vector<absl::StatusOr<v1::TelemetryReply>>& telemetry);
  void Reduce(const RunError& failure);
  void ObserveMargins(const RunError& failure);
  // Best effort: tells the clients not lost to abandon the phase.
  void Abort(const std::string& reason);
  RunError Failed(RunError failure);
  bool Interrupted() const;

  const RunParts run_;
  const PhasePlan& phase_;
  const v1::PhaseSpec& base_;
  const std::string& phase_id_;
  const v1::TestRecord& test_;
  const bool partial_;
  v1::PhaseRecord* const record_;

  // Ends the calls of agents found lost (within the lease), and all calls on
  // an interrupt.
  const CallWatch watch_;
  // The agents that run the phase (its kind's Takers: the clients, the
  // servers or both), in rank order, for the whole attempt; and the server
  // agents besides them (cache barrier, telemetry window).
  const std::vector<AgentClient*> clients_;
  const std::vector<AgentClient*> servers_;
  std::vector<absl::StatusOr<v1::PrepareReply>> prepared_;
  // By client, once all prepared: the endpoints its tasks connect to (net)
  // and its tasks.
  std::vector<std::vector<v1::NetPeer>> peers_;
  std::vector<uint32_t> tasks_of_;
  std::map<AgentClient*, v1::CacheReply> cache_done_;
  // Cross-agent rendezvous (sync_across_agents); outlives the streams.
  std::unique_ptr<RendezvousHub> rendezvous_;
  std::string rendezvous_broken_;                      // reported once
  std::vector<std::unique_ptr<PhaseStream>> streams_;  // by client
  // The delivery check: when (monotonic) it is due, 0 once made or not needed.
  int64_t delivery_check_mono_ns_ = 0;
  int64_t start_first_sent_mono_ns_ = 0;
  int64_t start_at_mono_ns_ = 0;  // the instant, in the monotonic clock
  // Every client's, in our clock: in record_'s agents, which outlive them.
  std::vector<const v1::TaskResult*> tasks_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_PHASE_ATTEMPT_H_
