// Lockstep's way to run a program to completion: the agent's COMMAND phases
// (agent/workloads/command_process.h) and file-system tools (lfs, lctl:
// agent/fs/lustre_tools.h) run through RunProcess and RunCommand. A program
// that keeps running beside its starter (local agents) is a ChildProcess,
// common/child_process.h; both start theirs with the machinery of
// common/spawn.h.
//
// How a program is started (RunProcess), and why:
//   - Under a supervisor (common/supervisor.h): a child of the caller, a
//     child subreaper (PR_SET_CHILD_SUBREAPER), forks the program and stays
//     its parent, so that every descendant of the program that is orphaned,
//     even one that left the program's process group or session (setsid,
//     setpgid: a daemon, `setsid sleep 1000 &`), is re-parented to it
//     rather than to init, and is killed with the rest (below). No cgroup is
//     needed. The supervisor dies with the caller's thread or process (a
//     parent-death signal, SIGTERM) and then kills everything too.
//   - fork + execve of the absolute path, never a shell; argv as given.
//   - In the child, before execve: its own process group (setpgid), so that
//     a timeout or an abort reaches everything it started; default signal
//     dispositions and an empty mask (the agent ignores SIGPIPE), normal
//     scheduling (a start gate may have raised the task); stdin /dev/null,
//     stdout and stderr into pipes; every other descriptor closed (the
//     agent's gRPC sockets, its files); chdir to the working directory; the
//     privileges dropped (setgroups, setgid, setuid) when the account says
//     so; the parent-death signal set to SIGKILL (the supervisor's death).
//     A step that fails is reported through a close-on-exec pipe with its
//     errno ("cannot enter DIR as nobody: Permission denied").
//   - The environment is exactly what the caller gives.
// Only async-signal-safe calls run between fork and execve: the agent is
// multithreaded.
#ifndef LOCKSTEP_COMMON_PROCESS_RUNNER_H_
#define LOCKSTEP_COMMON_PROCESS_RUNNER_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// The account a program runs as.
struct CommandAccount {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups (getgrouplist)
  std::string home;
  // The agent runs as root and the account is another: the child drops to it.
  bool switch_user = false;
};

struct ProcessLaunch {
  std::string program;            // absolute path, as execve takes it
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> env;   // the whole environment
  std::string dir;                // the working directory
  CommandAccount account;
  absl::Duration timeout = absl::Hours(1);
  // After SIGTERM to the group (timeout, abort), SIGKILL to everything the
  // program started (RunProcess) this much later.
  absl::Duration kill_grace = absl::Seconds(1);
  // After that SIGKILL, how long to wait for the exit: a program stuck in
  // the kernel (D state on a hung mount) cannot die, and the caller must not
  // hang with it; it is reaped in the background later (exit_code -1,
  // signal SIGKILL, timed_out or aborted as it was). Infinite: wait.
  absl::Duration reap_timeout = absl::InfiniteDuration();
  // The cap on what is kept of each of stdout and stderr (its last bytes).
  uint32_t tail_bytes = 4096;
};

// Runs `launch` and waits for it: its times (real on the monotonic clock,
// from fork to reap; user, sys and max RSS from wait4, the program and the
// children it waited for), its exit status or signal, and the last
// tail_bytes of stdout and stderr (valid UTF-8: see Utf8Tail in common/utf8.h) with the
// bytes each carried (more than the tail kept: the output was truncated).
// At the timeout, or once *abort is true, the program's process group gets
// SIGTERM, then after kill_grace SIGKILL as below (timed_out is set for the
// timeout only). When the program ends, or then, every process left of it
// is SIGKILLed and reaped by the supervisor: its process group, and every
// descendant that left the group, once orphaned (not before: one whose
// parent is stuck in the kernel lives until that parent dies). The pipes are
// read until they close or for a short while more. A program that has not
// exited reap_timeout after its SIGKILL is left to the supervisor, and the
// supervisor to a background reaper; so is a supervisor still killing (a
// descendant stuck in the kernel) a short while after the program ended.
// A program running as the caller's own account can SIGKILL its supervisor:
// the program dies with it (its parent-death signal), but what it left is
// then not killed. Errors mean the program did not run: Internal (pipe,
// fork, the supervisor's setup); PermissionDenied when a step before execve
// failed in the child, naming the step, the directory or program, the
// account and errno (a missing program: "cannot execute the program /x as u
// (uid N): No such file or directory").
absl::StatusOr<v1::CommandResult> RunProcess(const ProcessLaunch& launch,
                                             const std::atomic<bool>* abort);

// Checks, in a child running as `account` (not a new process group, no
// execve), that it can enter `dir` and execute `program`. PermissionDenied
// naming the step that failed; Internal when no child could be made.
absl::Status ProbeAsAccount(const std::string& dir, const std::string& program,
                            const CommandAccount& account);

// ---- Running a tool ---------------------------------------------------------

struct CommandOutput {
  int exit_code = 0;
  std::string stdout_text;  // at most kMaxCommandOutputBytes each; the rest is dropped
  std::string stderr_text;
  int64_t run_duration_ns = 0;  // start to exit, monotonic
};

inline constexpr size_t kMaxCommandOutputBytes = 8 << 20;

// Runs argv[0] (looked up on PATH) with argv through RunProcess, as the
// agent's own account and with its environment, in "/". Errors:
//   NotFound          argv[0] is not on PATH
//   PermissionDenied  argv[0] is not executable
//   DeadlineExceeded  still running after timeout_ms: it and all it started
//                     were SIGKILLed (a child stuck in D state is reaped later)
//   Internal          non-zero exit or killed by a signal; the message names
//                     the command, the exit code and stderr's first line
//   InvalidArgument   empty argv or timeout_ms <= 0
absl::StatusOr<CommandOutput> RunCommand(const std::vector<std::string>& argv, int timeout_ms);

// "lfs setstripe -c 4 '/mnt/my dir'": argv for messages (quoted for reading,
// never for a shell).
std::string FormatCommand(const std::vector<std::string>& argv);

// The first line of `text` without surrounding whitespace: a tool's answer
// or complaint in one line of a message.
std::string FirstLine(const std::string& text);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_PROCESS_RUNNER_H_
