// [run] client_agents through real agents: each test runs on the first N
// client agents, and a count the run cannot meet is refused before any test.
#include <chrono>
#include <string>

#include "assert_eventually.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(ClientAgentsRun, EachTestRunsOnTheFirstNClients) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start(3));
  const std::string plan = cluster.WritePlan(
      cluster.Plan()
          .Set("client_agents", {1, 3, 2})
          .AddPhase(FilePerProcess("w", "write", "64k", "256k").Set("tasks_per_agent", {2, 1, 1})));
  RunResult r = cluster.Run(plan);
  ASSERT_EQ(r.exit_code, 0) << r.Output();
  const v1::RunRecord rec = r.Record();
  ASSERT_EQ(rec.tests_size(), 3);
  const int want_agents[] = {1, 3, 2};
  const int want_tasks[] = {2, 3, 2};
  for (int t = 0; t < 3; ++t) {
    const v1::TestRecord& test = rec.tests(t);
    EXPECT_EQ(test.client_agents(), static_cast<uint32_t>(want_agents[t])) << t;
    EXPECT_EQ(test.total_tasks(), static_cast<uint32_t>(want_tasks[t])) << t;
    ASSERT_EQ(test.phases_size(), 1);
    const v1::PhaseRecord& p = test.phases(0);
    ASSERT_EQ(p.agents_size(), want_agents[t]) << t;
    // The first N agents, in plan order.
    for (int i = 0; i < want_agents[t]; ++i) EXPECT_EQ(p.agents(i).address(), cluster.address(i));
    EXPECT_EQ(p.row().bytes(), uint64_t{256} * 1024 * want_tasks[t]) << t;
  }
}

TEST(ClientAgentsRun, MoreThanTheRunHasIsRefusedBeforeAnyTest) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start(2));
  // No [[agent]] tables in the plan (so the parser cannot count them): the
  // agents come from --agents.
  const std::string plan = cluster.WritePlan(
      "[run]\nclient_agents = [1, 3]\n[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = "
      "\"data\"\ntasks_per_agent = [1, 1]\n");
  RunResult r = cluster.Lockstep({"run", "--insecure", "--out", cluster.results_dir(), "--agents",
                                  cluster.address(0) + "," + cluster.address(1), plan});
  EXPECT_EQ(r.exit_code, 2) << r.Output();
  EXPECT_THAT(r.Output(), AllOf(HasSubstr("client_agents asks for 3 client agents in test 1"),
                                HasSubstr("the run has 2")));
  EXPECT_EQ(r.Record().tests_size(), 0) << r.Output();
}

// An agent lost while the run goes on without it (on_agent_loss =
// "continue"): a later test that asks for more client agents than are left
// runs on those left, says so, and is partial; the run is not refused.
TEST(ClientAgentsRun, AfterALossALaterTestRunsOnTheAgentsLeft) {
  TestCluster cluster;
  // Agent 0 alone in test 0, slowed so that the kill lands during it.
  ASSERT_OK(cluster.Start({.agents = {{.flags = {"--test_delay_per_transfer_us", "100000"}},
                                      {}, {}}}));
  const std::string plan = cluster.WritePlan(
      cluster.Plan()
          .Set("client_agents", {1, 3})
          .Set("on_agent_loss", "continue")
          .Set("lease_ms", 1000)
          .AddPhase(FilePerProcess("w", "write", "64k", "1m").Set("tasks_per_agent", {1, 1})));
  auto ctl = cluster.StartRun(plan, {"--history=false"});
  ASSERT_EVENTUALLY_WITHIN(std::chrono::milliseconds(15000), [&] {
    ASSERT_GT(cluster.FileBytes(0), 0u) << ctl->Output();
  });
  cluster.Kill(2);
  // A partial run exits as "agent lost" (4), with every result it could get.
  ASSERT_EQ(ctl->Wait(std::chrono::milliseconds(60000)), 4) << ctl->Output();
  EXPECT_THAT(ctl->out(), HasSubstr("test 1: client_agents asks for 3 client agents, 2 are left "
                                    "after the loss: running on 2 (partial)"));
  const v1::RunRecord rec = ctl->Result().Record();
  EXPECT_EQ(rec.status(), "partial") << ctl->Output();
  ASSERT_EQ(rec.tests_size(), 2) << ctl->Output();
  EXPECT_EQ(rec.tests(1).client_agents(), 2u);
}

}  // namespace
}  // namespace lockstep::testing
