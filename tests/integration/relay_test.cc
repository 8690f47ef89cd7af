// Agents behind latency relays (tests/tools/latency_relay.cc): the plan lists
// the relays' addresses, so every controller↔agent message crosses 5 ± 1 ms
// each way. Checks that a phase completes and that the recorded clock delay
// reflects the ~10 ms round trip. No timing assertions on start skew.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "absl/strings/str_format.h"
#include "controller/run/local_agents.h"
#include "gtest/gtest.h"
#include "integration/agent_process_util.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

std::string ToolsDir() { return LOCKSTEP_TOOLS_DIR; }

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
  TempDir tmp;
  std::vector<std::unique_ptr<AgentProcess>> agents;
  std::vector<std::unique_ptr<Relay>> relays;
  std::string tables;
  for (int i = 0; i < 2; ++i) {
    std::string root = tmp / absl::StrFormat("root%d", i);
    std::filesystem::create_directories(root + "/data");
    agents.push_back(std::make_unique<AgentProcess>(root));
    ASSERT_TRUE(agents.back()->ok());
    relays.push_back(std::make_unique<Relay>(agents.back()->address(),
                                             tmp / absl::StrFormat("relay%d.log", i)));
    ASSERT_TRUE(relays.back()->ok());
    ASSERT_NE(relays.back()->address(), agents.back()->address());
    tables += absl::StrFormat("[[agent]]\naddress = \"%s\"\n", relays.back()->address());
  }
  const std::string plan = tmp / "plan.toml";
  std::ofstream(plan) << "[run]\nname = \"relay\"\nrepetitions = 2\n" << tables << R"(
[[phase]]
name = "w"
kind = "write"
dir = "data"
file_per_process = true
tasks_per_agent = 2
transfer_size = "64k"
block_size = "1m"
fsync = true

[[phase]]
name = "r"
kind = "read"
dir = "data"
file_per_process = true
tasks_per_agent = 2
transfer_size = "64k"
block_size = "1m"
verify = true
)";
  CommandResult r = RunLockstep({"run", "--insecure", "--out", tmp / "results", plan});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  v1::RunRecord rec = ReadRunJson(RunDirFromOutput(r.out));
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
