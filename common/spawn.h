// The fork/execve machinery behind common/process_runner.h (RunProcess,
// ProbeAsAccount, RunCommand) and common/child_process.h (ChildProcess):
// internal to those two and to the supervisor between RunProcess and its
// program (common/supervisor.h), not for other callers. Only
// async-signal-safe calls run in the child between fork and execve: the
// callers are multithreaded.
#ifndef LOCKSTEP_COMMON_SPAWN_H_
#define LOCKSTEP_COMMON_SPAWN_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/process_runner.h"

namespace lockstep::spawn {

// What the child does before execve (common/process_runner.h says why).
struct ChildSetup {
  const char* dir = nullptr;
  const char* program = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const CommandAccount* account = nullptr;
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;  // >= kChildFdFloor; -1: probe
  int report_fd = -1;                                  // >= kChildFdFloor (Spawn sets it)
  bool probe = false;  // check dir and program as the account, then exit 0
  // RunProcess: a group of its own (a timeout kills all it started) and
  // SIGKILL when the starting thread ends (under a supervisor: when the
  // supervisor ends, and the starting thread's end ends the supervisor). A
  // ChildProcess keeps the caller's group (a Ctrl-C or a test harness's kill
  // reaches it too) and outlives the thread that started it.
  bool own_group = true;
  bool die_with_thread = true;
  // RunProcess: >= kChildFdFloor, the child is the program's supervisor
  // (common/supervisor.h), which reports the program's end on it and starts
  // the program as its own child with this same setup. -1: the child is the
  // program.
  int supervisor_fd = -1;
  pid_t starter_pid = 0;  // the caller's pid (Spawn sets it)
};

// What a child reports on its report pipe when a step before execve failed.
enum ChildStep : int {
  kStepPgid = 1,
  kStepFds,
  kStepUser,
  kStepDir,
  kStepProgram,
  kStepExec,
  kStepSupervise,  // the supervisor could not be set up or fork the program
};

// A descriptor at or above the floor the child's dup2s leave alone,
// close-on-exec; `fd` is closed. -1 for -1 or on failure.
int Lift(int fd);
// Closes *fd when open; *fd = -1.
void CloseFd(int* fd);

// A close-on-exec pipe whose write end is lifted (for the child).
struct Pipe {
  int read_fd = -1, write_fd = -1;
  bool Open();
  ~Pipe();
};

// argv/envp for execve: pointers into `v`, null-terminated.
std::vector<char*> CStrings(const std::vector<std::string>& v);

// fork(): the child runs `c` (the supervisor when c.supervisor_fd >= 0:
// then the pid is the supervisor's); the parent gets the pid and reads the
// child's report on `report` (closing its copy of the write end first) until
// the program's execve closes it. PermissionDenied naming the step that
// failed before execve; Internal when fork failed or the supervisor could
// not start the program.
absl::StatusOr<pid_t> Spawn(ChildSetup c, Pipe* report);

// In a child of Spawn: the setup `c` asks for, then execve (or the probe's
// checks). Never returns; async-signal-safe.
[[noreturn]] void ExecChild(const ChildSetup& c);

// In a child: reports `step` and errno on `report_fd`, then _exit(127).
[[noreturn]] void FailChild(int report_fd, ChildStep step);

// This process's account and environment: a tool or local agent runs as
// the starter does.
CommandAccount OwnAccount();
std::vector<std::string> OwnEnvironment();

}  // namespace lockstep::spawn

#endif  // LOCKSTEP_COMMON_SPAWN_H_
