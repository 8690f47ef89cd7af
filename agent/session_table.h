// The one session an agent serves at a time: who holds it (run, controller,
// since when), its lease, and what it leaves behind if it ends without the
// controller cleaning up (files of creating phases, mdtest -d directories).
//
// Not thread-safe: AgentCore holds its mutex around every call. Time comes
// from the injected monotonic clock only (leases are durations, never wall
// time); tests inject their own clock to expire a lease without waiting.
#ifndef LOCKSTEP_AGENT_SESSION_TABLE_H_
#define LOCKSTEP_AGENT_SESSION_TABLE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/beneath.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// `bytes` random bytes as lowercase hex: session ids and the agent's
// instance id.
std::string RandomHex(int bytes);

// A creating phase's files, neither removed nor released by the controller:
// its spec and its directory, held open since Prepare (agent/beneath.h), so
// that they are removed where they were written and nowhere else.
struct LeftPhase {
  v1::PhaseSpec spec;
  std::shared_ptr<const BeneathDir> dir;
};

// An mdtest -d directory the session created: held (its parent's
// descriptor and its name, BeneathDir::OpenDirToCreate), and whether a
// tree_remove ran in it since (mdtest removes such a directory at its end).
struct CreatedDir {
  std::shared_ptr<const BeneathDir> held;
  bool tree_removed = false;
};

// What an ended session left for the agent to remove.
struct EndedSession {
  std::string run_id;
  std::string controller;
  uint32_t lease_ms = 0;
  std::map<std::string, LeftPhase> phases;  // by PhaseFilesKey
  std::map<std::string, CreatedDir> created_dirs;  // by path

  // The created directories to remove: all when `all` (the lease expired:
  // nothing of the session stays), else those a tree_remove ran in (Detach).
  std::vector<std::string> DirsToRemove(bool all) const;
};

// Removes `ended.phases`' files and then `ended.DirsToRemove(all_dirs)`
// (rmdir: a directory that is not empty stays), each through its held
// directory. Failures are logged as warnings, never returned: the session is
// over either way; a directory whose mount changed since Prepare is named.
void RemoveLeftovers(const EndedSession& ended, bool all_dirs);

class SessionTable {
 public:
  using MonoClock = std::function<int64_t()>;  // monotonic nanoseconds

  // An Attach asking for no lease gets `default_lease_ms`; none is shorter
  // than `min_lease_ms`. `clock` defaults to MonotonicNs (common/clock.h).
  SessionTable(uint32_t default_lease_ms, uint32_t min_lease_ms, MonoClock clock = nullptr);

  // No session at all (never attached, detached, or ended at expiry).
  bool idle() const { return id_.empty(); }
  // A session is held and its lease has run out; only End() clears it.
  bool Expired() const;
  // The monotonic instant the lease runs out; 0 when idle.
  int64_t lease_deadline_mono_ns() const { return lease_deadline_mono_ns_; }
  const std::string& id() const { return id_; }
  const std::string& run_id() const { return run_id_; }

  // OK when a new session may begin: idle or expired. Otherwise
  // FailedPrecondition (kind BUSY) naming the run, controller, start time and
  // lease of the holder.
  absl::Status CheckAttach() const;
  // Begins a session and returns its id (random, 32 hex digits).
  // REQUIRES: idle() (End() an expired one first).
  std::string Begin(const std::string& run_id, const std::string& controller,
                    uint32_t requested_lease_ms, int64_t attached_unix_ns);

  // OK when `id` is the current session and its lease has not run out; an
  // expired lease is not renewed by a late call. FailedPrecondition with kind
  // SESSION_GONE (idle, expired) or BUSY (another session).
  absl::Status Check(const std::string& id) const;
  // Check(), and on success the lease extended to at least now + lease (a
  // Prepare, CacheBarrier, Telemetry, Cleanup or Start counts as a heartbeat).
  absl::Status CheckAndRenew(const std::string& id);
  // Check(), and on success the lease set to now + lease (Heartbeat).
  absl::Status Heartbeat(const std::string& id);

  // Ends the session (any state) and hands over what it left. Idle after.
  EndedSession End();

  // The session's leftovers. Phase files are keyed by the spec (its dir as
  // the plan gives it, file name, kind, layout, ranks), so a later Cleanup of
  // the same phase finds them, and the directory held since its Prepare.
  void AddPhaseFiles(const v1::PhaseSpec& spec, std::shared_ptr<const BeneathDir> dir);
  void ForgetPhaseFiles(const v1::PhaseSpec& spec);
  // The directory a phase of `spec` holds files in; null when none.
  std::shared_ptr<const BeneathDir> PhaseDirOf(const v1::PhaseSpec& spec) const;
  // `held` (path() the created directory) was made by this session.
  void NoteCreatedDir(std::shared_ptr<const BeneathDir> held);
  // A tree_remove phase ran in `dir`: if the session created it, it is
  // removed at Detach too.
  void NoteTreeRemoved(const std::string& dir);

  // What the session would leave now (session_ledger.h records it).
  const std::map<std::string, LeftPhase>& phases() const { return phases_; }
  const std::map<std::string, CreatedDir>& created_dirs() const { return created_dirs_; }

 private:
  int64_t Now() const { return clock_(); }

  const uint32_t default_lease_ms_;
  const uint32_t min_lease_ms_;
  const MonoClock clock_;
  std::string id_;
  std::string run_id_;
  std::string controller_;
  int64_t attached_unix_ns_ = 0;
  uint32_t lease_ms_ = 0;
  int64_t lease_deadline_mono_ns_ = 0;
  std::map<std::string, LeftPhase> phases_;
  std::map<std::string, CreatedDir> created_dirs_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_SESSION_TABLE_H_
