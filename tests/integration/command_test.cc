// Command phases end to end (kind = "command"): real agents run a program at
// one instant in their phase directory and report what `time` reports; a
// program an agent does not allow is refused by name and key; a failing
// program names its host, status and stderr; a hanging one is killed at its
// timeout with the children it started; under root it runs as nobody; local
// agents allow the plan's programs; what a program prints is escaped for
// the terminal.
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "assert_eventually.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// Agents that allow `programs` (--allow_command each).
ClusterOptions Allowing(int agents, const std::vector<std::string>& programs) {
  AgentSpec spec;
  for (const std::string& p : programs) spec.flags.insert(spec.flags.end(), {"--allow_command", p});
  return {.agents = std::vector<AgentSpec>(agents, spec)};
}

// Under root the programs run as nobody, which must be able to reach the
// agents' roots (a test directory is 0700).
void OpenToEveryone(const TestCluster& cluster) {
  ::chmod(cluster.path().c_str(), 0755);
  for (int i = 0; i < cluster.size(); ++i) ::chmod(cluster.root(i).c_str(), 0755);
}

PlanPhase CommandPhase(const std::string& name, const std::vector<std::string>& argv) {
  return PlanPhase(name, "command").Set("dir", "cmd").Set("argv", argv);
}

// The CommandResult of each agent's task in phase `index` of test 0.
std::vector<v1::CommandResult> Results(const v1::RunRecord& record, int index = 0) {
  std::vector<v1::CommandResult> out;
  if (record.tests_size() == 0 || record.tests(0).phases_size() <= index) return out;
  for (const v1::AgentPhaseRecord& a : record.tests(0).phases(index).agents()) {
    for (const v1::TaskResult& t : a.tasks()) out.push_back(t.command());
  }
  return out;
}

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
}

TEST(Command, RunsOnTwoAgentsAtOnceInThePhaseDir) {
  // The agents inherit this; the program's clean environment must not.
  ::setenv("LOCKSTEP_TEST_AGENT_ENV", "leaked", 1);
  TestCluster cluster;
  ASSERT_OK(cluster.Start(Allowing(2, {"/bin/sh"})));
  ::unsetenv("LOCKSTEP_TEST_AGENT_ENV");
  OpenToEveryone(cluster);
  const std::string plan = cluster.WritePlan(cluster.Plan().AddPhase(
      CommandPhase("pwd", {"sh", "-c",
                           "pwd; echo \"$GREETING ${LOCKSTEP_TEST_AGENT_ENV:-clean} $LANG\"; "
                           "sleep 1"})
          .Set("env", std::vector<std::string>{"GREETING=hi"})));
  RunResult r = cluster.Run(plan);
  ASSERT_EQ(r.exit_code, 0) << r.Output();
  EXPECT_THAT(r.out, AllOf(HasSubstr(absl::StrFormat("# %s: real 0m1.", cluster.address(0))),
                           HasSubstr(absl::StrFormat("# %s: real 0m1.", cluster.address(1))),
                           HasSubstr("exit 0"), HasSubstr("# command sh: 2 hosts, real min 1.")));
  const v1::RunRecord record = r.Record();
  const std::vector<v1::CommandResult> results = Results(record);
  ASSERT_EQ(results.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const v1::CommandResult& c = results[i];
    EXPECT_EQ(c.exit_code(), 0);
    EXPECT_EQ(c.argv(0), "/bin/sh");  // the bare name, resolved on the agent
    EXPECT_GE(c.real_ns(), 1'000'000'000);
    EXPECT_LT(c.real_ns(), 5'000'000'000);
    EXPECT_EQ(c.stdout_tail(), RealPath(cluster.dir(i, "cmd")) + "\nhi clean C\n");
    EXPECT_EQ(c.stdout_bytes(), c.stdout_tail().size());
  }
  const v1::PhaseRecord& phase = record.tests(0).phases(0);
  EXPECT_EQ(phase.command().hosts(), 2u);
  EXPECT_EQ(phase.command().failed(), 0u);
  EXPECT_GE(phase.command().real_min_s(), 1.0);
  EXPECT_EQ(phase.row().access(), "command");
  // At once (both in the controller's clock): one after the other, the
  // second would have started a second after the first.
  ASSERT_EQ(phase.agents_size(), 2);
  const int64_t apart_ns = phase.agents(0).tasks(0).rdwr_start_unix_ns() -
                           phase.agents(1).tasks(0).rdwr_start_unix_ns();
  EXPECT_LT(std::abs(apart_ns), 500'000'000) << r.Output();
}

TEST(Command, AProgramTheAgentDoesNotAllowIsRefusedByNameAndKey) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start(Allowing(2, {"/bin/sh"})));
  const std::string plan = cluster.WritePlan(
      cluster.Plan().AddPhase(CommandPhase("id", {"/usr/bin/id", "-u"})));
  RunResult r = cluster.Run(plan);
  EXPECT_EQ(r.exit_code, 2) << r.Output();  // a bad plan, before any phase ran
  EXPECT_THAT(r.Output(),
              AllOf(HasSubstr(absl::StrFormat("phase 'id': agent %s", cluster.address(0))),
                    HasSubstr(absl::StrFormat("phase 'id': agent %s", cluster.address(1))),
                    HasSubstr("does not allow /usr/bin/id (it allows: /bin/sh)"),
                    HasSubstr("add \"/usr/bin/id\" to allow_commands in its agent config")));
  EXPECT_FALSE(std::filesystem::exists(cluster.dir(0, "cmd")));
  const std::string bare =
      cluster.WritePlan(cluster.Plan().AddPhase(CommandPhase("cat", {"cat", "/etc/passwd"})));
  r = cluster.Run(bare);
  EXPECT_EQ(r.exit_code, 2) << r.Output();
  EXPECT_THAT(r.Output(), AllOf(HasSubstr("allows no program named cat"),
                                HasSubstr("allow_commands")));
}

TEST(Command, AFailingCommandNamesItsHostStatusAndStderr) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start(Allowing(2, {"/bin/sh"})));
  OpenToEveryone(cluster);
  // Only agent 0's directory holds the file the program looks for.
  for (int i = 0; i < 2; ++i) std::filesystem::create_directory(cluster.dir(i, "cmd"));
  std::ofstream(cluster.dir(0, "cmd") + "/ok") << "x";
  const std::string plan = cluster.WritePlan(cluster.Plan().AddPhase(CommandPhase(
      "check", {"sh", "-c", "echo checking; test -e ok || { echo 'no ok here' >&2; exit 3; }"})));
  RunResult r = cluster.Run(plan);
  EXPECT_EQ(r.exit_code, 5) << r.Output();  // the phase failed, like a task's I/O
  EXPECT_THAT(r.out, AllOf(HasSubstr(absl::StrFormat("# %s: real", cluster.address(0))),
                           HasSubstr(absl::StrFormat("%s: real", cluster.address(1))),
                           HasSubstr("exit 3; stderr: no ok here"),
                           HasSubstr("# command sh: 2 hosts"), HasSubstr("1 failed")));
  EXPECT_THAT(r.Output(), AllOf(HasSubstr(absl::StrFormat("on agent %s", cluster.address(1))),
                                HasSubstr("command /bin/sh on"), HasSubstr("exit 3"),
                                HasSubstr("stderr ends: no ok here")));
  const std::vector<v1::CommandResult> results = Results(r.Record());
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].exit_code(), 0);
  EXPECT_EQ(results[1].exit_code(), 3);
  EXPECT_EQ(results[1].stdout_tail(), "checking\n");
  EXPECT_EQ(results[1].stderr_tail(), "no ok here\n");
}

// A program's output is the user's, and a terminal obeys escape sequences:
// what it printed reaches the operator's screen and run.json escaped
// (controller/run/agent_text.h), its lines kept.
TEST(Command, WhatAProgramPrintsIsEscapedForTheTerminal) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start(Allowing(1, {"/bin/sh"})));
  OpenToEveryone(cluster);
  std::filesystem::create_directory(cluster.dir(0, "cmd"));
  const std::string plan = cluster.WritePlan(cluster.Plan().AddPhase(CommandPhase(
      "loud", {"sh", "-c",
               "printf 'a\\033[2Jb\\nc\\n'; printf 'e\\033]0;t\\007f\\n' >&2; exit 3"})));
  RunResult r = cluster.Run(plan);
  EXPECT_EQ(r.exit_code, 5) << r.Output();
  EXPECT_THAT(r.Output(), AllOf(HasSubstr("e\\x1b]0;t\\x07f"), Not(HasSubstr("\x1b"))));
  const std::vector<v1::CommandResult> results = Results(r.Record());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].stdout_tail(), "a\\x1b[2Jb\nc\n");
  EXPECT_EQ(results[0].stderr_tail(), "e\\x1b]0;t\\x07f\n");
}

// A process is gone: no /proc entry, or a zombie nobody reaps (a container's init).
bool Gone(pid_t pid) {
  std::ifstream stat(absl::StrFormat("/proc/%d/stat", pid));
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

TEST(Command, AHangingCommandIsKilledWithItsChildAtTheTimeout) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start(Allowing(1, {"/bin/sh"})));
  OpenToEveryone(cluster);
  const std::string plan = cluster.WritePlan(cluster.Plan().AddPhase(
      CommandPhase("hang", {"/bin/sh", "-c", "sleep 600 & echo $! > bg.pid; sleep 600"})
          .Set("timeout_seconds", 1)));
  const auto t0 = std::chrono::steady_clock::now();
  RunResult r = cluster.Run(plan);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(r.exit_code, 5) << r.Output();
  EXPECT_LT(took, std::chrono::seconds(30)) << "the run waited for sleep 600";
  EXPECT_THAT(r.Output(), AllOf(HasSubstr("timed out after 1 s, killed with its process group"),
                                HasSubstr("# command sh: 1 host")));
  const std::vector<v1::CommandResult> results = Results(r.Record());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].timed_out());
  EXPECT_GE(results[0].real_ns(), 1'000'000'000);
  EXPECT_LT(results[0].real_ns(), 10'000'000'000);
  // The child the shell put in the background went with it.
  std::ifstream pid_file(cluster.dir(0, "cmd") + "/bg.pid");
  pid_t child = 0;
  ASSERT_TRUE(pid_file >> child) << "the shell wrote no bg.pid";
  ASSERT_GT(child, 0);
  ASSERT_EVENTUALLY_WITHIN(std::chrono::seconds(10), [&] { EXPECT_TRUE(Gone(child)); })
      << "sleep 600 (pid " << child << ") outlived the phase";
}

TEST(Command, AControllerThatDiesTakesTheProgramAndItsChildWithIt) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start(Allowing(1, {"/bin/sh"})));
  OpenToEveryone(cluster);
  const std::string plan = cluster.WritePlan(cluster.Plan().Set("lease_ms", 1000).AddPhase(
      CommandPhase("hang", {"/bin/sh", "-c", "sleep 600 & echo $! > bg.pid; sleep 600"})));
  auto run = cluster.StartRun(plan);
  const std::string pid_path = cluster.dir(0, "cmd") + "/bg.pid";
  pid_t child = 0;
  ASSERT_EVENTUALLY_WITHIN(std::chrono::seconds(20), [&] {
    std::ifstream pid_file(pid_path);
    ASSERT_TRUE(pid_file >> child) << "no " << pid_path << " yet";
  }) << run->Output();
  ASSERT_FALSE(Gone(child));
  run->Signal(SIGKILL);  // no Abort: the agent's lease runs out
  ASSERT_NE(run->Wait(std::chrono::seconds(10)), -1);
  ASSERT_EVENTUALLY_WITHIN(std::chrono::seconds(15), [&] { EXPECT_TRUE(Gone(child)); })
      << "sleep 600 (pid " << child << ") outlived its controller's lease";
  ASSERT_EVENTUALLY([&] { EXPECT_EQ(cluster.AgentState(0), "idle"); });
}

TEST(Command, UnderRootItRunsAsAnUnprivilegedAccount) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: the agent drops to nobody only from root";
  struct passwd* nobody = ::getpwnam("nobody");
  if (nobody == nullptr) GTEST_SKIP() << "no account named nobody on this host";
  TestCluster cluster;
  ASSERT_OK(cluster.Start(Allowing(1, {"/usr/bin/id"})));
  OpenToEveryone(cluster);
  const std::string plan =
      cluster.WritePlan(cluster.Plan().AddPhase(CommandPhase("id", {"id", "-u"})));
  RunResult r = cluster.Run(plan);
  ASSERT_EQ(r.exit_code, 0) << r.Output();
  const std::vector<v1::CommandResult> results = Results(r.Record());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_NE(results[0].stdout_tail(), "0\n");
  EXPECT_EQ(results[0].stdout_tail(), absl::StrFormat("%u\n", nobody->pw_uid));
  EXPECT_EQ(results[0].user(), "nobody");
  // The directory the agent made for the phase belongs to that account.
  struct stat st;
  ASSERT_EQ(::stat(cluster.dir(0, "cmd").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, nobody->pw_uid);
}

TEST(Command, LocalAgentsAllowThePlansProgramsAsTheInvokingUser) {
  TestCluster cluster;
  const std::string plan = cluster.WritePlan(
      "[[phase]]\nname = \"who\"\nkind = \"command\"\ndir = \"cmd\"\n"
      "argv = [\"sh\", \"-c\", \"id -u\"]\n");
  RunResult r = cluster.Lockstep({"run", "--local", "2", "--out", cluster.results_dir(), plan});
  ASSERT_EQ(r.exit_code, 0) << r.Output();
  EXPECT_THAT(r.out, HasSubstr("# local agents allow the plan's programs: /usr/bin/sh\n"));
  const std::vector<v1::CommandResult> results = Results(r.Record());
  ASSERT_EQ(results.size(), 2u);
  for (const v1::CommandResult& c : results) {
    EXPECT_EQ(c.stdout_tail(), absl::StrFormat("%u\n", ::geteuid()));
  }
  // A program that is not on this host is refused before any agent starts.
  const std::string missing = cluster.WritePlan(
      "[[phase]]\nname = \"nope\"\nkind = \"command\"\ndir = \"cmd\"\n"
      "argv = [\"no-such-program-lockstep\"]\n");
  r = cluster.Lockstep({"run", "--local", "2", "--out", cluster.results_dir(), missing});
  EXPECT_EQ(r.exit_code, 2) << r.Output();
  EXPECT_THAT(r.Output(), AllOf(HasSubstr("phase 'nope': no-such-program-lockstep is not an "
                                          "executable program in /usr/local/bin:/usr/bin:/bin"),
                                Not(HasSubstr("Segmentation"))));
}

}  // namespace
}  // namespace lockstep::testing
