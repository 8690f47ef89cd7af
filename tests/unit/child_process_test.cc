// ChildProcess (common/child_process.h) on real child processes: the ready
// line, a program that dies or stays silent before it, one that ignores
// SIGTERM, a missing program, and what the child inherits (the starter's
// process group; no descriptor but its stdio).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "assert_eventually.h"
#include "common/clock.h"
#include "common/child_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

// Whether `pid` is gone: no process, or a zombie nobody reaped would still
// answer kill(pid, 0); ChildProcess reaps, so ESRCH is the one answer.
bool Gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

// `script` run by /bin/sh, its stderr in dir/err.log.
absl::StatusOr<std::unique_ptr<ChildProcess>> StartSh(const TempDir& dir,
                                                      const std::string& script) {
  return ChildProcess::Start({"/bin/sh", "-c", script}, dir.path() + "/err.log");
}

TEST(ChildProcess, ReturnsTheRestOfTheReadyLineAndStopsTheProgram) {
  TempDir dir;
  auto child = StartSh(dir, "echo starting; echo 'listening on 127.0.0.1:4242'; exec sleep 60");
  ASSERT_OK(child);
  auto line = (*child)->WaitForLine("listening on ", absl::Seconds(20));
  ASSERT_OK(line);
  EXPECT_EQ(*line, "127.0.0.1:4242");
  const pid_t pid = (*child)->pid();
  ASSERT_GT(pid, 0);
  EXPECT_FALSE(Gone(pid));
  (*child)->Stop(absl::Seconds(5));
  EXPECT_FALSE((*child)->running());
  EXPECT_TRUE(Gone(pid));
  (*child)->Stop(absl::Seconds(5));  // idempotent
}

TEST(ChildProcess, AProgramThatExitsFirstIsReportedWithItsStderr) {
  TempDir dir;
  const std::string log = dir.path() + "/err.log";
  auto child = StartSh(dir, "echo 'bad flag --x' >&2; exit 3");
  ASSERT_OK(child);
  const int64_t start_ns = MonotonicNs();
  auto line = (*child)->WaitForLine("listening on ", absl::Seconds(20));
  ASSERT_FALSE(line.ok());
  EXPECT_EQ(line.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(line.status().message(), HasSubstr("/bin/sh did not print \"listening on ...\""));
  EXPECT_THAT(line.status().message(), HasSubstr(log));
  EXPECT_THAT(line.status().message(), HasSubstr("bad flag --x"));
  // Seen when stdout closed, not at the 20 s deadline.
  EXPECT_LT(MonotonicNs() - start_ns, 15'000'000'000);
  EXPECT_FALSE((*child)->running());
}

TEST(ChildProcess, ASilentProgramIsStoppedAtTheDeadline) {
  TempDir dir;
  auto child = ChildProcess::Start({"/bin/sleep", "60"}, dir.path() + "/err.log");
  ASSERT_OK(child);
  const pid_t pid = (*child)->pid();
  auto line = (*child)->WaitForLine("listening on ", absl::Milliseconds(200));
  ASSERT_FALSE(line.ok());
  EXPECT_THAT(line.status().message(), HasSubstr("within 200ms"));
  EXPECT_FALSE((*child)->running());
  EXPECT_TRUE(Gone(pid));
}

TEST(ChildProcess, OneThatIgnoresSigtermIsKilledAfterTheGrace) {
  TempDir dir;
  auto child = StartSh(dir, "trap '' TERM; echo ready; while :; do sleep 1; done");
  ASSERT_OK(child);
  ASSERT_OK((*child)->WaitForLine("ready", absl::Seconds(20)));
  const pid_t pid = (*child)->pid();
  const int64_t start_ns = MonotonicNs();
  (*child)->Stop(absl::Milliseconds(300));
  EXPECT_GE(MonotonicNs() - start_ns, 300'000'000);  // it had its grace
  EXPECT_TRUE(Gone(pid));
}

TEST(ChildProcess, AMissingProgramIsNamed) {
  TempDir dir;
  auto child = ChildProcess::Start({"/nonexistent/lockstep-agent"}, dir.path() + "/err.log");
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(child.status().message(), HasSubstr("/nonexistent/lockstep-agent"));
  EXPECT_THAT(child.status().message(), HasSubstr("No such file or directory"));
}

TEST(ChildProcess, AnUnwritableStderrFileIsNamed) {
  auto child = ChildProcess::Start({"/bin/true"}, "/nonexistent/dir/err.log");
  ASSERT_FALSE(child.ok());
  EXPECT_THAT(child.status().message(), HasSubstr("/nonexistent/dir/err.log"));
}

TEST(ChildProcess, KeepsTheStartersGroupAndInheritsOnlyItsStdio) {
  TempDir dir;
  // A descriptor the starter left inheritable (no O_CLOEXEC).
  const int leak = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(leak, 0);
  auto child = ChildProcess::Start({"/bin/sleep", "60"}, dir.path() + "/err.log");
  ::close(leak);
  ASSERT_OK(child);
  const pid_t pid = (*child)->pid();
  const std::string proc = "/proc/" + std::to_string(pid);
  // Until execve, /proc shows the forked copy of this test.
  ASSERT_EVENTUALLY([&] {
    std::error_code ec;
    EXPECT_EQ(std::filesystem::read_symlink(proc + "/exe", ec).filename(), "sleep");
  });
  EXPECT_EQ(::getpgid(pid), ::getpgrp());
  // Right after execve the dynamic loader holds a library open for a moment
  // (fd 3; seen once in the suite): polled until only what lasts is left.
  // An inherited descriptor never goes away, and fails this.
  ASSERT_EVENTUALLY([&] {
    std::set<std::string> fds;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(proc + "/fd", ec)) {
      fds.insert(e.path().filename().string());
    }
    ASSERT_FALSE(ec) << ec.message();
    EXPECT_EQ(fds, (std::set<std::string>{"0", "1", "2"}));
  });
  std::error_code ec0;
  EXPECT_EQ(std::filesystem::read_symlink(proc + "/fd/0", ec0), "/dev/null");
  EXPECT_EQ(std::filesystem::read_symlink(proc + "/fd/2", ec0), dir.path() + "/err.log");
}

TEST(ChildProcess, TheDestructorStopsItAndKillIsACrash) {
  TempDir dir;
  pid_t pid = -1;
  {
    auto child = ChildProcess::Start({"/bin/sleep", "60"}, dir.path() + "/err.log");
    ASSERT_OK(child);
    pid = (*child)->pid();
  }
  EXPECT_TRUE(Gone(pid));
  auto child = ChildProcess::Start({"/bin/sleep", "60"}, dir.path() + "/err.log");
  ASSERT_OK(child);
  pid = (*child)->pid();
  (*child)->Kill();
  EXPECT_FALSE((*child)->running());
  EXPECT_TRUE(Gone(pid));
}

// Signal reaches the running program (SIGSTOP: state T, SIGCONT: running
// again) and is a no-op once it was reaped (pid -1 would mean every process).
TEST(ChildProcess, SignalReachesTheProgramWhileItRuns) {
  TempDir dir;
  auto child = ChildProcess::Start({"/bin/sleep", "60"}, dir.path() + "/err.log");
  ASSERT_OK(child);
  const std::string stat = "/proc/" + std::to_string((*child)->pid()) + "/stat";
  auto state = [&] {
    std::ifstream f(stat);
    std::string line;
    std::getline(f, line);
    const size_t close = line.rfind(')');
    return close == std::string::npos || close + 2 >= line.size() ? '?' : line[close + 2];
  };
  (*child)->Signal(SIGSTOP);
  ASSERT_EVENTUALLY([&] { EXPECT_EQ(state(), 'T'); });
  (*child)->Signal(SIGCONT);
  ASSERT_EVENTUALLY([&] { EXPECT_EQ(state(), 'S'); });
  (*child)->Kill();
  EXPECT_EQ((*child)->pid(), -1);
  (*child)->Signal(SIGTERM);  // nothing to signal; this test process goes on
}

}  // namespace
}  // namespace lockstep
