// A program that keeps running beside its starter (Kudu's Subprocess): the
// controller's local agents (controller/run/local_agents.h), the tests'
// agents. Started as RunProcess (common/process_runner.h) starts a program,
// with the same machinery (common/spawn.h).
#ifndef LOCKSTEP_COMMON_CHILD_PROCESS_H_
#define LOCKSTEP_COMMON_CHILD_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace lockstep {

// Started as RunProcess starts a program (fork + execve of argv[0], an
// absolute path, never a shell; signals, mask and scheduling reset; stdin
// /dev/null; no other descriptor inherited), but it keeps the starter's
// process group and account, its environment and working directory, and is
// not killed when the starting thread ends. Its stdout is a pipe for WaitForLine; its stderr goes to a
// file (created or truncated, 0644). The destructor stops it (Stop with
// kStopGrace) unless it was stopped already.
class ChildProcess {
 public:
  static constexpr absl::Duration kStopGrace = absl::Seconds(3);

  // Errors: InvalidArgument (empty argv), Internal (pipe, fork, the stderr
  // file), PermissionDenied naming the program when execve failed ("cannot
  // execute the program /x as u (uid N): No such file or directory").
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(
      const std::vector<std::string>& argv, const std::string& stderr_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Reads stdout until a line that starts with `prefix` and returns the rest
  // of that line; stdout is closed then (what the program prints later is
  // lost: a server prints its address and logs to stderr). Unavailable when
  // the line has not come within `timeout` or stdout closed first (the
  // program exited): the program is stopped and the message names it, the
  // prefix, the stderr file and the first 2 KiB of it.
  absl::StatusOr<std::string> WaitForLine(std::string_view prefix, absl::Duration timeout);

  // SIGTERM (and SIGCONT: a stopped program cannot act on it), SIGKILL if it
  // has not exited `grace` later; reaped either way. Idempotent.
  void Stop(absl::Duration grace);
  // SIGKILL now, reaped: a crash, for fault tests. Idempotent.
  void Kill();
  // Sends `signal` while it runs (SIGSTOP for a hung agent, SIGTERM to many
  // before stopping each); nothing once it was reaped.
  void Signal(int signal) const;

  pid_t pid() const { return pid_; }  // -1 once reaped
  bool running() const { return pid_ > 0; }

 private:
  ChildProcess(pid_t pid, int stdout_fd, std::string program, std::string stderr_path);
  // Waits up to `timeout` for the exit and reaps it; false when still running.
  bool Reap(absl::Duration timeout);

  pid_t pid_;
  int pidfd_ = -1;
  int stdout_fd_;
  const std::string program_;
  const std::string stderr_path_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_CHILD_PROCESS_H_
