// Shared by the unit and integration tests: status assertions, temporary
// directories, running a command, a loopback socket, and
// (assert_eventually.h) retrying a block of assertions until it passes.
#ifndef LOCKSTEP_TESTS_TEST_UTIL_H_
#define LOCKSTEP_TESTS_TEST_UTIL_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "assert_eventually.h"
#include "common/unique_fd.h"
#include "gtest/gtest.h"

#define ASSERT_OK(expr)                                   \
  do {                                                    \
    const ::absl::Status _s = ::lockstep::testing::AsStatus(expr); \
    ASSERT_TRUE(_s.ok()) << _s.ToString();                \
  } while (0)
#define EXPECT_OK(expr)                                   \
  do {                                                    \
    const ::absl::Status _s = ::lockstep::testing::AsStatus(expr); \
    EXPECT_TRUE(_s.ok()) << _s.ToString();                \
  } while (0)

namespace lockstep::testing {

// A sanitizer build (tests/sanitize.sh) runs several times slower: timing
// bounds are loosened there, since it checks memory and thread safety, not
// timing.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif

inline absl::Status AsStatus(const absl::Status& s) { return s; }
template <typename T>
absl::Status AsStatus(const absl::StatusOr<T>& s) { return s.status(); }

// "OK" when `result` holds a value, else its error message, which must be an
// InvalidArgument (a failure names `input`): what a parser's refusal says.
template <typename T>
std::string ErrorOrOk(const absl::StatusOr<T>& result, const std::string& input = "") {
  if (result.ok()) return "OK";
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << input;
  return std::string(result.status().message());
}

// A fresh directory, removed with everything below it at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = "/tmp/lockstep-test-XXXXXX";
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Waits up to `timeout` for the child `pid` to exit and reaps it into
// *status; false if it still runs. Sleeps in poll(2) on a pidfd, woken by the
// exit itself.
inline bool WaitForExit(pid_t pid, int* status, std::chrono::milliseconds timeout) {
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return ::waitpid(pid, status, 0) == pid;  // no pidfd (Linux < 5.3): no timeout
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int ready = 0;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p = {fd, POLLIN, 0};
    ready = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
    if (ready >= 0 || errno != EINTR) break;
  }
  ::close(fd);
  return ready > 0 && ::waitpid(pid, status, 0) == pid;
}

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  bool timed_out = false;      // killed (SIGKILL) at the timeout; exit_code is then 128 + 9
};

// Runs argv (no shell) to completion, or until `timeout` (zero: none) and
// then kills it; captures stdout and stderr (with `merge_stderr`, both into
// `out`, interleaved as a terminal shows them).
inline CommandResult RunCommand(const std::vector<std::string>& argv,
                                std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
                                bool merge_stderr = false) {
  CommandResult r;
  char out_tmpl[] = "/tmp/lockstep-out-XXXXXX";
  char err_tmpl[] = "/tmp/lockstep-err-XXXXXX";
  int out_fd = ::mkstemp(out_tmpl);
  int err_fd = ::mkstemp(err_tmpl);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_fd, 1);
    ::dup2(merge_stderr ? out_fd : err_fd, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  if (timeout.count() > 0) {
    if (!WaitForExit(pid, &status, timeout)) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
  } else {
    ::waitpid(pid, &status, 0);
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  auto slurp = [](int fd) {
    std::string s;
    ::lseek(fd, 0, SEEK_SET);
    char buf[65536];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof(buf))) > 0) s.append(buf, static_cast<size_t>(n));
    ::close(fd);
    return s;
  };
  r.out = slurp(out_fd);
  r.err = slurp(err_fd);
  ::unlink(out_tmpl);
  ::unlink(err_tmpl);
  return r;
}

// Milliseconds and seconds on the steady clock from t0 to t1 (now).
inline double MsSince(std::chrono::steady_clock::time_point t0,
                      std::chrono::steady_clock::time_point t1 = std::chrono::steady_clock::now()) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}
inline double SecondsSince(std::chrono::steady_clock::time_point t0) { return MsSince(t0) / 1000; }

// A measured time as "[TAG] WHAT: N ms" on stdout and as the test's
// property WHAT (ctest --output-on-failure, or the XML).
inline void ReportMs(const char* tag, const std::string& what, double ms) {
  std::printf("[%s] %s: %.0f ms\n", tag, what.c_str(), ms);
  std::fflush(stdout);
  ::testing::Test::RecordProperty(what, std::to_string(static_cast<int64_t>(ms + 0.5)) + " ms");
}

// A TCP socket bound to 127.0.0.1 on a free port; listening if asked (with
// that backlog: connections it does not accept). port() is 0 when it could
// not be set up.
class LoopbackSocket {
 public:
  explicit LoopbackSocket(bool listen, int backlog = 4)
      : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (fd_.get() < 0 || ::bind(fd_.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
        (listen && ::listen(fd_.get(), backlog) != 0) ||
        ::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      return;
    }
    port_ = ntohs(a.sin_port);
  }
  int port() const { return port_; }

 private:
  UniqueFd fd_;
  int port_ = 0;
};

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_TEST_UTIL_H_
