// End to end: three lockstep-agent processes on loopback, the real
// `lockstep` binary, real files.
#include <sys/resource.h>
#include <sys/stat.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <set>

#include "absl/strings/str_format.h"
#include "common/files.h"
#include "common/pattern.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "assert_eventually.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class RunTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK(cluster_.Start(3)); }

  // A one-phase plan on the first `agents` agents.
  std::string OnePhase(const PlanPhase& phase, int agents = 3) {
    std::vector<int> which;
    for (int i = 0; i < agents; ++i) which.push_back(i);
    return cluster_.WritePlan(cluster_.Plan(which).AddPhase(phase));
  }

  TestCluster cluster_;
};

TEST_F(RunTest, WritesReadsAndReportsLikeIor) {
  std::string plan = cluster_.WritePlan(
      cluster_.Plan()
          .Set("name", "e2e")
          .Set("repetitions", 2)
          .AddPhase(FilePerProcess("w", "write", "64k", "1m")
                        .Set("tasks_per_agent", {1, 2})
                        .Set("segments", 2)
                        .Set("fsync", true)
                        .Set("keep", true))
          .AddPhase(FilePerProcess("r", "read", "64KiB", 1048576)  // sizes in other spellings
                        .Set("tasks_per_agent", {1, 2})
                        .Set("segments", 2)
                        .Set("verify", true)
                        .Set("keep", true)));
  RunResult r = cluster_.Run(plan);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Summary of all tests:"));
  EXPECT_THAT(r.out, HasSubstr("Max Write: "));
  EXPECT_THAT(r.out, HasSubstr("Max Read:  "));
  EXPECT_THAT(r.out, HasSubstr("access              : file-per-process"));

  // Files of the last test (2 tasks per agent, 6 ranks): agent i holds ranks
  // 2i and 2i+1, each 2 segments × 1 MiB, with the pattern of its writer.
  for (int i = 0; i < 3; ++i) {
    std::vector<std::string> want = {absl::StrFormat("testfile.%08d", 2 * i),
                                     absl::StrFormat("testfile.%08d", 2 * i + 1)};
    // Test 0 (1 task per agent) wrote ranks 0..2 and they were kept too.
    if (i < 3) want.push_back(absl::StrFormat("testfile.%08d", i));
    std::sort(want.begin(), want.end());
    want.erase(std::unique(want.begin(), want.end()), want.end());
    EXPECT_EQ(cluster_.Files(i), want) << "agent " << i;
    for (int rank : {2 * i, 2 * i + 1}) {
      std::string f = cluster_.dir(i) + absl::StrFormat("/testfile.%08d", rank);
      EXPECT_EQ(std::filesystem::file_size(f), 2u << 20);
      auto content = ReadFileToString(f);
      ASSERT_OK(content);
      std::string scratch(content->size(), '\0');
      auto m = CheckPattern(content->data(), content->size(), 0, PatternTag(1, rank),
                            scratch.data());
      EXPECT_FALSE(m.has_value()) << f << ": " << m->Describe();
    }
  }

  // The summary agrees with run.json, and run.json with the IOR arithmetic.
  const std::string& dir = r.run_dir;
  ASSERT_FALSE(dir.empty()) << r.out;
  v1::RunRecord rec = r.Record();
  EXPECT_EQ(rec.status(), "complete");
  EXPECT_EQ(rec.agents_size(), 3);
  ASSERT_EQ(rec.tests_size(), 2);
  EXPECT_TRUE(std::filesystem::exists(dir + "/plan.toml"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/summary.txt"));
  EXPECT_EQ(*ReadFileToString(dir + "/summary.txt"), r.out);
  for (const v1::TestRecord& t : rec.tests()) {
    ASSERT_EQ(t.phases_size(), 4);  // (w, r) × 2 repetitions
    for (const v1::PhaseRecord& p : t.phases()) {
      EXPECT_TRUE(p.ok()) << p.error();
      EXPECT_EQ(p.row().bytes(), p.row().expected_bytes());
      EXPECT_EQ(p.row().bytes(), uint64_t{t.total_tasks()} * 2 * (1 << 20));
      int64_t min_open = INT64_MAX, max_close = 0;
      int tasks = 0;
      for (const auto& a : p.agents()) {
        for (const auto& task : a.tasks()) {
          min_open = std::min(min_open, task.open_start_unix_ns());
          max_close = std::max(max_close, task.close_stop_unix_ns());
          ++tasks;
        }
      }
      EXPECT_EQ(tasks, static_cast<int>(t.total_tasks()));
      EXPECT_NEAR(p.row().total_s(), static_cast<double>(max_close - min_open) / 1e9, 1e-9);
      EXPECT_NEAR(p.row().bw_mib(), p.row().bytes() / 1048576.0 / p.row().total_s(), 1e-6);
    }
    ASSERT_EQ(t.summary_size(), 2);
    const v1::SummaryRow& w = t.summary(0);
    EXPECT_EQ(w.operation(), "write");
    double a = t.phases(0).row().bw_mib(), b = t.phases(2).row().bw_mib();
    EXPECT_NEAR(w.bw_max_mib(), std::max(a, b), 1e-6);
    EXPECT_NEAR(w.bw_mean_mib(), (a + b) / 2, 1e-6);
    EXPECT_NEAR(w.bw_std_mib(), std::fabs(a - b) / 2, 1e-6);  // population SD of two
    // The printed row carries the same figures.
    EXPECT_THAT(r.out, HasSubstr(absl::StrFormat("write     %10.2f %10.2f", w.bw_max_mib(),
                                                 w.bw_min_mib())));
  }
}

// A sweep over other keys than tasks_per_agent: each test runs its values,
// records its sweep point and prints it in its header.
TEST_F(RunTest, SweepsTransferSizeAndFsync) {
  std::string plan = cluster_.WritePlan(
      cluster_.Plan({0, 1})
          .Set("name", "sweep")
          .AddPhase(FilePerProcess("w", "write", "64k", "1m")
                        .Set("transfer_size", TomlValue::Strings({"64k", "256k"}))
                        .Set("fsync", TomlValue::Bools({false, true}))
                        .Set("keep", true)));
  RunResult r = cluster_.Run(plan);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Sweep               : transfer_size=64k fsync=false"));
  EXPECT_THAT(r.out, HasSubstr("Sweep               : transfer_size=256k fsync=true"));
  v1::RunRecord rec = r.Record();
  ASSERT_EQ(rec.tests_size(), 2);
  const uint64_t want_xfer[] = {64 << 10, 256 << 10};
  for (int t = 0; t < 2; ++t) {
    const v1::TestRecord& test = rec.tests(t);
    ASSERT_EQ(test.sweep_size(), 2);
    EXPECT_EQ(test.sweep(0).key(), "transfer_size");
    EXPECT_EQ(test.sweep(0).phase(), "");  // the plan's only phase
    EXPECT_EQ(test.sweep(1).value(), t == 0 ? "false" : "true");
    ASSERT_GT(test.phases_size(), 0);
    EXPECT_EQ(test.phases(0).spec().transfer_bytes(), want_xfer[t]);
    EXPECT_EQ(test.phases(0).spec().fsync_at_end(), t == 1);
    ASSERT_EQ(test.summary_size(), 1);
    EXPECT_EQ(test.summary(0).transfer_bytes(), want_xfer[t]);
  }
}

TEST_F(RunTest, RemovesFilesUnlessKept) {
  std::string plan = cluster_.WritePlan(
      cluster_.Plan()
          .AddPhase(PlanPhase("w", "write").Set("transfer_size", "64k").Set("block_size", "256k"))
          .AddPhase(PlanPhase("r", "read").Set("transfer_size", "64k").Set("block_size", "256k")));
  RunResult r = cluster_.Run(plan);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("\n# remove    "));
  EXPECT_THAT(r.out, HasSubstr("single-shared-file"));
  for (int i = 0; i < cluster_.size(); ++i) EXPECT_TRUE(cluster_.Files(i).empty()) << i;
}

TEST_F(RunTest, UnreachableAgentIsNamedAndNothingIsLeftBehind) {
  std::string plan = cluster_.WritePlan(cluster_.Plan({0})
                                            .Set("connect_timeout_ms", 500)
                                            .AddAgent("127.0.0.1:1")
                                            .AddPhase(PlanPhase("w", "write")));
  RunResult r = cluster_.Run(plan);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("agent 127.0.0.1:1 cannot be reached: Connection refused"));
  EXPECT_TRUE(cluster_.Files(0).empty());
  // The good agent was never taken: another run can use it at once.
  EXPECT_EQ(cluster_.Run(OnePhase(PlanPhase("w", "write"), 1)).exit_code, 0);
}

// A fleet mostly down: the channels connect together and share one
// deadline, so 200 refused agents cost one connect_timeout_ms, not one per
// turn of the 32 waiting threads (7 turns of 1 s here before); the error
// names the first 20 and counts the rest.
TEST_F(RunTest, ManyUnreachableAgentsShareOneConnectDeadline) {
  PlanBuilder plan_builder = cluster_.Plan({0}).Set("connect_timeout_ms", 1000);
  for (int i = 2; i < 202; ++i) plan_builder.AddAgent(absl::StrFormat("127.0.0.%d:1", i));
  const std::string plan = cluster_.WritePlan(plan_builder.AddPhase(PlanPhase("w", "write")));
  const auto t0 = std::chrono::steady_clock::now();
  RunResult r = cluster_.Run(plan);
  const double seconds = SecondsSince(t0);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("agent 127.0.0.2:1 cannot be reached"));
  EXPECT_THAT(r.err, HasSubstr("... and 180 more of the 201 agents"));
  EXPECT_THAT(r.err, Not(HasSubstr("agent 127.0.0.201:1 cannot")));
  EXPECT_LT(seconds, 5.0) << "200 unreachable agents took " << seconds << " s to refuse";
  EXPECT_TRUE(cluster_.Files(0).empty());
}

// A plan that names no lease_ms gets one sized to its agents beyond 2,500
// (controller/plan/limits.h LeaseMsForAgents), said in the run's notes
// before the agents are reached; a plan's own lease_ms is kept. 2,501
// refused addresses: the run fails at connect, after the note.
TEST_F(RunTest, TheLeaseGrowsWithTheAgentsUnlessThePlanNamesIt) {
  struct rlimit fds {};
  if (::getrlimit(RLIMIT_NOFILE, &fds) != 0 || fds.rlim_max < 4096) {
    GTEST_SKIP() << "needs a hard RLIMIT_NOFILE of 4096 for 2,501 channels";
  }
  for (const bool named : {false, true}) {
    SCOPED_TRACE(named ? "lease_ms named" : "lease_ms not named");
    PlanBuilder plan_builder = cluster_.Plan({}).Set("connect_timeout_ms", 200);
    if (named) plan_builder.Set("lease_ms", 5000);
    for (int i = 0; i < 2501; ++i) {
      plan_builder.AddAgent(absl::StrFormat("127.0.%d.%d:1", 1 + i / 250, 1 + i % 250));
    }
    RunResult r = cluster_.Run(cluster_.WritePlan(plan_builder.AddPhase(PlanPhase("w", "write"))));
    EXPECT_EQ(r.exit_code, 3) << r.err.substr(0, 2000);
    const std::string note = "lease 5002 ms for 2501 agents (2 ms per agent beyond 2500";
    if (named) {
      EXPECT_THAT(r.out, Not(HasSubstr(note)));
    } else {
      EXPECT_THAT(r.out, HasSubstr(note));
    }
    EXPECT_THAT(r.err, HasSubstr("... and 2481 more of the 2501 agents"));
  }
}

TEST_F(RunTest, DirectoryOutsideRootsOrMissing) {
  RunResult outside = cluster_.Run(OnePhase(PlanPhase("w", "write").Set("dir", "/etc")));
  EXPECT_EQ(outside.exit_code, 2) << outside.out << outside.err;
  EXPECT_THAT(outside.err, HasSubstr("directory /etc is outside the agent's allowed roots"));
  EXPECT_THAT(outside.err, HasSubstr("agent 127.0.0.1:"));

  RunResult escape = cluster_.Run(OnePhase(PlanPhase("w", "write").Set("dir", "data/../..")));
  EXPECT_EQ(escape.exit_code, 2);
  EXPECT_THAT(escape.err, HasSubstr("outside the agent's allowed roots"));

  // Missing and outside: refused for the roots, not "does not exist; create it".
  RunResult missing_outside =
      cluster_.Run(OnePhase(PlanPhase("w", "write").Set("dir", "/etc/lockstep-missing/d")));
  EXPECT_EQ(missing_outside.exit_code, 2);
  EXPECT_THAT(missing_outside.err, HasSubstr("outside the agent's allowed roots"));
  EXPECT_THAT(missing_outside.err, Not(HasSubstr("create it")));

  RunResult missing = cluster_.Run(OnePhase(PlanPhase("w", "write").Set("dir", "nope")));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("nope does not exist"));
  for (int i = 0; i < cluster_.size(); ++i) EXPECT_TRUE(cluster_.Files(i).empty());
}

TEST_F(RunTest, ReadOfMissingFilesNamesFileAndTask) {
  RunResult r = cluster_.Run(OnePhase(PlanPhase("r", "read").Set("file_per_process", true)));
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("testfile.0000000"));
  EXPECT_THAT(r.err, HasSubstr("does not exist"));
  v1::RunRecord rec = r.Record();
  EXPECT_EQ(rec.status(), "failed");
  EXPECT_THAT(rec.error(), HasSubstr("does not exist"));
}

// Written by hand: the expected position is that of this text.
TEST_F(RunTest, PlanErrorsExitTwoWithPosition) {
  RunResult r = cluster_.Run(cluster_.WritePlan(
      "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"d\"\ntasks_per_agent = 0\n"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(":5:19: [[phase]] 'w' key 'tasks_per_agent'"));
}

// `lockstep run --local N`: the controller starts its own agents.
TEST(LocalRun, EmbeddedDefaultRunsTheSamplePlan) {
  TestCluster none;
  RunResult r = none.Lockstep({"run", "--local", "2", "--out", none.results_dir(),
                               SourceDir() + "/deploy/plans/quickstart.toml"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("\nwrite "));
  EXPECT_THAT(r.out, HasSubstr("\nread "));
  EXPECT_THAT(r.out, HasSubstr("# agents: 2 (2 client)"));
  EXPECT_EQ(r.Record().status(), "complete");
}

// One host, one scan of its processes: only the first local agent lists
// the busiest ones (the others would list the same, each scan costing a
// read of every /proc/PID/stat).
TEST(LocalRun, OnlyTheFirstLocalAgentListsTheHostsProcesses) {
  TestCluster none;
  // Enough writing for each agent's own CPU to show in 10 ms ticks.
  std::string plan = none.WritePlan(PlanBuilder().AddPhase(
      FilePerProcess("w", "write", "1m", "96m").Set("dir", "d").Set("fsync", true)));
  RunResult r = none.Lockstep({"run", "--local", "3", "--out", none.results_dir(), plan});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const v1::RunRecord rec = r.Record();
  ASSERT_EQ(rec.tests_size(), 1);
  ASSERT_EQ(rec.tests(0).phases_size(), 1);
  const v1::PhaseRecord& p = rec.tests(0).phases(0);
  ASSERT_EQ(p.agents_size(), 3);
  ASSERT_EQ(rec.agents_size(), 3);
  for (int i = 0; i < 3; ++i) {
    const v1::AgentPhaseRecord& a = p.agents(i);
    ASSERT_TRUE(a.has_telemetry_brief()) << a.address();
    if (a.address() == rec.agents(0).address()) {
      EXPECT_GT(a.telemetry_brief().top_processes_size(), 0)
          << "the first local agent saw no process use CPU over the phase";
    } else {
      EXPECT_EQ(a.telemetry_brief().top_processes_size(), 0) << a.address();
    }
  }
}

TEST(LocalRun, InsecureToARemoteAddressIsRefused) {
  TestCluster none;
  std::string plan = none.WritePlan(PlanBuilder()
                                        .AddAgent("node7.example:7070")
                                        .AddPhase(PlanPhase("w", "write").Set("dir", "d")));
  RunResult r = none.Run(plan);  // --insecure: the cluster has no TLS
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--insecure is allowed only for loopback agents"));
  RunResult no_tls = none.Lockstep({"run", "--out", none.results_dir(), plan});
  EXPECT_EQ(no_tls.exit_code, 2);
  EXPECT_THAT(no_tls.err, HasSubstr("no TLS material"));
}

// With --local the user runs both sides: the plan's absolute directories
// are the agents' roots (created if missing, as IOR creates its files);
// relative ones stay below the temporary root.
TEST(LocalRun, TrustsThePlansAbsoluteDirectories) {
  TestCluster none;
  const std::string data = none / "not/yet/there";
  std::string plan = none.WritePlan(PlanBuilder().AddPhase(
      FilePerProcess("w", "write", "64k", "64k").Set("dir", data).Set("keep", true)));
  RunResult r = none.Lockstep({"run", "--local", "1", "--out", none.results_dir(), plan});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(ListFiles(data), std::vector<std::string>{"testfile.00000000"});

  plan = none.WritePlan(PlanBuilder().AddPhase(PlanPhase("w", "write").Set("dir", "../up")));
  r = none.Lockstep({"run", "--local", "1", "--out", none.results_dir(), plan});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("dir \"../up\" climbs out of the local agents' root; with "
                               "--local use an absolute dir, or --local_root DIR"));
}

// /tmp/lockstep-local-* directories, and the processes whose command line
// names `dir` (the local agents get --local_dir DIR).
std::set<std::string> LocalDirs() {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/tmp", ec)) {
    if (e.path().filename().string().rfind("lockstep-local-", 0) == 0) out.insert(e.path());
  }
  return out;
}
std::vector<int> ProcessesNaming(const std::string& dir) {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    auto cmdline = ReadFileToString(e.path() / "cmdline");
    if (!cmdline.ok() || cmdline->find(dir + '\0') == std::string::npos) continue;
    if (!Exited(std::stoi(pid))) out.push_back(std::stoi(pid));
  }
  return out;
}

// Issue 39: `lockstep run --local 2` killed by SIGKILL mid-phase. Its
// agents (root, on loopback) must not stay for another controller to use:
// they die with it (parent-death signal) and remove the temporary directory
// (root, logs; the certificates were gone already).
TEST(LocalRun, AgentsDieWithTheirKilledControllerAndLeaveNoDirectory) {
  TestCluster none;
  const std::set<std::string> before = LocalDirs();
  std::string plan = none.WritePlan(PlanBuilder().AddPhase(
      FilePerProcess("w", "write", "1m", "4g").Set("dir", "d")));
  auto ctl = none.StartLockstep(
      {"run", "--local", "2", "--history=false", "--out", none.results_dir(), plan});
  std::string dir;
  ASSERT_EVENTUALLY_WITHIN(std::chrono::seconds(20), [&] {
    std::set<std::string> now = LocalDirs();
    std::vector<std::string> added;
    std::set_difference(now.begin(), now.end(), before.begin(), before.end(),
                        std::back_inserter(added));
    ASSERT_EQ(added.size(), 1u) << ctl->Output();
    dir = added[0];
    ASSERT_EQ(ProcessesNaming(dir).size(), 2u) << ctl->Output();
    // Mid-phase: the agents are writing.
    ASSERT_FALSE(ListFiles(dir + "/root/d").empty()) << ctl->Output();
  });
  // Only this controller could reach them: TLS with certificates already
  // deleted, no plaintext.
  EXPECT_FALSE(std::filesystem::exists(dir + "/tls"));
  for (int pid : ProcessesNaming(dir)) {
    auto cmdline = ReadFileToString(absl::StrFormat("/proc/%d/cmdline", pid));
    ASSERT_TRUE(cmdline.ok());
    EXPECT_THAT(*cmdline, Not(HasSubstr("--insecure")));
    EXPECT_THAT(*cmdline, HasSubstr("--tls_cert"));
  }
  ctl->Signal(SIGKILL);
  ASSERT_NE(ctl->Wait(std::chrono::seconds(5)), -1);
  EXPECT_EVENTUALLY_WITHIN(std::chrono::seconds(10), [&] {
    EXPECT_TRUE(ProcessesNaming(dir).empty()) << "agents of " << dir << " still run";
    EXPECT_FALSE(std::filesystem::exists(dir)) << dir << " is still there";
  });
}

// Issue 39: a plan's names reach terminals and text files with their
// control characters escaped: no ESC (clear screen, title) and no U+202E
// (right-to-left override) in the output, summary.txt included.
TEST(LocalRun, TerminalEscapesInPlanNamesArePrintedEscaped) {
  TestCluster none;
  std::string plan = none.WritePlan(
      "[run]\nname = \"evil\\u001b]0;pwned\\u0007\"\n"
      "[[phase]]\nname = \"w\\u001b[2J\\u202Egnp.exe\"\nkind = \"write\"\ndir = \"d\"\n");
  RunResult r = none.Lockstep({"run", "--local", "2", "--history=false", "--out",
                               none.results_dir(), plan});
  ASSERT_EQ(r.exit_code, 0) << r.Output();
  auto summary = ReadFileToString(r.run_dir + "/summary.txt");
  ASSERT_TRUE(summary.ok()) << r.Output();
  for (const std::string* text : {&r.out, &r.err, &*summary}) {
    EXPECT_EQ(text->find('\x1b'), std::string::npos) << *text;
    EXPECT_EQ(text->find('\x07'), std::string::npos) << *text;
    EXPECT_EQ(text->find("\xe2\x80\xae"), std::string::npos) << *text;  // U+202E
  }
  EXPECT_THAT(r.out, HasSubstr("w\\x1b[2J\\u202egnp.exe"));
}

}  // namespace
}  // namespace lockstep::testing
