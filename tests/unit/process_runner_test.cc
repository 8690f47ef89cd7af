// The agent's one process runner on real child processes: exit status and
// signal, the deadline (SIGTERM, then SIGKILL), the output cap, the exact
// environment and directory, the abort flag, and a missing program.
#include "common/process_runner.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

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
