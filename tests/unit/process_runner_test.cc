// The agent's one process runner on real child processes: exit status and
// signal, times and max RSS, the deadline (SIGTERM, then SIGKILL), the output
// cap, the exact environment and directory, the abort flag, a missing
// program, and the descendants that left the program's process group
// (setsid), which die with it, at its timeout and with its starter.
#include "common/process_runner.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <string>

#include "absl/strings/str_format.h"
#include "assert_eventually.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;
using testing::WaitForExit;

ProcessLaunch Launch(std::vector<std::string> argv) {
  ProcessLaunch l;
  l.program = argv[0];
  l.argv = std::move(argv);
  l.env = {"PATH=/usr/bin:/bin"};
  l.dir = "/";
  l.account = {.name = "self", .uid = ::geteuid(), .gid = ::getegid()};
  l.timeout = absl::Seconds(20);
  return l;
}

// Whether `pid` is gone: no process, or a zombie nobody reaped would still
// answer kill(pid, 0); the supervisor reaps, so ESRCH is the one answer.
bool Gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

// The pid a program wrote to `path` ("echo $$ > path": one write, the
// newline last), or -1 while there is no whole line.
pid_t ReadPid(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  if (!std::getline(f, line) || f.eof() || line.empty()) return -1;
  for (char c : line) {
    if (c < '0' || c > '9') return -1;
  }
  return static_cast<pid_t>(std::stol(line));
}

// A shell line that starts a sleeper in a session of its own (setsid: out of
// the program's process group), waits until it has written its pid to the
// FIFO `fifo`, and writes that pid to `pid_file`.
std::string StartDaemon(const std::string& fifo, const std::string& pid_file) {
  return absl::StrFormat(
      "setsid /bin/sh -c 'echo $$ > %s; exec sleep 300' & read p < %s; echo $p > %s", fifo, fifo,
      pid_file);
}

// Expects `pid` gone within 5 s (polled); otherwise SIGKILLs it, still
// there (a sleeper left would run for 300 s). A pid seen gone is not
// touched again: it may be another process's by then.
void ExpectGone(pid_t pid, const std::string& what) {
  bool gone = false;
  EXPECT_EVENTUALLY_WITHIN(std::chrono::seconds(5), [&] {
    gone = Gone(pid);
    EXPECT_TRUE(gone);
  }) << what << " (pid " << pid << ") outlived it";
  if (!gone) ::kill(pid, SIGKILL);
}

TEST(ProcessRunner, ExitStatusOfTrueAndFalse) {
  auto t = RunProcess(Launch({"/bin/true"}), nullptr);
  ASSERT_OK(t);
  EXPECT_EQ(t->exit_code(), 0);
  EXPECT_EQ(t->signal(), 0);
  EXPECT_FALSE(t->timed_out());
  EXPECT_GT(t->real_ns(), 0);
  auto f = RunProcess(Launch({"/bin/false"}), nullptr);
  ASSERT_OK(f);
  EXPECT_EQ(f->exit_code(), 1);
  EXPECT_EQ(f->signal(), 0);
}

TEST(ProcessRunner, ABusyProgramHasItsUserAndSysTimesAndMaxRss) {
  // User time in the shell's loop, sys time in head's reads and writes (a
  // child the shell waited for: counted with it).
  ProcessLaunch l = Launch(
      {"/bin/sh", "-c",
       "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; "
       "head -c 400000000 /dev/zero > /dev/null"});
  auto r = RunProcess(l, nullptr);
  ASSERT_OK(r);
  EXPECT_EQ(r->exit_code(), 0);
  EXPECT_GT(r->user_ns(), 0);
  EXPECT_GT(r->sys_ns(), 0);
  EXPECT_GT(r->max_rss_kib(), 0);
  EXPECT_GE(r->real_ns(), r->user_ns() / 2);  // two CPUs at most: the shell, then head
}

TEST(ProcessRunner, ASleepingChildIsKilledAtItsDeadline) {
  ProcessLaunch l = Launch({"/bin/sleep", "30"});
  l.timeout = absl::Milliseconds(200);
  const int64_t start_mono_ns = MonotonicNs();
  auto r = RunProcess(l, nullptr);
  const int64_t took_ms = (MonotonicNs() - start_mono_ns) / 1'000'000;
  ASSERT_OK(r);
  EXPECT_TRUE(r->timed_out());
  EXPECT_EQ(r->signal(), SIGTERM);
  EXPECT_EQ(r->exit_code(), -1);
  EXPECT_GE(r->real_ns(), 200'000'000);
  EXPECT_LT(took_ms, 10'000);  // not the 30 s it asked for
}

TEST(ProcessRunner, AChildIgnoringSigtermGetsSigkillAfterTheGrace) {
  ProcessLaunch l = Launch({"/bin/sh", "-c", "trap '' TERM; exec /bin/sleep 30"});
  l.timeout = absl::Milliseconds(200);
  l.kill_grace = absl::Milliseconds(300);
  auto r = RunProcess(l, nullptr);
  ASSERT_OK(r);
  EXPECT_TRUE(r->timed_out());
  EXPECT_EQ(r->signal(), SIGKILL);
  EXPECT_GE(r->real_ns(), 500'000'000);  // the deadline, then the grace
}

TEST(ProcessRunner, OutputOverTheCapIsTruncatedAndSaysSo) {
  ProcessLaunch l = Launch({"/usr/bin/head", "-c", "100000", "/dev/zero"});
  l.tail_bytes = 1000;
  auto r = RunProcess(l, nullptr);
  ASSERT_OK(r);
  EXPECT_EQ(r->exit_code(), 0);
  EXPECT_EQ(r->stdout_tail().size(), 1000u);  // the last 1000 bytes kept
  EXPECT_EQ(r->stdout_bytes(), 100000u);      // of 100000: truncated
  EXPECT_EQ(r->stderr_bytes(), 0u);
  ProcessLaunch small = Launch({"/bin/sh", "-c", "echo out; echo err >&2"});
  auto s = RunProcess(small, nullptr);
  ASSERT_OK(s);
  EXPECT_EQ(s->stdout_tail(), "out\n");
  EXPECT_EQ(s->stdout_bytes(), 4u);  // all of it kept
  EXPECT_EQ(s->stderr_tail(), "err\n");
}

TEST(ProcessRunner, TheEnvironmentAndDirectoryAreExactlyTheCallers) {
  TempDir tmp;
  ProcessLaunch l = Launch({"/usr/bin/env"});
  l.env = {"ONLY=this"};
  auto env = RunProcess(l, nullptr);
  ASSERT_OK(env);
  EXPECT_EQ(env->stdout_tail(), "ONLY=this\n");
  ProcessLaunch pwd = Launch({"/bin/pwd"});
  pwd.dir = tmp.path();
  auto where = RunProcess(pwd, nullptr);
  ASSERT_OK(where);
  EXPECT_EQ(where->stdout_tail(), tmp.path() + "\n");
}

TEST(ProcessRunner, ADescendantThatLeftTheGroupDiesWhenTheProgramEnds) {
  TempDir tmp;
  ASSERT_EQ(::mkfifo((tmp / "fifo").c_str(), 0600), 0);
  ProcessLaunch l = Launch({"/bin/sh", "-c", StartDaemon(tmp / "fifo", tmp / "pid") + "; exit 0"});
  auto r = RunProcess(l, nullptr);
  const pid_t daemon = ReadPid(tmp / "pid");
  ASSERT_OK(r);
  EXPECT_EQ(r->exit_code(), 0);
  EXPECT_EQ(r->signal(), 0);
  EXPECT_FALSE(r->timed_out());
  ASSERT_GT(daemon, 1) << "the program wrote no pid";
  ExpectGone(daemon, "the setsid sleeper of a program that ended");
}

TEST(ProcessRunner, AnOrphanedGrandchildInASessionOfItsOwnDiesWhenTheProgramEnds) {
  TempDir tmp;
  ASSERT_EQ(::mkfifo((tmp / "fifo").c_str(), 0600), 0);
  // The program starts a middle process in a new session; it starts the leaf
  // and exits at once, so that the leaf is an orphan outside the program's
  // group and session.
  const std::string script = absl::StrFormat(
      "setsid /bin/sh -c '/bin/sh -c \"echo \\$\\$ > %s; exec sleep 300\" & exit 0' & "
      "read p < %s; echo $p > %s; exit 0",
      tmp / "fifo", tmp / "fifo", tmp / "pid");
  auto r = RunProcess(Launch({"/bin/sh", "-c", script}), nullptr);
  const pid_t leaf = ReadPid(tmp / "pid");
  ASSERT_OK(r);
  EXPECT_EQ(r->exit_code(), 0);
  ASSERT_GT(leaf, 1) << "the program wrote no pid";
  ExpectGone(leaf, "the orphaned leaf of a program that ended");
}

TEST(ProcessRunner, ADescendantThatLeftTheGroupDiesAtTheDeadline) {
  TempDir tmp;
  ASSERT_EQ(::mkfifo((tmp / "fifo").c_str(), 0600), 0);
  ProcessLaunch l =
      Launch({"/bin/sh", "-c", StartDaemon(tmp / "fifo", tmp / "pid") + "; exec sleep 300"});
  l.timeout = absl::Seconds(2);
  const int64_t start_mono_ns = MonotonicNs();
  auto r = RunProcess(l, nullptr);
  const int64_t took_ms = (MonotonicNs() - start_mono_ns) / 1'000'000;
  const pid_t daemon = ReadPid(tmp / "pid");
  ASSERT_OK(r);
  EXPECT_TRUE(r->timed_out());
  EXPECT_EQ(r->signal(), SIGTERM);  // the program's own sleep, in its group
  EXPECT_LT(took_ms, 60'000);
  ASSERT_GT(daemon, 1) << "the program wrote no pid within its 2 s";
  ExpectGone(daemon, "the setsid sleeper of a program killed at its timeout");
}

TEST(ProcessRunner, TheProgramAndItsDescendantsDieWithTheirStarter) {
  TempDir tmp;
  ASSERT_EQ(::mkfifo((tmp / "fifo").c_str(), 0600), 0);
  const std::string script =
      absl::StrFormat("echo $$ > %s; %s; exec sleep 300", tmp / "program",
                      StartDaemon(tmp / "fifo", tmp / "pid"));
  // The starter (the agent) is a child of the test, killed with SIGKILL
  // while RunProcess waits.
  const pid_t starter = ::fork();
  ASSERT_GE(starter, 0);
  if (starter == 0) {
    auto r = RunProcess(Launch({"/bin/sh", "-c", script}), nullptr);
    ::_exit(r.ok() ? 0 : 1);
  }
  pid_t program = -1, daemon = -1;
  ASSERT_EVENTUALLY([&] {
    program = ReadPid(tmp / "program");
    daemon = ReadPid(tmp / "pid");
    ASSERT_GT(program, 1);
    ASSERT_GT(daemon, 1);
  }) << "the program did not start its sleeper";
  EXPECT_FALSE(Gone(program));
  EXPECT_FALSE(Gone(daemon));
  ASSERT_EQ(::kill(starter, SIGKILL), 0);
  int status = 0;
  ASSERT_TRUE(WaitForExit(starter, &status, std::chrono::seconds(10)));
  ExpectGone(program, "the program of a starter killed with SIGKILL");
  ExpectGone(daemon, "the setsid sleeper of a starter killed with SIGKILL");
}

TEST(ProcessRunner, AnAbortStopsTheChildWithoutATimeout) {
  std::atomic<bool> abort{true};
  auto r = RunProcess(Launch({"/bin/sleep", "30"}), &abort);
  ASSERT_OK(r);
  EXPECT_FALSE(r->timed_out());
  EXPECT_EQ(r->signal(), SIGTERM);
}

TEST(ProcessRunner, AMissingProgramIsNamedInTheError) {
  auto r = RunProcess(Launch({"/nonexistent/lockstep-no-such-program"}), nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(r.status().message(), HasSubstr("cannot execute the program "
                                              "/nonexistent/lockstep-no-such-program as self"));
  EXPECT_THAT(r.status().message(), HasSubstr("No such file or directory"));
  ProcessLaunch nodir = Launch({"/bin/true"});
  nodir.dir = "/nonexistent-lockstep-dir";
  auto d = RunProcess(nodir, nullptr);
  EXPECT_THAT(d.status().message(), HasSubstr("/nonexistent-lockstep-dir"));
  // Through RunCommand (PATH lookup): NotFound naming it.
  auto tool = RunCommand({"lockstep-no-such-tool"}, 1000);
  EXPECT_EQ(tool.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(tool.status().message(), HasSubstr("\"lockstep-no-such-tool\" is not on PATH"));
}

TEST(ProcessRunner, ProbeChecksTheDirectoryAndProgramAsTheAccount) {
  TempDir tmp;
  const CommandAccount self = {.name = "self", .uid = ::geteuid(), .gid = ::getegid()};
  EXPECT_OK(ProbeAsAccount(tmp.path(), "/bin/true", self));
  absl::Status missing = ProbeAsAccount(tmp.path(), tmp / "nope", self);
  EXPECT_EQ(missing.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(missing.message(), HasSubstr(tmp / "nope"));
}

}  // namespace
}  // namespace lockstep
