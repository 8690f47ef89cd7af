#include "common/spawn.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "common/supervisor.h"

extern char** environ;

namespace lockstep::spawn {
namespace {

// Descriptors handed to the child are moved at or above this, so that
// placing them on 0..3 never overwrites one still to be placed.
constexpr int kChildFdFloor = 10;

const char* StepText(int step) {
  switch (step) {
    case kStepPgid: return "cannot make its process group";
    case kStepFds: return "cannot set up its stdin, stdout and stderr";
    case kStepUser: return "cannot switch to the account";
    case kStepDir: return "cannot enter the phase directory";
    case kStepProgram: return "cannot execute the program";
    case kStepExec: return "execve failed";
    case kStepSupervise: return "cannot start the program under its supervisor";
    default: return "failed";
  }
}

}  // namespace

[[noreturn]] void FailChild(int report_fd, ChildStep step) {
  const int msg[2] = {step, errno};
  ssize_t ignored = ::write(report_fd, msg, sizeof(msg));
  (void)ignored;
  ::_exit(127);
}

// Async-signal-safe calls only: the parent has many threads.
[[noreturn]] void ExecChild(const ChildSetup& c) {
  int report = c.report_fd;
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);  // EINVAL for some: fine
  struct sched_param normal = {};
  ::sched_setscheduler(0, SCHED_OTHER, &normal);
  ::prctl(PR_SET_TIMERSLACK, 0UL, 0, 0, 0);
  if (!c.probe) {
    if (c.own_group && ::setpgid(0, 0) != 0) FailChild(report, kStepPgid);
    if (::dup2(c.stdin_fd, 0) < 0 || ::dup2(c.stdout_fd, 1) < 0 || ::dup2(c.stderr_fd, 2) < 0 ||
        ::dup2(c.report_fd, 3) < 0 || ::fcntl(3, F_SETFD, FD_CLOEXEC) != 0) {
      FailChild(report, kStepFds);
    }
    report = 3;
    // Nothing of the agent's leaks: its sockets, files, pipes.
    if (::syscall(SYS_close_range, 4U, ~0U, 0U) != 0) {
      struct rlimit rl = {};
      const int max_fd = ::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (1u << 20)
                             ? static_cast<int>(rl.rlim_cur)
                             : (1 << 20);
      for (int fd = 4; fd < max_fd; ++fd) ::close(fd);
    }
  }
  const CommandAccount& a = *c.account;
  if (a.switch_user) {
    if (::setgroups(a.groups.size(), a.groups.data()) != 0 || ::setgid(a.gid) != 0 ||
        ::setuid(a.uid) != 0 || ::geteuid() != a.uid || ::getegid() != a.gid) {
      FailChild(report, kStepUser);
    }
  }
  if (::chdir(c.dir) != 0) FailChild(report, kStepDir);
  if (c.probe) {
    if (::access(c.program, X_OK) != 0) FailChild(report, kStepProgram);
    ::_exit(0);
  }
  // Cleared by setuid, so set after it: the program dies with its task thread
  // (or its supervisor, common/supervisor.h).
  if (c.die_with_thread) ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  ::execve(c.program, c.argv, c.envp);
  FailChild(report, errno == EACCES || errno == ENOENT ? kStepProgram : kStepExec);
}

namespace {

// The child's report: "" when execve (or the probe) succeeded; *step the
// step that failed.
std::string ReadChildReport(int fd, const ChildSetup& c, int* step) {
  int msg[2] = {0, 0};
  size_t got = 0;
  while (got < sizeof(msg)) {
    const ssize_t n = ::read(fd, reinterpret_cast<char*>(msg) + got, sizeof(msg) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  if (got < sizeof(msg)) return "";
  *step = msg[0];
  const CommandAccount& a = *c.account;
  std::string what = StepText(msg[0]);
  if (msg[0] == kStepDir) what += absl::StrFormat(" %s", c.dir);
  if (msg[0] == kStepProgram || msg[0] == kStepExec || msg[0] == kStepSupervise) {
    what += absl::StrFormat(" %s", c.program);
  }
  return absl::StrFormat("%s as %s (uid %u): %s", what, a.name, a.uid, std::strerror(msg[1]));
}

}  // namespace

// A descriptor at or above kChildFdFloor, close-on-exec; `fd` is closed.
int Lift(int fd) {
  if (fd < 0) return -1;
  const int lifted = ::fcntl(fd, F_DUPFD_CLOEXEC, kChildFdFloor);
  ::close(fd);
  return lifted;
}

void CloseFd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

bool Pipe::Open() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  read_fd = fds[0];
  write_fd = Lift(fds[1]);
  return write_fd >= 0;
}

Pipe::~Pipe() {
  CloseFd(&read_fd);
  CloseFd(&write_fd);
}

std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  for (const std::string& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

absl::StatusOr<pid_t> Spawn(ChildSetup c, Pipe* report) {
  c.report_fd = report->write_fd;
  c.starter_pid = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return absl::InternalError(absl::StrFormat("fork: %s", std::strerror(errno)));
  if (pid == 0) {
    if (c.supervisor_fd >= 0) Supervise(c);
    ExecChild(c);
  }
  // Also in the child: whichever runs first (a supervisor makes its own too).
  if (!c.probe && c.own_group) ::setpgid(pid, pid);
  CloseFd(&report->write_fd);
  int step = 0;
  const std::string failed = ReadChildReport(report->read_fd, c, &step);
  if (failed.empty()) return pid;
  ::waitpid(pid, nullptr, 0);
  if (step == kStepSupervise) return absl::InternalError(failed);
  return absl::PermissionDeniedError(failed);
}

CommandAccount OwnAccount() {
  CommandAccount a;
  a.uid = ::geteuid();
  a.gid = ::getegid();
  if (const passwd* pw = ::getpwuid(a.uid)) {
    a.name = pw->pw_name;
    a.home = pw->pw_dir;
  }
  return a;
}

std::vector<std::string> OwnEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}


}  // namespace lockstep::spawn
