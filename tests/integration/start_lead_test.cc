// The start instant is planned from the measured cost of reaching every
// agent: with a slowed dispatch (the agents hold every Prepare and Start for
// kDelayMs: tests' --test_delay_calls) no phase's instant is missed, the
// lead grows to the delivery instead, and run.json says how each lead was
// planned (PhaseRecord.lead_basis, lead_needed_ns, lead_capped).
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;

constexpr int kDelayMs = 60;

// An agent that holds each of `calls` (tests' --test_delay_calls) for `ms`.
AgentSpec SlowAgent(const std::string& calls, int ms) {
  return {.flags = {"--test_delay_calls", calls, "--test_delay_call_ms", std::to_string(ms),
                    "--allow_drop_caches=false"}};
}

// `repetitions` write phases of plan `name` on `cluster` (already started).
RunResult RunWrites(TestCluster& cluster, const std::string& name, int repetitions) {
  const std::string plan = cluster.WritePlan(
      cluster.Plan()
          .Set("name", name)
          .Set("repetitions", repetitions)
          .Set("cache", "none")
          .AddPhase(FilePerProcess("w", "write", "64k", "256k").Set("file_name", "testfile")));
  return cluster.Run(plan, {"--history=false"});
}

TEST(StartLeadTest, ASlowedDispatchMovesTheInstantInsteadOfMissingIt) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start({.agents = {{}, SlowAgent("prepare,start", kDelayMs)}}));
  RunResult r = RunWrites(cluster, "slow-dispatch", 4);
  ASSERT_EQ(r.exit_code, 0) << r.Output();
  EXPECT_THAT(r.Output(), ::testing::Not(HasSubstr("after the instant"))) << r.Output();
  v1::RunRecord rec = r.Record();
  ASSERT_EQ(rec.tests_size(), 1);
  ASSERT_EQ(rec.tests(0).phases_size(), 4);
  for (int i = 0; i < 4; ++i) {
    const v1::PhaseRecord& p = rec.tests(0).phases(i);
    SCOPED_TRACE(p.phase_id());
    // The slowed agent had its Start before the instant, in every phase.
    EXPECT_GT(p.start_margin_ns(), 0) << p.lead_basis();
    EXPECT_GT(p.lead_ns(), int64_t{kDelayMs} * 1'000'000) << p.lead_basis();
    EXPECT_FALSE(p.lead_capped());
    EXPECT_EQ(p.lead_needed_ns(), p.lead_ns());
    EXPECT_THAT(p.lead_basis(), HasSubstr(i == 0 ? "Prepare round" : "observed"));
  }
}

// An agent whose Start takes longer than the first phase's lead (planned
// from a fast Prepare round) cannot be on time: the controller says so
// before the instant, from the acknowledgements it has (wire minor 7), names
// the agent, records it, and the run goes on; the next lead covers the
// delivery it saw, and that phase's check finds every Start acknowledged.
TEST(StartLeadTest, AStartThatCannotArriveInTimeIsSaidBeforeTheInstant) {
  constexpr int kStartDelayMs = 1500;
  TestCluster cluster;
  ASSERT_OK(cluster.Start({.agents = {{}, SlowAgent("start", kStartDelayMs)}}));
  RunResult r = RunWrites(cluster, "late-start", 2);
  ASSERT_EQ(r.exit_code, 0) << r.Output();
  v1::RunRecord rec = r.Record();
  ASSERT_EQ(rec.tests_size(), 1);
  ASSERT_EQ(rec.tests(0).phases_size(), 2);
  const v1::PhaseRecord& first = rec.tests(0).phases(0);
  ASSERT_LT(first.lead_ns(), int64_t{kStartDelayMs} * 1'000'000) << first.lead_basis();
  EXPECT_GT(first.start_check_before_ns(), 0);
  EXPECT_GE(first.starts_unacknowledged(), 1u);
  EXPECT_THAT(first.start_late_warning(), HasSubstr("had not acknowledged their Start"));
  EXPECT_THAT(first.start_late_warning(), HasSubstr(cluster.address(1)));
  EXPECT_THAT(r.Output(), HasSubstr(first.start_late_warning()));
  EXPECT_LT(first.start_margin_ns(), 0) << "the slowed agent was late";

  const v1::PhaseRecord& second = rec.tests(0).phases(1);
  EXPECT_GT(second.lead_ns(), int64_t{kStartDelayMs} * 1'000'000) << second.lead_basis();
  EXPECT_GT(second.start_check_before_ns(), 0);
  EXPECT_EQ(second.starts_unacknowledged(), 0u) << second.start_late_warning();
  EXPECT_EQ(second.start_late_warning(), "");
  EXPECT_GT(second.start_margin_ns(), 0);
}

}  // namespace
}  // namespace lockstep::testing
