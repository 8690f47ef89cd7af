// The removal of what a repetition's phases wrote: each client agent removes
// its own ranks' files (Cleanup), timed as IOR's remove row, or gives them
// up (Release: kept files, no longer removed if this controller goes silent);
// and an agent that restarted meanwhile, which no longer knows what its old
// process wrote, is attached again only to remove them.
//
// Owns: nothing but the set of agents whose removal failed after an
// interrupt (their lease removes what they hold: they are not detached).
// Thread: the coordinator's.
#ifndef LOCKSTEP_CONTROLLER_RUN_FILE_REMOVAL_H_
#define LOCKSTEP_CONTROLLER_RUN_FILE_REMOVAL_H_

#include <atomic>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "controller/record/run_observer.h"
#include "controller/run/agent_roster.h"
#include "controller/run/heartbeater.h"
#include "controller/run/run_error.h"
#include "lockstep/v1/agent.pb.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// Who attaches again to restarted agents, with what lease.
struct RemovalSession {
  std::string run_id;
  std::string controller;  // "host pid N"
  uint32_t lease_ms = 0;
};

class FileRemoval {
 public:
  // All must outlive this; `interrupted` may be null.
  FileRemoval(AgentRoster* roster, Heartbeater* heartbeater, RunEmitter* events,
              const std::atomic<bool>* interrupted, RemovalSession session);

  // Removes the files of `bases` (phase specs of repetition `rep`) on every
  // client not lost. `timed`: IOR's remove row, into last_phase->remove_row
  // (when not null) and the observers. An agent that answers as lost is
  // marked so in the roster (kAgentLost); other failures are kIoError.
  RunError Remove(const std::vector<v1::PhaseSpec>& bases, uint32_t rep, bool timed,
                  v1::PhaseRecord* last_phase);
  // Tells the agents that kept files (keep = true) are no longer theirs to
  // remove if this controller goes silent. Best effort: a failure only means
  // a crash later would remove them.
  void Release(const std::vector<v1::PhaseSpec>& bases);
  // Agents lost because they no longer know our session but still answer
  // (restarted): attach again only to remove the files of `bases`, then detach.
  void CleanUpRestarted(const std::vector<v1::PhaseSpec>& bases);

  // Agents whose last Cleanup failed after an interrupt: not to be detached.
  const std::set<const AgentClient*>& unclean() const { return unclean_; }

 private:
  std::vector<absl::StatusOr<v1::CleanupReply>> OnClients(const v1::PhaseSpec& base,
                                                          bool release_only,
                                                          std::vector<AgentClient*>* targets);
  bool Interrupted() const { return interrupted_ != nullptr && interrupted_->load(); }

  AgentRoster* roster_;
  Heartbeater* heartbeater_;
  RunEmitter* events_;
  const std::atomic<bool>* interrupted_;
  const RemovalSession session_;
  std::set<const AgentClient*> unclean_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_FILE_REMOVAL_H_
