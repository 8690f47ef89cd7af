#include "common/process_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/clock.h"
#include "common/spawn.h"
#include "common/status_macros.h"
#include "common/supervisor.h"
#include "common/utf8.h"


namespace lockstep {
namespace {

using spawn::ChildSetup;
using spawn::CloseFd;
using spawn::CStrings;
using spawn::Lift;
using spawn::Pipe;
using spawn::Spawn;

// How often the wait loop looks at the abort flag.
constexpr int kAbortPollMs = 20;
// After the program ended: how long its pipes are still read (a process
// that left its group keeps them open).
constexpr absl::Duration kDrainAfterExit = absl::Milliseconds(500);

// ---- the wait loop ------------------------------------------------------------

// The last `keep` bytes of a stream and how many it carried.
class Tail {
 public:
  explicit Tail(size_t keep) : keep_(keep) {}
  void Add(const char* data, size_t n) {
    total_ += n;
    if (keep_ == 0) return;
    buf_.append(data, n);
    if (buf_.size() > 2 * keep_ + 65536) buf_.erase(0, buf_.size() - keep_);
  }
  std::string Text() const { return Utf8Tail(buf_, keep_); }
  uint64_t total() const { return total_; }

 private:
  const size_t keep_;
  std::string buf_;
  uint64_t total_ = 0;
};

// Reads what `*fd` has now; closes it (-1) at end of file.
void Drain(int* fd, Tail* tail) {
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(*fd, buf, sizeof(buf));
    if (n > 0) {
      tail->Add(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    CloseFd(fd);
    return;
  }
}

int64_t TimevalNs(const struct timeval& tv) {
  return static_cast<int64_t>(tv.tv_sec) * 1'000'000'000 + static_cast<int64_t>(tv.tv_usec) * 1000;
}

// One running program under its supervisor (common/supervisor.h): its
// pipes, the supervisor's report and pidfd, the signals sent.
class Watcher {
 public:
  Watcher(const ProcessLaunch& launch, pid_t supervisor, int64_t start_mono_ns, int out_fd,
          int err_fd, int report_fd)
      : launch_(launch),
        supervisor_(supervisor),
        start_mono_ns_(start_mono_ns),
        deadline_mono_ns_(start_mono_ns + absl::ToInt64Nanoseconds(launch.timeout)),
        out_fd_(out_fd),
        err_fd_(err_fd),
        report_fd_(report_fd),
        out_(launch.tail_bytes),
        err_(launch.tail_bytes) {
    pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, supervisor, 0));
    for (int fd : {out_fd_, err_fd_, report_fd_}) {
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
  }
  ~Watcher() {
    CloseFd(&pidfd_);
    CloseFd(&out_fd_);
    CloseFd(&err_fd_);
    CloseFd(&report_fd_);
  }

  // Until the program has ended, then while the supervisor kills what it
  // left and the pipes close, for kDrainAfterExit at most.
  v1::CommandResult Run(const std::atomic<bool>* abort) {
    while (!exited_ || ((out_fd_ >= 0 || err_fd_ >= 0 || !supervisor_reaped_) &&
                        MonotonicNs() < drain_until_mono_ns_)) {
      if (!exited_) Signal(abort != nullptr && abort->load());
      if (!exited_ && GiveUp()) break;
      Poll();
      if (out_fd_ >= 0) Drain(&out_fd_, &out_);
      if (err_fd_ >= 0) Drain(&err_fd_, &err_);
      if (!exited_) ReadReport();
      if (!supervisor_reaped_) ReapSupervisor();
    }
    if (!supervisor_reaped_) ReapInBackground();
    return Result();
  }

 private:
  // At the deadline or on abort the supervisor SIGTERMs the program's group;
  // a grace later it SIGKILLs everything. The supervisor is signalled only
  // while not reaped: its pid cannot name another process meanwhile.
  void Signal(bool aborted) {
    if (supervisor_reaped_) return;
    const int64_t now = MonotonicNs();
    if (term_sent_mono_ns_ == 0 && (aborted || now >= deadline_mono_ns_)) {
      timed_out_ = !aborted;
      ::kill(supervisor_, spawn::kSuperviseTerm);
      term_sent_mono_ns_ = now;
    } else if (term_sent_mono_ns_ != 0 && !killed_ &&
               now >= term_sent_mono_ns_ + absl::ToInt64Nanoseconds(launch_.kill_grace)) {
      ::kill(supervisor_, spawn::kSuperviseKill);
      killed_ = true;
      killed_mono_ns_ = now;
    }
  }

  // Killed and still not gone reap_timeout later: stuck in the kernel. The
  // supervisor reaps it whenever it dies, and a background thread the
  // supervisor; the result says SIGKILL.
  bool GiveUp() {
    if (!killed_ || launch_.reap_timeout == absl::InfiniteDuration() ||
        MonotonicNs() < killed_mono_ns_ + absl::ToInt64Nanoseconds(launch_.reap_timeout)) {
      return false;
    }
    end_mono_ns_ = MonotonicNs();
    status_ = SIGKILL;  // WIFSIGNALED, WTERMSIG == SIGKILL
    return true;
  }

  void ReapInBackground() {
    const pid_t pid = supervisor_;
    std::thread([pid] {
      int st;
      while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
    }).detach();
    supervisor_reaped_ = true;
  }

  void Poll() {
    struct pollfd fds[4];
    nfds_t n = 0;
    if (!supervisor_reaped_ && pidfd_ >= 0) fds[n++] = {pidfd_, POLLIN, 0};
    if (!exited_ && report_fd_ >= 0) fds[n++] = {report_fd_, POLLIN, 0};
    if (out_fd_ >= 0) fds[n++] = {out_fd_, POLLIN, 0};
    if (err_fd_ >= 0) fds[n++] = {err_fd_, POLLIN, 0};
    int64_t wait_ns = int64_t{kAbortPollMs} * 1'000'000;
    // Without a pidfd the supervisor's exit is seen at the next look: look often.
    if (exited_ && !supervisor_reaped_ && pidfd_ < 0) wait_ns = 1'000'000;
    if (!exited_ && term_sent_mono_ns_ == 0) {
      wait_ns = std::min(wait_ns, deadline_mono_ns_ - MonotonicNs());
    }
    if (exited_) wait_ns = std::min(wait_ns, drain_until_mono_ns_ - MonotonicNs());
    const int wait_ms = static_cast<int>(std::max<int64_t>(wait_ns, 0) / 1'000'000);
    ::poll(fds, n, wait_ms);
  }

  // The supervisor's report of the program's end: its status and rusage.
  // End of file without one: the supervisor was killed, and the program
  // with it (its parent-death signal, SIGKILL).
  void ReadReport() {
    spawn::SupervisorReport r = {};
    ssize_t n;
    while ((n = ::read(report_fd_, &r, sizeof(r))) < 0 && errno == EINTR) {
    }
    if (n < 0 && errno == EAGAIN) return;
    if (n == static_cast<ssize_t>(sizeof(r))) {
      status_ = r.status;
      usage_ = r.usage;
    } else {
      status_ = SIGKILL;
    }
    CloseFd(&report_fd_);
    end_mono_ns_ = MonotonicNs();
    exited_ = true;
    drain_until_mono_ns_ = end_mono_ns_ + absl::ToInt64Nanoseconds(kDrainAfterExit);
  }

  // The supervisor exits once nothing it supervised is left.
  void ReapSupervisor() {
    int st = 0;
    pid_t r;
    while ((r = ::waitpid(supervisor_, &st, WNOHANG)) < 0 && errno == EINTR) {
    }
    if (r == supervisor_ || (r < 0 && errno == ECHILD)) supervisor_reaped_ = true;
  }

  v1::CommandResult Result() const {
    v1::CommandResult r;
    r.set_exit_code(WIFEXITED(status_) ? WEXITSTATUS(status_) : -1);
    r.set_signal(WIFSIGNALED(status_) ? WTERMSIG(status_) : 0);
    r.set_timed_out(timed_out_);
    r.set_real_ns(end_mono_ns_ - start_mono_ns_);
    r.set_user_ns(TimevalNs(usage_.ru_utime));
    r.set_sys_ns(TimevalNs(usage_.ru_stime));
    r.set_max_rss_kib(usage_.ru_maxrss);
    r.set_stdout_tail(out_.Text());
    r.set_stderr_tail(err_.Text());
    r.set_stdout_bytes(out_.total());
    r.set_stderr_bytes(err_.total());
    return r;
  }

  const ProcessLaunch& launch_;
  const pid_t supervisor_;
  const int64_t start_mono_ns_;
  const int64_t deadline_mono_ns_;
  int pidfd_ = -1;
  int out_fd_, err_fd_, report_fd_;
  Tail out_, err_;
  bool exited_ = false;
  bool supervisor_reaped_ = false;
  bool timed_out_ = false;
  bool killed_ = false;
  int64_t killed_mono_ns_ = 0;
  int64_t term_sent_mono_ns_ = 0;
  int64_t end_mono_ns_ = 0;
  int64_t drain_until_mono_ns_ = 0;
  int status_ = 0;
  struct rusage usage_ = {};
};

}  // namespace

absl::Status ProbeAsAccount(const std::string& dir, const std::string& program,
                            const CommandAccount& account) {
  Pipe report;
  if (!report.Open()) return absl::InternalError(absl::StrFormat("pipe: %s", std::strerror(errno)));
  ChildSetup c{.dir = dir.c_str(), .program = program.c_str(), .account = &account, .probe = true};
  absl::StatusOr<pid_t> pid = Spawn(c, &report);
  if (!pid.ok()) return pid.status();
  int status = 0;
  while (::waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::CommandResult> RunProcess(const ProcessLaunch& launch,
                                                    const std::atomic<bool>* abort) {
  const std::vector<char*> argv = CStrings(launch.argv);
  const std::vector<char*> envp = CStrings(launch.env);
  Pipe out, err, report, supervision;
  const int devnull = Lift(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (devnull < 0 || !out.Open() || !err.Open() || !report.Open() || !supervision.Open()) {
    const int e = errno;
    if (devnull >= 0) ::close(devnull);
    return absl::InternalError(
        absl::StrFormat("cannot make the program's pipes: %s", std::strerror(e)));
  }
  ChildSetup c{.dir = launch.dir.c_str(),
               .program = launch.program.c_str(),
               .argv = argv.data(),
               .envp = envp.data(),
               .account = &launch.account,
               .stdin_fd = devnull,
               .stdout_fd = out.write_fd,
               .stderr_fd = err.write_fd,
               .supervisor_fd = supervision.write_fd};
  const int64_t start_mono_ns = MonotonicNs();
  absl::StatusOr<pid_t> supervisor = Spawn(c, &report);
  ::close(devnull);
  CloseFd(&out.write_fd);
  CloseFd(&err.write_fd);
  CloseFd(&supervision.write_fd);
  if (!supervisor.ok()) return supervisor.status();
  Watcher watcher(launch, *supervisor, start_mono_ns, std::exchange(out.read_fd, -1),
                  std::exchange(err.read_fd, -1), std::exchange(supervision.read_fd, -1));
  return watcher.Run(abort);
}

// ---- Running a tool ---------------------------------------------------------

std::string FirstLine(const std::string& text) {
  absl::string_view t = absl::StripAsciiWhitespace(text);
  size_t nl = t.find('\n');
  return std::string(nl == absl::string_view::npos ? t : t.substr(0, nl));
}

std::string FormatCommand(const std::vector<std::string>& argv) {
  std::vector<std::string> parts;
  for (const std::string& a : argv) {
    bool plain = !a.empty();
    for (char c : a) {
      if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
            std::strchr("-_./=,:*@%+", c) != nullptr)) {
        plain = false;
      }
    }
    if (plain) {
      parts.push_back(a);
    } else {
      std::string q = "'";
      for (char c : a) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
      parts.push_back(q + "'");
    }
  }
  return absl::StrJoin(parts, " ");
}

namespace {

// argv[0] as posix_spawnp would find it: a path with a '/' as it is, else
// the first PATH directory that has it.
absl::StatusOr<std::string> FindProgram(const std::string& name, const std::string& cmd) {
  std::vector<std::string> candidates;
  const char* path = std::getenv("PATH");
  if (name.find('/') != std::string::npos) {
    candidates.push_back(name);
  } else {
    for (absl::string_view dir : absl::StrSplit(path ? path : "", ':', absl::SkipEmpty())) {
      candidates.push_back(absl::StrCat(dir, "/", name));
    }
  }
  bool exists = false;
  for (const std::string& c : candidates) {
    struct stat st;
    if (::stat(c.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    exists = true;
    if (::access(c.c_str(), X_OK) == 0) return c;
  }
  if (exists) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "%s: \"%s\" is not executable (%s); fix its permissions", cmd, name,
        std::strerror(EACCES)));
  }
  return absl::NotFoundError(absl::StrFormat(
      "%s: \"%s\" is not on PATH (%s); install it or put its directory on PATH", cmd, name,
      path ? path : "PATH unset"));
}

}  // namespace

absl::StatusOr<CommandOutput> RunCommand(const std::vector<std::string>& argv, int timeout_ms) {
  if (argv.empty() || argv[0].empty()) {
    return absl::InvalidArgumentError("RunCommand: empty argument vector");
  }
  if (timeout_ms <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: timeout_ms %d must be positive", FormatCommand(argv), timeout_ms));
  }
  const std::string cmd = FormatCommand(argv);
  ASSIGN_OR_RETURN(std::string program, FindProgram(argv[0], cmd));
  // The agent's one process runner (agent/workloads/command_process.h): own
  // process group, nothing inherited but the pipes, SIGKILL to all it
  // started at the timeout, and no waiting on a tool stuck in the kernel (a
  // hung Lustre) past a second after that.
  ProcessLaunch launch{.program = program,
                       .argv = argv,
                       .env = spawn::OwnEnvironment(),
                       .dir = "/",
                       .account = spawn::OwnAccount(),
                       .timeout = absl::Milliseconds(timeout_ms),
                       .kill_grace = absl::ZeroDuration(),
                       .reap_timeout = absl::Seconds(1),
                       .tail_bytes = static_cast<uint32_t>(kMaxCommandOutputBytes)};
  ASSIGN_OR_RETURN(v1::CommandResult r, RunProcess(launch, nullptr));
  CommandOutput out;
  out.stdout_text = r.stdout_tail();
  out.stderr_text = r.stderr_tail();
  out.run_duration_ns = r.real_ns();
  if (r.timed_out()) {
    return absl::DeadlineExceededError(absl::StrFormat(
        "%s: still running after %d ms; killed%s%s", cmd, timeout_ms,
        out.stderr_text.empty() ? "" : "; stderr: ", FirstLine(out.stderr_text)));
  }
  if (r.signal() != 0) {
    out.exit_code = 128 + r.signal();
    return absl::InternalError(absl::StrFormat("%s: killed by signal %d%s%s", cmd, r.signal(),
                                               out.stderr_text.empty() ? "" : "; stderr: ",
                                               FirstLine(out.stderr_text)));
  }
  out.exit_code = r.exit_code();
  if (out.exit_code != 0) {
    return absl::InternalError(absl::StrFormat(
        "%s: exit code %d; stderr: %s", cmd, out.exit_code,
        out.stderr_text.empty() ? std::string("(empty)") : FirstLine(out.stderr_text)));
  }
  return out;
}

}  // namespace lockstep
