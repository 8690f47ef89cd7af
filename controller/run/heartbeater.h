// Keeps the agents' leases alive and tells who went silent: a background
// thread sends Heartbeat to every agent not yet lost, every lease/3 (20 ms at
// least), and records per agent
//   - lost: it dropped our session (restarted, or its lease expired), or did
//     not answer for longer than the lease;
//   - stalled: it answers, but a transfer of its tasks has been in flight for
//     longer than `stall_ms` (an I/O stuck in the kernel, a hung mount).
// A lost agent gets no more heartbeats: queued in a hung agent's socket, they
// could renew a lease that should lapse.
//
// Owns: its thread, and what it learned, by agent index (the order of
// `agents`, which must outlive it).
// Threads: the coordinator's thread constructs, queries and destroys it (the
// destructor stops and joins the thread); its own thread sends the calls.
#ifndef LOCKSTEP_CONTROLLER_RUN_HEARTBEATER_H_
#define LOCKSTEP_CONTROLLER_RUN_HEARTBEATER_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "controller/run/agent_client.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// What went wrong with one agent.
struct AgentTrouble {
  size_t index = 0;     // in the Heartbeater's `agents`
  std::string reason;   // for people: names the lease, the stall or the agent's answer
  v1::ErrorKind kind = v1::ERROR_KIND_UNSPECIFIED;  // SESSION_GONE: it restarted
};

class Heartbeater {
 public:
  // Starts the thread. `lease`: the lease each agent was attached with;
  // `stall_ms`: sent with every heartbeat (the agent reports older transfers).
  Heartbeater(std::vector<AgentClient*> agents, absl::Duration lease, uint32_t stall_ms);
  ~Heartbeater();

  Heartbeater(const Heartbeater&) = delete;
  Heartbeater& operator=(const Heartbeater&) = delete;

  // The first agent found lost, if any; agents Forgotten are not reported.
  std::optional<AgentTrouble> Lost();
  // The first agent that reported a stalled transfer, if any (not Forgotten).
  std::optional<AgentTrouble> Stalled();
  // The run goes on without agent `index`: no more heartbeats or reports.
  void Forget(size_t index);

 private:
  void Loop();
  // One heartbeat to every agent not lost; waits at most `period`.
  void Round(absl::Duration period);

  const std::vector<AgentClient*> agents_;
  const absl::Duration lease_;
  const uint32_t stall_ms_;

  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<int64_t> last_answer_mono_ns_ ABSL_GUARDED_BY(mu_);
  // Per agent: why it is lost / what stalled; empty when nothing is.
  std::vector<AgentTrouble> lost_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> stalled_ ABSL_GUARDED_BY(mu_);
  std::set<size_t> forgotten_ ABSL_GUARDED_BY(mu_);

  std::thread thread_;  // last: starts once the state above exists
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_HEARTBEATER_H_
