// A slowed agent (lockstep-agent --test_delay_per_transfer_us) against the
// tools that must notice: compare and gate on real runs, and the I/O stall
// detector for a transfer that does not come back.
#include <chrono>

#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;

AgentSpec Delayed(uint32_t delay_us) {
  return {.flags = {"--test_delay_per_transfer_us", std::to_string(delay_us)}};
}

// Five repetitions of a 4 MiB file-per-process write on `agents`.
std::string NightlyPlan(TestCluster& cluster, const std::vector<int>& agents,
                        int io_stall_timeout_ms = 0) {
  PlanBuilder plan = cluster.Plan(agents).Set("name", "nightly").Set("repetitions", 5);
  if (io_stall_timeout_ms > 0) plan.Set("io_stall_timeout_ms", io_stall_timeout_ms);
  return cluster.WritePlan(plan.AddPhase(FilePerProcess("w", "write", "64k", "4m")));
}

TEST(SlowAgentTest, CompareFlagsTheDropAndTheGateFailsWithJUnit) {
  // Baseline: two normal agents. Then the same plan with one agent whose
  // every transfer takes 2 ms longer (64 transfers per task: ~130 ms more).
  TestCluster cluster;
  ASSERT_OK(cluster.Start(2));
  const std::string db = cluster / "history.db";
  RunResult base = cluster.Run(NightlyPlan(cluster, {0, 1}), {"--db", db});
  ASSERT_EQ(base.exit_code, 0) << base.out << base.err;
  ASSERT_OK(cluster.AddAgent(Delayed(2000)));  // agent 2
  RunResult worse = cluster.Run(NightlyPlan(cluster, {0, 2}), {"--db", db});
  ASSERT_EQ(worse.exit_code, 0) << worse.out << worse.err;

  const std::string a = base.run_dir + "/run.json", b = worse.run_dir + "/run.json";
  RunResult cmp = cluster.Lockstep({"compare", "--db", db, a, b});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.out << cmp.err;
  EXPECT_THAT(cmp.out, HasSubstr("w/write"));
  EXPECT_THAT(cmp.out, HasSubstr(" *")) << cmp.out;  // significant at p < 0.05
  EXPECT_THAT(cmp.out, HasSubstr("Welch"));

  const std::string junit = cluster / "gate.xml";
  RunResult gate = cluster.Lockstep({"gate", "--db", db, b, "--baseline", a, "--max-drop", "5%",
                                     "--junit", junit});
  EXPECT_EQ(gate.exit_code, 1) << gate.out << gate.err;
  auto xml = ReadFileToString(junit);
  ASSERT_OK(xml);
  EXPECT_THAT(*xml, HasSubstr("<testsuites"));
  EXPECT_THAT(*xml, HasSubstr("<failure"));
  EXPECT_THAT(*xml, HasSubstr("write"));

  // The baseline against itself passes: no drop, nothing flagged.
  RunResult same = cluster.Lockstep({"gate", "--db", db, a, "--baseline", a, "--max-drop", "5%"});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  // No baseline at all: its own exit code.
  RunResult none =
      cluster.Lockstep({"gate", "--db", cluster / "empty.db", b, "--baseline", "last-good"});
  EXPECT_EQ(none.exit_code, 3) << none.out << none.err;
}

TEST(SlowAgentTest, AStuckTransferIsReportedWithItsFileAndOffset) {
  // Every transfer of this agent takes 30 s: with io_stall_timeout_ms = 600
  // the controller gives up on it, names the task, file and offset, and does
  // not wait for it (no cleanup call can finish behind a stuck transfer).
  TestCluster cluster;
  ASSERT_OK(cluster.Start({.agents = {Delayed(30'000'000)}}));
  const auto t0 = std::chrono::steady_clock::now();
  RunResult r = cluster.Run(NightlyPlan(cluster, {0}, 600), {"--history=false"});
  const double seconds = SecondsSince(t0);
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;  // a hung agent counts as lost
  EXPECT_THAT(r.err, HasSubstr("I/O stalled beyond io_stall_timeout_ms = 600"));
  EXPECT_THAT(r.err, HasSubstr("task 0 stuck in write"));
  EXPECT_THAT(r.err, HasSubstr("data/testfile.00000000 at offset 0"));
  EXPECT_LT(seconds, 25.0) << "the controller waited for the stuck transfer";
}

}  // namespace
}  // namespace lockstep::testing
