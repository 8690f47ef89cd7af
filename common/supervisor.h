// The supervisor between RunProcess (common/process_runner.h) and its
// program: internal to common/spawn.cc and common/process_runner.cc.
//
// A child of the caller that becomes a child subreaper
// (PR_SET_CHILD_SUBREAPER) and starts the program as its own child (the
// setup of common/spawn.h), so that every descendant of the program that
// is orphaned, whatever process group or session it moved to (setsid,
// setpgid: a daemon, `setsid sleep 1000 &`), is re-parented to the
// supervisor rather than to init. When the program ends, the supervisor
// reports its wait status and rusage, then SIGKILLs every process left: the
// program's process group and each of its own children with its group, again
// as more orphans come to it, until it has no child; then it exits.
//
// What it takes (kill(supervisor, signal), from the caller only):
//   kSuperviseTerm  SIGTERM to the program's process group.
//   kSuperviseKill  SIGKILL to everything, as when the program ends.
// SIGTERM, SIGINT, SIGHUP and SIGQUIT do as kSuperviseKill, and so does the
// death of the thread that started it (its parent-death signal, SIGTERM) or
// of the caller's process. It has a process group of its own (a Ctrl-C to
// the caller's does not reach it), holds none of the caller's descriptors
// but the report's, and is named "lockstep-reap" (ps, top).
//
// Not covered: a descendant whose parent cannot die (stuck in the kernel)
// is killed only once that parent has died and it came to the supervisor;
// and a program running as the caller's own account can SIGKILL the
// supervisor itself, after which what it left is not killed.
#ifndef LOCKSTEP_COMMON_SUPERVISOR_H_
#define LOCKSTEP_COMMON_SUPERVISOR_H_

#include <signal.h>
#include <sys/resource.h>

#include "common/spawn.h"

namespace lockstep::spawn {

inline constexpr int kSuperviseTerm = SIGUSR1;
inline constexpr int kSuperviseKill = SIGUSR2;

// Written once on c.supervisor_fd, in one write (under PIPE_BUF), when the
// program has been reaped: its wait status and its rusage from wait4 (the
// program and the children it waited for). End of file without it: the
// supervisor was killed (SIGKILL), and its parent-death signal (SIGKILL)
// killed the program.
// Trivial: it travels as its bytes.
struct SupervisorReport {
  int status;
  struct rusage usage;
};

// The supervisor's life, in the child of Spawn when c.supervisor_fd >= 0:
// the program is forked with ExecChild(c) (its report on c.report_fd, as
// without a supervisor). A failure before the program's fork is reported on
// c.report_fd as kStepSupervise. Async-signal-safe; never returns.
[[noreturn]] void Supervise(const ChildSetup& c);

}  // namespace lockstep::spawn

#endif  // LOCKSTEP_COMMON_SUPERVISOR_H_
