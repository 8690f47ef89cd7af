// Versions across Attach (common/wire_version.h): an agent refuses a
// controller of another wire protocol major with both versions and what to
// upgrade, takes one of its own major (or an older controller that sent
// none), and run.json keeps every agent's versions. A controller drives
// agents of an older minor with the calls they know (Prepare and Start
// before minor 6: the Phase call only where every client serves it).
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "assert_eventually.h"
#include "common/files.h"
#include "common/wire_version.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// agent_probe as a controller that speaks wire protocol `major`.0.
std::string AttachAs(const std::string& address, uint32_t major) {
  CommandResult r = RunCommand({ToolsDir() + "/agent_probe", address, "--attach_wire_major",
                                std::to_string(major)},
                               std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  return r.out;
}

TEST(Versions, AnAgentRefusesAControllerOfAnotherWireMajorNamingBothAndTheFix) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start(1));
  const std::string newer = AttachAs(cluster.address(0), kWireMajor + 1);
  EXPECT_THAT(newer, StartsWith("code 9: version mismatch"));  // FAILED_PRECONDITION
  EXPECT_THAT(newer, HasSubstr(absl::StrFormat("controller lockstep 0.0.0-probe (wire protocol %u.0)",
                                               kWireMajor + 1)));
  EXPECT_THAT(newer, HasSubstr(absl::StrFormat("agent lockstep %s (wire protocol %u.%u)",
                                               LOCKSTEP_VERSION, kWireMajor, kWireMinor)));
  EXPECT_THAT(newer, HasSubstr("upgrade the agent on"));
  EXPECT_THAT(newer, HasSubstr(absl::StrFormat("speaks wire protocol %u", kWireMajor + 1)));
  // The refusal took nothing: the agent is free for the next controller.
  EXPECT_EQ(cluster.AgentState(0), "idle");

  const std::string older = AttachAs(cluster.address(0), kWireMajor + 7);
  EXPECT_THAT(older, HasSubstr("version mismatch"));

  // Its own major, and a controller from before Attach carried versions (0).
  const std::string attached = absl::StrFormat("attached: wire %u.%u agent %s", kWireMajor,
                                               kWireMinor, LOCKSTEP_VERSION);
  EXPECT_THAT(AttachAs(cluster.address(0), kWireMajor), StartsWith(attached));
  EXPECT_THAT(AttachAs(cluster.address(0), 0), StartsWith(attached));
  EXPECT_EQ(cluster.AgentState(0), "idle");  // the probe detached
  ASSERT_EVENTUALLY([&] {
    EXPECT_THAT(ReadFileToString(cluster.log_path(0)).value_or(""),
                HasSubstr("refused Attach of run agent_probe"));
  });
}

TEST(Versions, RunJsonRecordsEveryAgentsVersions) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start(2));
  RunResult r = cluster.Run(cluster.WritePlan(
      cluster.Plan().AddPhase(FilePerProcess("w", "write", "64k", "256k"))));
  ASSERT_EQ(r.exit_code, 0) << r.Output();
  const v1::RunRecord rec = r.Record();
  EXPECT_EQ(rec.lockstep_version(), LOCKSTEP_VERSION);
  ASSERT_EQ(rec.agents_size(), 2);
  for (const v1::AgentRecord& a : rec.agents()) {
    EXPECT_EQ(a.facts().agent_version(), LOCKSTEP_VERSION) << a.address();
    EXPECT_EQ(a.facts().wire_version(), kWireMajor) << a.address();
    EXPECT_EQ(a.facts().wire_minor(), kWireMinor) << a.address();
  }
}

// Agents that report minor 5 get the unary Prepare and the Start call; a
// run with one of them and one of minor 6 does too; both give full results.
TEST(Versions, AgentsOfAnOlderMinorRunWithTheCallsTheyKnow) {
  for (const std::vector<std::string>& minors :
       std::vector<std::vector<std::string>>{{"5", "5"}, {"5", "0"}}) {
    TestCluster cluster;
    std::vector<AgentSpec> agents;
    for (const std::string& minor : minors) {
      agents.push_back({.flags = {"--test_wire_minor", minor}});
    }
    ASSERT_OK(cluster.Start({.agents = agents}));
    RunResult r = cluster.Run(cluster.WritePlan(cluster.Plan().Set("repetitions", 2).AddPhase(
        FilePerProcess("w", "write", "64k", "256k"))));
    ASSERT_EQ(r.exit_code, 0) << r.Output();
    const v1::RunRecord rec = r.Record();
    ASSERT_EQ(rec.agents_size(), 2);
    EXPECT_EQ(rec.agents(0).facts().wire_minor(), 5u);
    EXPECT_EQ(rec.agents(1).facts().wire_minor(), minors[1] == "5" ? 5u : kWireMinor);
    ASSERT_EQ(rec.tests_size(), 1);
    ASSERT_EQ(rec.tests(0).phases_size(), 2);
    for (const v1::PhaseRecord& p : rec.tests(0).phases()) {
      EXPECT_TRUE(p.ok()) << p.error();
      EXPECT_GT(p.start_margin_ns(), 0) << p.phase_id();  // every Start came before its instant
      uint64_t bytes = 0;
      for (const v1::AgentPhaseRecord& a : p.agents()) {
        for (const v1::TaskResult& t : a.tasks()) bytes += t.bytes();
      }
      EXPECT_EQ(bytes, 2u * 256 * 1024) << p.phase_id();
    }
  }
}

}  // namespace
}  // namespace lockstep::testing
