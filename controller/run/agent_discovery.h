// Agents that nobody typed in: those that announced themselves in a shared
// directory (`lockstep-agent --announce DIR`, common/announce.h), waited for
// until as many as expected are there. Used by `lockstep run --agents-from`
// and `lockstep agents`; called from the command's thread before a run.
#ifndef LOCKSTEP_CONTROLLER_RUN_AGENT_DISCOVERY_H_
#define LOCKSTEP_CONTROLLER_RUN_AGENT_DISCOVERY_H_

#include <atomic>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/announce.h"
#include "controller/plan/plan.h"

namespace lockstep {

struct AnnounceWait {
  std::string dir;
  // How many agents to wait for; 0: every node of `nodes`, or (no nodes)
  // at least one.
  uint32_t expect = 0;
  // The nodes that should announce (a Slurm allocation's host names); empty:
  // any. A node outside this list is refused: it is not of this job.
  std::vector<std::string> nodes;
  absl::Duration timeout = absl::Seconds(5);
  absl::Duration poll = absl::Milliseconds(100);
  const std::atomic<bool>* interrupted = nullptr;  // set from a signal handler
  // The flag that waits longer, as the runner gives it: lockstep run's
  // --wait_ms, or a wrapper's own (the Slurm script's --wait-s).
  std::string wait_flag = "--wait_ms";
};

// Polls wait.dir until enough agents announced (returns them, sorted by
// node) or the timeout. Errors: those of ReadAnnouncements at once (a
// world-writable directory, a forged file, two nodes on one address);
// DeadlineExceeded naming the nodes that never announced (or how many are
// missing) and the ones that did; FailedPrecondition for a node not in
// wait.nodes; Cancelled when interrupted.
absl::StatusOr<std::vector<Announcement>> AwaitAnnouncements(const AnnounceWait& wait);

// The announced agents as a plan's agents (address and role).
std::vector<AgentPlan> AgentsOf(const std::vector<Announcement>& announced);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_AGENT_DISCOVERY_H_
