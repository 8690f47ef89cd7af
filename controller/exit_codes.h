// Exit codes of `lockstep`, documented in the README.
#ifndef LOCKSTEP_CONTROLLER_EXIT_CODES_H_
#define LOCKSTEP_CONTROLLER_EXIT_CODES_H_

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
  kExitInterrupted = 130, // SIGINT / SIGTERM
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_EXIT_CODES_H_
