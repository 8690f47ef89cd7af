// Shared by the unit and integration tests: status assertions, temporary
// directories, running a command and polling a condition with a deadline.
#ifndef LOCKSTEP_TESTS_TEST_UTIL_H_
#define LOCKSTEP_TESTS_TEST_UTIL_H_

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
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

inline absl::Status AsStatus(const absl::Status& s) { return s; }
template <typename T>
absl::Status AsStatus(const absl::StatusOr<T>& s) { return s.status(); }

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

// Polls `cond` until true or `timeout`; returns its last value. For state
// owned by another process, where there is nothing to wait on.
inline bool Eventually(const std::function<bool()>& cond,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto backoff = std::chrono::milliseconds(1);
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(50));
  }
  return cond();
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
    bool exited = Eventually([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, timeout);
    if (!exited) {
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

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_TEST_UTIL_H_
