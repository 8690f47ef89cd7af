// Exit codes of `lockstep`, documented in docs/exit-codes.md.
#ifndef LOCKSTEP_CONTROLLER_CLI_EXIT_CODES_H_
#define LOCKSTEP_CONTROLLER_CLI_EXIT_CODES_H_

#include "absl/status/status.h"
#include "controller/run/run_failure.h"

namespace lockstep {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,       // anything not below
  kExitUsage = 2,         // bad command line or plan
  kExitConnect = 3,       // an agent did not answer, refused us, or TLS failed
  kExitAgentLost = 4,     // an agent went silent or died mid-run
  kExitIoError = 5,       // a task's I/O failed (ENOSPC, EIO, missing file, ...)
  kExitVerify = 6,        // data verification found a difference
  kExitSkew = 7,          // a phase's start skew exceeded the plan's bound (on_skew = "fail")
  kExitVersion = 8,       // an agent and the controller speak wire protocols that cannot work together
  kExitAuBelowThreshold = 9,  // a workload's validity criterion failed (a train phase's AU below its threshold)
  kExitOutOfMemory = 10,  // the controller could not allocate memory (std::bad_alloc), caught in main
  kExitInterrupted = 130, // SIGINT / SIGTERM
};

// `lockstep gate`'s own exit codes: its verdict (GateVerdict of
// controller/results/gate.h), or input it could not gate.
enum GateExitCode : int {
  kGatePass = 0,
  kGateRegression = 1,
  kGateBadInput = 2,     // a run, the baseline, --max-drop or the db could not be read
  kGateNoBaseline = 3,   // no baseline, or no result of the run in it
};

// The exit code of a run that ended with `failure`.
constexpr int ExitCodeFor(RunFailure failure) {
  switch (failure) {
    case RunFailure::kNone: return kExitOk;
    case RunFailure::kBadPlan: return kExitUsage;
    case RunFailure::kConnect: return kExitConnect;
    case RunFailure::kAgentLost: return kExitAgentLost;
    case RunFailure::kIoError: return kExitIoError;
    case RunFailure::kVerify: return kExitVerify;
    case RunFailure::kSkew: return kExitSkew;
    case RunFailure::kInterrupted: return kExitInterrupted;
    case RunFailure::kVersion: return kExitVersion;
    case RunFailure::kAuBelowThreshold: return kExitAuBelowThreshold;
    case RunFailure::kOther: break;
  }
  return kExitFailure;
}

// The exit code of a results command whose run reference (results/run_ref.h)
// could not be read: one that names no run (NotFound) or is malformed is a
// bad command line, as for gate; one that cannot be read now (a run still
// going, a damaged db) is a failure.
inline int ExitCodeForRunRef(const absl::Status& s) {
  return absl::IsNotFound(s) || absl::IsInvalidArgument(s) ? kExitUsage : kExitFailure;
}

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_CLI_EXIT_CODES_H_
