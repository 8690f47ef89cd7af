// A failure of the run layer: its RunFailure (which the command line turns
// into an exit code) and the message for people, and the rules that turn
// what an agent answered into one. The rules read typed kinds
// (common/errors.h) and gRPC codes, never message text.
#ifndef LOCKSTEP_CONTROLLER_RUN_RUN_ERROR_H_
#define LOCKSTEP_CONTROLLER_RUN_RUN_ERROR_H_

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "controller/run/run_failure.h"
#include "lockstep/v1/agent.pb.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// Empty (kNone) when nothing went wrong; tests as true when something did.
struct RunError {
  RunFailure kind = RunFailure::kNone;
  std::string message;

  explicit operator bool() const { return kind != RunFailure::kNone; }
};

inline RunError Fail(RunFailure kind, std::string message) {
  return RunError{kind, std::move(message)};
}

// The agent no longer holds our session: it restarted, its lease expired
// (SESSION_GONE), or another controller took it since (BUSY).
bool IsSessionLost(const absl::Status& status);

// The agent still answers but forgot our session (SESSION_GONE): it may be
// attached again to remove what the run wrote.
bool IsRestarted(const absl::Status& status);

// What a failed setup call (Prepare, Attach, ...) means for the run: a lost
// session or an unreachable agent → kAgentLost; a path, limit or argument
// the agent refuses → kBadPlan; anything else (no space, I/O) → kIoError.
RunFailure FailureOfSetupCall(const absl::Status& status);

// What a phase result with ok = false means: kVerify when a task read back
// data that differs (error_kind VERIFY_FAILED, or verify_failed from agents
// that do not send error_kind yet), else kIoError.
RunFailure FailureOfPhaseResult(const v1::PhaseResult& result);

// The phase record's error_kind for that result: VERIFY_FAILED as above,
// else the first failed task's kind (IO_FAILED when none says).
v1::ErrorKind ErrorKindOfPhaseResult(const v1::PhaseResult& result);

// A run whose phases all ran can still be invalid: kAuBelowThreshold when
// an accepted phase missed its kind's validity criterion
// (PhaseKindDef::MissedCriterion: a train phase's AU below its
// au_threshold), the message naming each such phase and repetition with
// what it missed, then the kinds' fixes. Empty otherwise.
RunError MissedCriteria(const v1::RunRecord& record);

// How a run that ended with `kind` ended, for its status's rule
// (record/run_status.h): INTERRUPTED, AU_BELOW_THRESHOLD, COMPLETED for
// kNone, else FAILED.
v1::RunEnd::Ending EndingOf(RunFailure kind);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_RUN_ERROR_H_
