// The supervisor (common/supervisor.h). Everything here runs in a child of
// a multithreaded process: async-signal-safe calls only (no allocation, no
// stdio, no locks); /proc is read into fixed buffers and parsed by hand.
#include "common/supervisor.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace lockstep::spawn {
namespace {

// How often a supervisor that is killing looks for its children again
// without a SIGCHLD (one stuck in the kernel may not die for a while, and an
// orphan that comes to it sends none); and, otherwise, whether its starter
// is still there (the parent-death signal says so first).
constexpr long kKillingLookNs = 50'000'000;
constexpr time_t kIdleLookS = 1;

// Closes [from, to]: close_range, or one by one before Linux 5.9.
void CloseRange(unsigned from, unsigned to) {
  if (from > to || ::syscall(SYS_close_range, from, to, 0U) == 0) return;
  struct rlimit rl = {};
  const unsigned max_fd = ::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (1u << 20)
                              ? static_cast<unsigned>(rl.rlim_cur)
                              : (1u << 20);
  for (unsigned fd = from; fd <= to && fd < max_fd; ++fd) ::close(static_cast<int>(fd));
}

// Closes every descriptor but the `n` >= 0 in `keep` (sorted here).
void CloseAllBut(int* keep, int n) {
  for (int i = 1; i < n; ++i) {
    for (int j = i; j > 0 && keep[j - 1] > keep[j]; --j) {
      const int t = keep[j];
      keep[j] = keep[j - 1];
      keep[j - 1] = t;
    }
  }
  unsigned from = 0;
  for (int i = 0; i < n; ++i) {
    if (keep[i] < 0) continue;
    const unsigned fd = static_cast<unsigned>(keep[i]);
    if (fd > from) CloseRange(from, fd - 1);
    if (fd + 1 > from) from = fd + 1;
  }
  CloseRange(from, ~0U);
}

// fn(n) for each decimal number in what `fd` reads ("123 456\n"), to its
// end.
template <typename Fn>
void ForEachNumber(int fd, const Fn& fn) {
  char buf[512];
  int64_t value = -1;  // -1: no digit yet
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] >= '0' && buf[i] <= '9') {
        value = (value < 0 ? 0 : value) * 10 + (buf[i] - '0');
        if (value > INT32_MAX) value = INT32_MAX;  // no pid: ignored below
      } else if (value >= 0) {
        fn(static_cast<pid_t>(value));
        value = -1;
      }
    }
  }
  if (value >= 0) fn(static_cast<pid_t>(value));
}

// "/proc/<pid>/stat" into `path` (32 bytes).
void StatPath(pid_t pid, char* path) {
  char digits[16];
  int n = 0;
  for (unsigned v = static_cast<unsigned>(pid); n == 0 || v != 0; v /= 10) {
    digits[n++] = static_cast<char>('0' + v % 10);
  }
  std::memcpy(path, "/proc/", 6);
  int at = 6;
  while (n > 0) path[at++] = digits[--n];
  std::memcpy(path + at, "/stat", 6);  // with its NUL
}

// The parent of `pid` from /proc/<pid>/stat ("pid (comm) S ppid ..."), or -1.
pid_t ParentOf(pid_t pid) {
  char path[32];
  StatPath(pid, path);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[512];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) < 0 && errno == EINTR) {
  }
  ::close(fd);
  // comm may hold anything, ')' and spaces too: the fields after it are
  // numbers and the state, so its end is the last ')'.
  ssize_t i = n - 1;
  while (i >= 0 && buf[i] != ')') --i;
  if (i < 0) return -1;
  i += 3;  // ") S"
  if (i >= n || buf[i] != ' ') return -1;
  int64_t ppid = -1;
  for (++i; i < n && buf[i] >= '0' && buf[i] <= '9' && ppid < INT32_MAX; ++i) {
    ppid = (ppid < 0 ? 0 : ppid) * 10 + (buf[i] - '0');
  }
  return static_cast<pid_t>(ppid);
}

// fn(pid) for each process whose parent is `self`, from every
// /proc/<pid>/stat: the way without the children file.
template <typename Fn>
void ForEachChildInProc(pid_t self, const Fn& fn) {
  const int dir = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1),
  // then the name with its NUL.
  constexpr size_t kReclenAt = 16, kNameAt = 19;
  alignas(8) char buf[4096];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, dir, buf, sizeof(buf));
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      uint16_t reclen = 0;
      std::memcpy(&reclen, buf + off + kReclenAt, sizeof(reclen));
      const char* name = buf + off + kNameAt;
      off += reclen;
      if (reclen == 0) break;
      int64_t pid = 0;  // 0: not a process ("self", "sys")
      for (const char* p = name; *p != '\0'; ++p) {
        if (*p < '0' || *p > '9' || pid >= INT32_MAX / 10) {
          pid = 0;
          break;
        }
        pid = pid * 10 + (*p - '0');
      }
      if (pid > 1 && ParentOf(static_cast<pid_t>(pid)) == self) {
        fn(static_cast<pid_t>(pid));
      }
    }
  }
  ::close(dir);
}

// fn(pid) for each child of this (single-threaded) process: zombies too,
// and the orphans re-parented to it. From the children file where the
// kernel has it (CONFIG_PROC_CHILDREN: the distributions' kernels do), else
// from the parent of every process.
template <typename Fn>
void ForEachChild(const Fn& fn) {
  const int fd = ::open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    ForEachChildInProc(::getpid(), fn);
    return;
  }
  ForEachNumber(fd, fn);
  ::close(fd);
}

// SIGKILL to the program's process group while the program is not reaped
// (`program` > 0), and to each child and the group it leads. None of these
// ids can name another process meanwhile: a child's pid is not reused before
// this process reaps it, nor a group's id while its leader's pid is held.
void KillAll(pid_t program) {
  if (program > 1) ::kill(-program, SIGKILL);
  ForEachChild([](pid_t child) {
    if (child <= 1) return;  // never kill(0) or kill(-1): this group, every process
    ::kill(child, SIGKILL);
    ::kill(-child, SIGKILL);
  });
}

// The program has ended: what is left of its group is killed while it is a
// zombie (its pid, the group's id, cannot be reused yet), then it is reaped
// and reported.
void EndProgram(pid_t program, int report_fd) {
  ::kill(-program, SIGKILL);
  SupervisorReport r;
  std::memset(&r, 0, sizeof(r));  // the padding too: it is written out
  while (::wait4(program, &r.status, 0, &r.usage) < 0 && errno == EINTR) {
  }
  while (::write(report_fd, &r, sizeof(r)) < 0 && errno == EINTR) {
  }
}

// Reaps every child that has ended, the program with its report (then
// *program = 0). False when no child is left.
bool ReapEnded(pid_t* program, int report_fd) {
  for (;;) {
    siginfo_t info = {};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      if (errno == EINTR) continue;
      return false;  // ECHILD
    }
    if (info.si_pid == 0) return true;  // none has ended
    if (info.si_pid == *program) {
      EndProgram(*program, report_fd);
      *program = 0;
      continue;
    }
    while (::waitpid(info.si_pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

// Until no child is left: reaps, kills once the program has ended or when
// told to, and takes the signals of supervisor.h.
[[noreturn]] void Watch(pid_t program, int report_fd, pid_t starter) {
  sigset_t taken;
  sigemptyset(&taken);
  for (int sig : {SIGCHLD, kSuperviseTerm, kSuperviseKill, SIGTERM, SIGINT, SIGHUP, SIGQUIT}) {
    sigaddset(&taken, sig);
  }
  bool killing = false;
  for (;;) {
    if (!ReapEnded(&program, report_fd)) ::_exit(0);
    if (program == 0) killing = true;
    if (killing) KillAll(program);
    const struct timespec look = killing ? timespec{0, kKillingLookNs} : timespec{kIdleLookS, 0};
    const int sig = ::sigtimedwait(&taken, nullptr, &look);
    if (sig == kSuperviseTerm) {
      if (program > 1) ::kill(-program, SIGTERM);
    } else if (sig > 0 && sig != SIGCHLD) {
      killing = true;
    }
    if (::getppid() != starter) killing = true;
  }
}

}  // namespace

[[noreturn]] void Supervise(const ChildSetup& c) {
  // Every signal is taken by sigtimedwait, none by a handler; SIGCHLD at its
  // default (SIG_IGN would have the kernel reap the children unseen).
  sigset_t all;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);  // EINVAL for some: fine
  struct sched_param normal = {};
  ::sched_setscheduler(0, SCHED_OTHER, &normal);
  ::prctl(PR_SET_NAME, "lockstep-reap", 0, 0, 0);
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 ||
      ::prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0) {
    FailChild(c.report_fd, kStepSupervise);
  }
  if (::getppid() != c.starter_pid) ::_exit(1);  // the starter is gone already
  ::setpgid(0, 0);
  int keep[] = {c.stdin_fd, c.stdout_fd, c.stderr_fd, c.report_fd, c.supervisor_fd};
  CloseAllBut(keep, sizeof(keep) / sizeof(keep[0]));
  const pid_t program = ::fork();
  if (program < 0) FailChild(c.report_fd, kStepSupervise);
  if (program == 0) ExecChild(c);
  if (c.own_group) ::setpgid(program, program);  // also in the program: whichever runs first
  // The program's execve closes the report pipe only once this copy is gone.
  for (int fd : {c.stdin_fd, c.stdout_fd, c.stderr_fd, c.report_fd}) ::close(fd);
  Watch(program, c.supervisor_fd, c.starter_pid);
}

}  // namespace lockstep::spawn
