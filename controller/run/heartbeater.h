// Keeps the agents' leases alive and tells who went silent: a background
// thread sends each agent not yet lost one Heartbeat every period (lease/3,
// at least 20 ms; agents staggered over the first period) in which no other
// call that renews its lease was sent or answered (Renewed, Sending), one
// call in flight per agent (its deadline: the period), and looks every tick
// (≤ 50 ms) at
//   - lost: it dropped our session (restarted, or its lease expired), or
//     nothing came back from it for longer than the lease, measured from its
//     last answer: found within lease + one tick of going silent, however
//     many other agents hang;
//   - stalled: it answers, but a transfer of its tasks has been in flight for
//     longer than `stall_ms` (an I/O stuck in the kernel, a hung mount).
// A lost agent gets no more heartbeats: queued in a hung agent's socket, they
// could renew a lease that should lapse.
//
// Owns: its thread, the heartbeat calls in flight (cancelled and awaited by
// the destructor), and what it learned, by agent index (the order of
// `agents`, which must outlive it).
// Threads: the coordinator's thread constructs, queries and destroys it (the
// destructor stops and joins the thread); its own thread sends the calls;
// gRPC's threads deliver the answers. LostReason and WatchCalls' watch may be
// used from any thread.
#ifndef LOCKSTEP_CONTROLLER_RUN_HEARTBEATER_H_
#define LOCKSTEP_CONTROLLER_RUN_HEARTBEATER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
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
  // The first agent whose tasks have had an operation in flight for longer
  // than `stall_ms`, if any (not Forgotten).
  std::optional<AgentTrouble> Stalled();
  // What happened since the last call, for people, once each: an I/O stall
  // seen kStallWarningMs into it (long before `stall_ms` fails the phase)
  // and its end; a server agent's daemons going down or coming back.
  std::vector<std::string> TakeNotices();
  static constexpr uint32_t kStallWarningMs = 10000;
  // The run goes on without agent `index`: no more heartbeats or reports.
  void Forget(size_t index);
  // Why `agent` is lost ("" while it is not, or is not one of ours).
  std::string LostReason(const AgentClient* agent);
  // A watch for the coordinator's long calls (Prepare, cache barrier,
  // Cleanup, ...): ends an agent's call once it is found lost, and every
  // call once `*interrupted` is set (may be null); and counts each call an
  // agent answered as its heartbeat answer (Renewed). Valid while this lives.
  // Use it only for calls that renew the agent's lease (Prepare,
  // CacheBarrier, Telemetry, Cleanup: common/wire_version.h minor 4; Start,
  // through PhaseStream, for agents of minor 5).
  CallWatch WatchCalls(const std::atomic<bool>* interrupted);
  // Agent `agent` answered a call that renewed its lease, started at
  // `sent_mono_ns`: it is not silent, and its next heartbeat is due a period
  // after that call at the earliest: a heartbeat right after such a call
  // would tell neither side anything new.
  // Agents of a wire minor before kRenewingCallsWireMinor are not credited
  // with the next heartbeat's postponement (their lease was not renewed).
  void Renewed(const AgentClient* agent, int64_t sent_mono_ns);
  // A call that renews agent `agent`'s lease (as for Renewed) is being sent
  // at `sent_mono_ns`: its next heartbeat is held back until a period after
  // that, if an answered call or heartbeat sent at most a period before it
  // shows the lease good for two more periods. Should the call never reach
  // the agent, that heartbeat still has a period before the lease lapses.
  // (With the answer alone counted, every agent's heartbeat would fall due a
  // period after its Prepare was sent, while its Start is still in flight:
  // in the I/O, or in a long lead.) Any thread.
  void Sending(const AgentClient* agent, int64_t sent_mono_ns);

 private:
  struct Beat;  // one agent's call in flight

  void Loop();
  // Sends the heartbeats that are due and marks lost the agents silent for
  // longer than the lease.
  void Tick();
  void Answered(size_t index, const absl::Status& status, int64_t sent_mono_ns,
                const v1::HeartbeatReply& reply) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void NoteStalls(size_t index, const v1::HeartbeatReply& reply) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void NoteDaemons(size_t index, const v1::HeartbeatReply& reply)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::vector<AgentClient*> agents_;
  const absl::Duration lease_;
  const absl::Duration period_;
  const uint32_t stall_ms_;
  const uint32_t warn_stall_ms_;  // what the agents are asked to report
  std::unordered_map<const AgentClient*, size_t> index_of_;  // constant after construction
  std::atomic<int> lost_count_{0};  // lets LostReason skip the lock while nobody is lost

  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<int64_t> last_answer_mono_ns_ ABSL_GUARDED_BY(mu_);
  std::vector<int64_t> next_send_mono_ns_ ABSL_GUARDED_BY(mu_);
  // When the latest call or heartbeat it answered (that renewed its lease)
  // was sent; INT64_MIN until one is.
  std::vector<int64_t> confirmed_sent_mono_ns_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> last_error_ ABSL_GUARDED_BY(mu_);  // of the last failed heartbeat
  // One slot per agent; in flight while its call is (only then non-null).
  std::vector<std::unique_ptr<Beat>> beats_ ABSL_GUARDED_BY(mu_);
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::unique_ptr<Beat>> finished_ ABSL_GUARDED_BY(mu_);  // answered calls
  // Per agent: why it is lost / what stalled; empty when nothing is.
  std::vector<AgentTrouble> lost_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> stalled_ ABSL_GUARDED_BY(mu_);
  // Per agent: since when its answers report stalled tasks (0: they do not).
  std::vector<int64_t> stalled_since_mono_ns_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> daemons_down_ ABSL_GUARDED_BY(mu_);  // as last reported
  std::vector<std::string> notices_ ABSL_GUARDED_BY(mu_);
  std::set<size_t> forgotten_ ABSL_GUARDED_BY(mu_);

  std::thread thread_;  // last: starts once the state above exists
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_HEARTBEATER_H_
