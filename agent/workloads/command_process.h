// The machinery of a COMMAND phase (agent/workloads/command.h): the account
// a program runs as, the phase directory made usable by it, and one run of
// the program, bounded and measured as `time` measures it.
//
// How a program is started (RunCommandProcess), and why:
//   - fork + execve of the absolute path, never a shell; argv as given.
//   - In the child, before execve: its own process group (setpgid), so that
//     a timeout or an abort kills everything it started; default signal
//     dispositions and an empty mask (the agent ignores SIGPIPE), normal
//     scheduling (a start gate may have raised the task); stdin /dev/null,
//     stdout and stderr into pipes; every other descriptor closed (the
//     agent's gRPC sockets, its files); chdir to the phase directory; the
//     privileges dropped (setgroups, setgid, setuid) when the agent is root
//     and the account is another; the parent-death signal set to SIGKILL.
//     A step that fails is reported through a close-on-exec pipe with its
//     errno ("cannot enter DIR as nobody: Permission denied").
//   - The environment is exactly what the caller gives (CommandEnvironment).
// Only async-signal-safe calls run between fork and execve: the agent is
// multithreaded.
#ifndef LOCKSTEP_AGENT_WORKLOADS_COMMAND_PROCESS_H_
#define LOCKSTEP_AGENT_WORKLOADS_COMMAND_PROCESS_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// The account programs run as.
struct CommandAccount {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups (getgrouplist)
  std::string home;
  // The agent runs as root and the account is another: the child drops to it.
  bool switch_user = false;
};

// The account of the agent config's command_user. `configured` empty: the
// default, "nobody" when the agent runs as root and the agent's own account
// otherwise. Root only when configured as "root" (or uid 0) explicitly.
// Errors (InvalidArgument, naming command_user and the fix): an unknown
// account; another account than the agent's own when the agent is not root
// (it cannot switch).
absl::StatusOr<CommandAccount> ResolveCommandAccount(const std::string& configured);

// The clean environment: PATH (kCommandSearchPath), HOME (the account's),
// LANG=C, then `extra` ("KEY=VALUE", checked by CheckCommandEnv), a key
// given again replacing the earlier one.
std::vector<std::string> CommandEnvironment(const CommandAccount& account,
                                            const std::vector<std::string>& extra);

// Makes `dir` usable by `account`: when it does not exist, creates it (one
// level, mode 0755) owned by the account (made under a temporary name,
// chowned, then renamed into place, so that agents sharing a file system do
// not race); then checks, in a child running as the account, that it can
// enter `dir` and execute `program`. FailedPrecondition naming the
// directory or program, the account and the fix.
absl::Status PrepareCommandDir(const std::string& dir, const std::string& program,
                               const CommandAccount& account);

struct CommandLaunch {
  std::string program;            // absolute path, as execve takes it
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> env;   // the whole environment
  std::string dir;                // the working directory
  CommandAccount account;
  absl::Duration timeout = absl::Hours(1);
  // After SIGTERM to the group (timeout, abort), SIGKILL this much later.
  absl::Duration kill_grace = absl::Seconds(1);
  // After that SIGKILL, how long to wait for the exit: a program stuck in
  // the kernel (D state on a hung mount) cannot die, and the caller must not
  // hang with it; it is reaped in the background later (exit_code -1,
  // signal SIGKILL, timed_out or aborted as it was). Infinite: wait.
  absl::Duration reap_timeout = absl::InfiniteDuration();
  uint32_t tail_bytes = 4096;
};

// Runs `launch` and waits for it: its times (real on the monotonic clock,
// from fork to reap; user, sys and max RSS from wait4, the program and the
// children it waited for), its exit status or signal, and the last
// tail_bytes of stdout and stderr (valid UTF-8: see Utf8Tail) with the
// bytes each carried. At the timeout, or once *abort is true, the whole
// process group gets SIGTERM, then SIGKILL after kill_grace (timed_out is
// set for the timeout only). When the program ends, what is left of its
// group is killed (SIGKILL), and its pipes are read for a short while more.
// One that has not exited reap_timeout after its SIGKILL is left to a
// background reaper. The one process runner of the agent: COMMAND phases and
// the file-system tools (RunCommand, agent/lustre.h) both start programs here.
// Errors (Internal: pipe, fork; FailedPrecondition: a step before execve
// failed in the child, naming it) mean the program did not run.
absl::StatusOr<v1::CommandResult> RunCommandProcess(const CommandLaunch& launch,
                                                    const std::atomic<bool>* abort);

// The last at most `max_bytes` of `bytes`, cut at a character boundary and
// with every invalid UTF-8 sequence replaced by '?': protobuf strings (and
// run.json) must be UTF-8, and a program prints what it likes.
std::string Utf8Tail(const std::string& bytes, size_t max_bytes);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_COMMAND_PROCESS_H_
