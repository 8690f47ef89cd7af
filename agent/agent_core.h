// Everything an agent does, independent of gRPC: the one façade the gRPC
// service (agent_service.h) translates calls into. It checks the session
// (session_table.h) and holds the one prepared or running phase; the jobs
// are done by their own units: phase preparation (phase_preparer.h), cache
// barriers (cache_control.h), phase telemetry windows (phase_telemetry.h),
// and the lease watchdog here, which ends a silent controller's session and
// removes what it left.
#ifndef LOCKSTEP_AGENT_AGENT_CORE_H_
#define LOCKSTEP_AGENT_AGENT_CORE_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/fs/ceph_daemons.h"
#include "agent/fs/lustre_tools.h"
#include "agent/phase_runner.h"
#include "agent/roots.h"
#include "agent/telemetry.h"
#include "common/limits.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

struct AgentOptions {
  v1::Role role = v1::CLIENT;
  std::vector<std::string> roots;
  // Used when an Attach asks for none; bounds any asked for.
  uint32_t default_lease_ms = 5000;
  uint32_t min_lease_ms = 200;
  uint32_t max_tasks = kMaxAgentTasks;
  uint64_t max_bytes_per_phase = 0;  // what this agent's tasks may write in one phase; 0 = any
  bool allow_drop_caches = true;
  // Where drop_caches is written; tests point it elsewhere.
  std::string drop_caches_path = "/proc/sys/vm/drop_caches";
  // Telemetry sampled on this host over every phase.
  bool telemetry = true;
  TelemetryOptions telemetry_options;
  // lfs / lctl are run (argument vectors, never a shell) only when allowed:
  // striping, client checksums, lock LRU flush.
  bool allow_lustre = false;
  // A system directory (common/files.h IsSystemDirectory: "/", /etc, /usr,
  // ...) among the roots is refused at Create unless allowed (config
  // [permissions] system_roots, --allow_system_roots).
  bool allow_system_roots = false;
  LustreToolsOptions lustre_options;
  // Server agents: the Ceph daemons this host serves (config [ceph]): their
  // counters in telemetry, their caches in cache barriers, their state in
  // heartbeats. Empty: none.
  CephDaemonOptions ceph;
  // COMMAND phases: the only programs they may run (absolute paths; config
  // allow_commands, --allow_command) and the account they run as (config
  // command_user, --command_user; "" = nobody under root, else the agent's
  // own). Create refuses a relative path, an unknown account, or another
  // account than its own when the agent is not root.
  std::vector<std::string> allow_commands;
  std::string command_user;
  // Where the agent records what its session would leave behind
  // (agent/session_ledger.h), and at start-up removes what an agent killed
  // before it left; "" = no ledger.
  std::string state_dir;
  RunnerOptions runner;  // test hooks (Create adds allow_commands, command_user)
  // TESTS ONLY: the calls named ("prepare", "cache", "cleanup") wait this
  // long before doing their work, as on a hung file system; the agent keeps
  // answering heartbeats meanwhile.
  std::vector<std::string> test_delay_calls;
  absl::Duration test_delay_call;
  // Called (from an RPC or the lease watchdog thread, no lock held) after a
  // session ended and its cleanup is done: the controller detached or its
  // lease expired. May be empty. `lockstep-agent --once` exits from it.
  std::function<void()> on_session_end;
  // Added to HostFacts.extra (e.g. "tls_cert_not_after" from main.cc).
  std::map<std::string, std::string> extra_facts;
};

class AgentCore {
 public:
  // Errors: InvalidArgument for roots that do not exist.
  static absl::StatusOr<std::unique_ptr<AgentCore>> Create(const AgentOptions& options);
  ~AgentCore();

  // The agent is stopping (a signal): calls that wait (a phase's delay, a
  // test hook) end now, so that the server's shutdown is not held by them.
  void BeginShutdown();

  v1::HostFacts Facts() const;

  // Takes the agent for one run. FailedPrecondition "busy: run R from C since
  // T" while another session's lease is alive.
  absl::StatusOr<v1::AttachReply> Attach(const v1::AttachRequest& request);
  // Renews the lease. FailedPrecondition for an unknown or expired session.
  absl::StatusOr<v1::HeartbeatReply> Heartbeat(const v1::HeartbeatRequest& request);
  absl::Status Detach(const v1::DetachRequest& request);
  absl::StatusOr<v1::ClockReply> Clock(const v1::ClockRequest& request, int64_t receive_unix_ns);

  absl::StatusOr<v1::PrepareReply> Prepare(const v1::PrepareRequest& request);
  absl::StatusOr<v1::CacheReply> CacheBarrier(const v1::CacheRequest& request);
  // Starts the prepared phase; events reach `sink` from another thread.
  absl::Status Start(const v1::StartRequest& request, PhaseRunner::EventSink sink);
  absl::StatusOr<v1::AbortReply> Abort(const v1::AbortRequest& request);
  // Ends a cross-agent rendezvous of the running phase (PhaseRunner::Release).
  absl::StatusOr<v1::ReleaseReply> Release(const v1::ReleaseRequest& request);
  absl::StatusOr<v1::CleanupReply> Cleanup(const v1::CleanupRequest& request);
  absl::StatusOr<v1::TelemetryReply> Telemetry(const v1::TelemetryRequest& request);

  // "idle", "attached", "prepared", "running", or "removing leftovers" while
  // the watchdog removes the files of a session whose lease expired.
  std::string State() const;

  struct Impl;

 private:
  explicit AgentCore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_AGENT_CORE_H_
