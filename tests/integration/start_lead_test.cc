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

AgentSpec SlowDispatch() {
  return {.flags = {"--test_delay_calls", "prepare,start", "--test_delay_call_ms",
                    std::to_string(kDelayMs), "--allow_drop_caches=false"}};
}

TEST(StartLeadTest, ASlowedDispatchMovesTheInstantInsteadOfMissingIt) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start({.agents = {{}, SlowDispatch()}}));
  const std::string plan = cluster.WritePlan(
      cluster.Plan()
          .Set("name", "slow-dispatch")
          .Set("repetitions", 4)
          .Set("cache", "none")
          .AddPhase(FilePerProcess("w", "write", "64k", "256k").Set("file_name", "testfile")));
  RunResult r = cluster.Run(plan, {"--history=false"});
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

}  // namespace
}  // namespace lockstep::testing
