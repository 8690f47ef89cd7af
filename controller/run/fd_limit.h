// The controller holds one TCP connection (one file descriptor) per agent
// for the whole run, plus a few of its own. Before connecting, the soft
// RLIMIT_NOFILE is raised to the hard limit when more are needed; if even the
// hard limit is too low, a clear error says how to raise it.
#ifndef LOCKSTEP_CONTROLLER_RUN_FD_LIMIT_H_
#define LOCKSTEP_CONTROLLER_RUN_FD_LIMIT_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"

namespace lockstep {

// Descriptors the controller needs besides one per agent (files, gRPC's
// own, the journal and run.json, stdio).
inline constexpr uint64_t kControllerSpareFds = 128;

// The descriptors a run with `agents` agents needs.
inline uint64_t FdsNeeded(size_t agents) { return agents + kControllerSpareFds; }

// Raises the soft limit to the hard one when below FdsNeeded(agents).
// ResourceExhausted naming both limits, `ulimit -n` and systemd's
// LimitNOFILE when the hard limit is below it too.
absl::Status EnsureFileLimit(size_t agents);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_FD_LIMIT_H_
