// A small durable record of what the current session would leave behind
// (the files of its creating phases, the mdtest -d directories it made), so
// that an agent killed mid-run (SIGKILL, a crash, a reboot) removes them
// when it starts again instead of leaving them in its roots.
//
// Files in the agent's state directory (--state_dir): agent-<pid>.lock,
// flock(2)ed for the agent's life, and agent-<pid>.ledger, rewritten
// atomically (common/files.h WriteFileAtomically) whenever the session's
// leftovers change. A ledger whose lock nobody holds is a dead agent's: at
// start-up the agent removes what it lists below its own roots, through the
// roots' descriptors with no symlink followed (agent/beneath.h), logs what it
// removed, and deletes the ledger.
//
// Thread-compatible: AgentCore calls Record under its mutex.
#ifndef LOCKSTEP_AGENT_SESSION_LEDGER_H_
#define LOCKSTEP_AGENT_SESSION_LEDGER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "agent/roots.h"
#include "agent/session_table.h"

namespace lockstep {

class SessionLedger {
 public:
  // Creates `state_dir` (0700) if missing, takes this process's lock and
  // starts an empty ledger. Errors name the directory and the fix.
  static absl::StatusOr<std::unique_ptr<SessionLedger>> Open(const std::string& state_dir);
  ~SessionLedger();

  // Writes what `sessions` would leave now (nothing when idle), durably;
  // `roots` names the root of each directory. Failures are logged.
  void Record(const SessionTable& sessions, const AllowedRoots& roots);

  const std::string& path() const { return ledger_path_; }

 private:
  SessionLedger(std::string ledger_path, std::string lock_path, int lock_fd);

  std::string ledger_path_;
  std::string lock_path_;
  int lock_fd_ = -1;
  std::string written_;  // the ledger's text as last written
};

// Creates `state_dir` (0700) if missing, and checks that only this user or
// root can write there: a directory, not group- or other-writable, owned by
// the effective uid or root. A ledger planted there would make the agent
// remove the files it names below the roots at its next start.
// FailedPrecondition naming the directory, what is wrong and the fix.
absl::Status CheckStateDir(const std::string& state_dir);

// At start-up: the ledgers in `state_dir` of agents that are gone (their
// lock is free). Whatever each lists below `roots` is removed (the phases'
// files, then the directories those sessions made, if empty), each removal
// logged; a ledger is deleted once nothing it lists is left to this agent.
// Returns how many files and directories it removed; a missing state_dir is
// none.
uint64_t RemoveLostSessions(const std::string& state_dir, const AllowedRoots& roots);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_SESSION_LEDGER_H_
