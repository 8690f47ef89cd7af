// How a run ended, in the run layer's terms. The command line chooses the
// exit code for each (controller/cli/exit_codes.h); nothing below cli/ speaks
// in exit codes.
#ifndef LOCKSTEP_CONTROLLER_RUN_RUN_FAILURE_H_
#define LOCKSTEP_CONTROLLER_RUN_RUN_FAILURE_H_

namespace lockstep {

enum class RunFailure {
  kNone,         // the run completed
  kOther,        // anything not below
  kBadPlan,      // the plan or options cannot run as given (paths, limits, roles)
  kConnect,      // an agent did not answer, refused us, or TLS failed
  kAgentLost,    // an agent went silent, restarted or was taken mid-run
  kIoError,      // a task's I/O failed (ENOSPC, EIO, missing or short file, ...)
  kVerify,       // data verification found a difference
  kSkew,         // a phase's start skew exceeded the plan's bound (on_skew = "fail")
  kInterrupted,  // SIGINT / SIGTERM
  kVersion,      // an agent's wire protocol cannot work with ours (common/wire_version.h)
  kAuBelowThreshold,  // a train phase's AU was below its au_threshold (a validity criterion)
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_RUN_FAILURE_H_
