#include "common/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/process_runner.h"
#include "common/spawn.h"
#include "common/utf8.h"

namespace lockstep {
namespace {

// How long a ChildProcess is waited for after its SIGKILL.
constexpr absl::Duration kKillReap = absl::Seconds(5);

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const std::vector<std::string>& argv, const std::string& stderr_path) {
  if (argv.empty() || argv[0].empty()) {
    return absl::InvalidArgumentError("ChildProcess: empty argument vector");
  }
  const std::vector<char*> args = spawn::CStrings(argv);
  const std::vector<std::string> env = spawn::OwnEnvironment();
  const std::vector<char*> envp = spawn::CStrings(env);
  const CommandAccount account = spawn::OwnAccount();
  std::string dir = "/";
  if (char* cwd = ::get_current_dir_name()) {
    dir = cwd;
    std::free(cwd);
  }
  const int err_fd =
      spawn::Lift(::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (err_fd < 0) {
    return absl::InternalError(absl::StrFormat("cannot open %s for the stderr of %s: %s",
                                               stderr_path, argv[0], std::strerror(errno)));
  }
  spawn::Pipe out, report;
  const int devnull = spawn::Lift(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (devnull < 0 || !out.Open() || !report.Open()) {
    const int e = errno;
    if (devnull >= 0) ::close(devnull);
    ::close(err_fd);
    return absl::InternalError(
        absl::StrFormat("cannot make the pipes of %s: %s", argv[0], std::strerror(e)));
  }
  spawn::ChildSetup c{.dir = dir.c_str(),
                      .program = argv[0].c_str(),
                      .argv = args.data(),
                      .envp = envp.data(),
                      .account = &account,
                      .stdin_fd = devnull,
                      .stdout_fd = out.write_fd,
                      .stderr_fd = err_fd,
                      .own_group = false,
                      .die_with_thread = false};
  absl::StatusOr<pid_t> pid = spawn::Spawn(c, &report);
  ::close(devnull);
  ::close(err_fd);
  spawn::CloseFd(&out.write_fd);
  if (!pid.ok()) return pid.status();
  return std::unique_ptr<ChildProcess>(
      new ChildProcess(*pid, std::exchange(out.read_fd, -1), argv[0], stderr_path));
}

ChildProcess::ChildProcess(pid_t pid, int stdout_fd, std::string program,
                           std::string stderr_path)
    : pid_(pid),
      pidfd_(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0))),
      stdout_fd_(stdout_fd),
      program_(std::move(program)),
      stderr_path_(std::move(stderr_path)) {}

ChildProcess::~ChildProcess() {
  Stop(kStopGrace);
  spawn::CloseFd(&stdout_fd_);
}

absl::StatusOr<std::string> ChildProcess::WaitForLine(std::string_view prefix,
                                                      absl::Duration timeout) {
  std::string got;
  const int64_t deadline_ns = MonotonicNs() + absl::ToInt64Nanoseconds(timeout);
  while (stdout_fd_ >= 0) {
    const size_t nl = got.find('\n');
    if (nl != std::string::npos) {
      if (std::string_view(got).substr(0, nl).starts_with(prefix)) {
        spawn::CloseFd(&stdout_fd_);
        return got.substr(prefix.size(), nl - prefix.size());
      }
      got.erase(0, nl + 1);
      continue;
    }
    const int64_t left_ms = (deadline_ns - MonotonicNs()) / 1'000'000;
    if (left_ms <= 0) break;
    struct pollfd p = {stdout_fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left_ms, INT32_MAX)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    char buf[512];
    const ssize_t n = ::read(stdout_fd_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the program closed stdout: it exited
    got.append(buf, static_cast<size_t>(n));
  }
  spawn::CloseFd(&stdout_fd_);
  Stop(absl::Milliseconds(200));
  std::string log(2048, '\0');
  if (FILE* f = std::fopen(stderr_path_.c_str(), "r")) {
    log.resize(std::fread(log.data(), 1, log.size(), f));
    std::fclose(f);
  } else {
    log = "(unreadable)";
  }
  return absl::UnavailableError(absl::StrFormat(
      "%s did not print \"%s...\" within %s; its stderr (%s):\n%s", program_,
      std::string(prefix), absl::FormatDuration(timeout), stderr_path_, Utf8Tail(log, 2048)));
}

// `timeout` is finite.
bool ChildProcess::Reap(absl::Duration timeout) {
  const int64_t deadline_ns = MonotonicNs() + absl::ToInt64Nanoseconds(timeout);
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) {
      pid_ = -1;
      spawn::CloseFd(&pidfd_);
      return true;
    }
    const int64_t left_ns = deadline_ns - MonotonicNs();
    if (left_ns <= 0) return false;
    if (pidfd_ >= 0) {
      // Readable once the program has exited.
      struct pollfd p = {pidfd_, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left_ns / 1'000'000 + 1, INT32_MAX)));
    } else {
      // No pidfd (a kernel before 5.3): nothing to wait on but time.
      struct timespec ts = {0, 5'000'000};
      ::nanosleep(&ts, nullptr);
    }
  }
}

void ChildProcess::Stop(absl::Duration grace) {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  ::kill(pid_, SIGCONT);
  if (Reap(grace)) return;
  Kill();
}

void ChildProcess::Signal(int signal) const {
  if (pid_ > 0) ::kill(pid_, signal);  // never kill(-1, ...): every process
}

void ChildProcess::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  if (Reap(kKillReap)) return;
  // Stuck in the kernel (D state on a hung mount): it cannot die yet, and the
  // caller must not hang with it. Reaped in the background whenever it dies.
  const pid_t pid = std::exchange(pid_, -1);
  spawn::CloseFd(&pidfd_);
  std::thread([pid] {
    int st;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
  }).detach();
}

}  // namespace lockstep
