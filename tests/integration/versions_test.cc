// Versions across Attach (common/wire_version.h): an agent refuses a
// controller of another wire protocol major with both versions and what to
// upgrade, takes one of its own major (or an older controller that sent
// none), and run.json keeps every agent's versions.
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

}  // namespace
}  // namespace lockstep::testing
