// Agents behind latency relays (tests/tools/latency_relay.cc): the plan lists
// the relays' addresses, so every controller↔agent message crosses 5 ± 1 ms
// each way. Checks that a phase completes and that the recorded clock delay
// reflects the ~10 ms round trip. No timing assertions on start skew.
#include <cstdlib>
#include <memory>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

// One latency_relay process in front of `target`; stopped on destruction.
class Relay : public ListeningProcess {
 public:
  Relay(const std::string& target, const std::string& log)
      : ListeningProcess({ToolsDir() + "/latency_relay", "--target", target, "--delay_ms", "5",
                          "--jitter_ms", "1", "--lifetime_s", "600"},
                         log) {
    if (!ok()) ADD_FAILURE() << error();
  }
};

TEST(RelayTest, PhaseCompletesThroughDelayedLinks) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start(2));
  std::vector<std::unique_ptr<Relay>> relays;
  PlanBuilder plan = PlanBuilder().Set("name", "relay").Set("repetitions", 2);
  for (int i = 0; i < 2; ++i) {
    relays.push_back(
        std::make_unique<Relay>(cluster.address(i), cluster / absl::StrFormat("relay%d.log", i)));
    ASSERT_TRUE(relays.back()->ok());
    ASSERT_NE(relays.back()->address(), cluster.address(i));
    plan.AddAgent(relays.back()->address());
  }
  plan.AddPhase(FilePerProcess("w", "write", "64k", "1m")
                    .Set("tasks_per_agent", 2)
                    .Set("fsync", true))
      .AddPhase(FilePerProcess("r", "read", "64k", "1m")
                    .Set("tasks_per_agent", 2)
                    .Set("verify", true));
  RunResult r = cluster.Run(cluster.WritePlan(plan));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  v1::RunRecord rec = r.Record();
  EXPECT_EQ(rec.status(), "complete");
  ASSERT_EQ(rec.agents_size(), 2);
  for (int i = 0; i < 2; ++i) {
    const v1::AgentRecord& a = rec.agents(i);
    EXPECT_EQ(a.address(), relays[i]->address());
    // Each direction waits 4..6 ms, so no round trip is under 8 ms; the upper
    // bound only catches a relay that delays far too much (loaded machine: loose).
    EXPECT_GE(a.clock().delay_ns(), 7'900'000) << a.ShortDebugString();
    EXPECT_LE(a.clock().delay_ns(), 200'000'000) << a.ShortDebugString();
    // Symmetric delays: the offset of one host against itself stays small
    // compared with the delay.
    EXPECT_LE(std::abs(a.clock().offset_ns()), a.clock().delay_ns() / 2 + 1'000'000)
        << a.ShortDebugString();
  }
  ASSERT_EQ(rec.tests_size(), 1);
  ASSERT_EQ(rec.tests(0).phases_size(), 4);
  for (const v1::PhaseRecord& p : rec.tests(0).phases()) {
    EXPECT_TRUE(p.ok()) << p.error();
    EXPECT_EQ(p.row().bytes(), p.row().expected_bytes());
    EXPECT_EQ(p.row().bytes(), 4u << 20);
  }
}

}  // namespace
}  // namespace lockstep::testing
