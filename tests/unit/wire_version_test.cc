// The compatibility rule of common/wire_version.h and its exit code.
#include "common/wire_version.h"

#include "common/errors.h"
#include "controller/cli/exit_codes.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

TEST(WireVersion, SameMajorWorksWhateverTheMinors) {
  EXPECT_TRUE(CheckWireVersions({1, 0, "0.1.0"}, {1, 5, "0.9.0"}, "n01:7070").ok());
  EXPECT_TRUE(CheckWireVersions({1, 3, "0.4.0"}, {1, 0, ""}, "n01:7070").ok());
  // 0: a peer from before Attach carried versions, which spoke lockstep.v1.
  EXPECT_TRUE(CheckWireVersions({0, 0, ""}, OwnWireVersion(), "n01").ok());
  EXPECT_TRUE(CheckWireVersions(OwnWireVersion(), {0, 0, ""}, "n01").ok());
}

TEST(WireVersion, ANewerControllerSaysUpgradeTheAgent) {
  const absl::Status s = CheckWireVersions({2, 0, "2.0.0"}, {1, 1, "0.1.0"}, "n01:7070");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(KindOf(s), v1::VERSION_MISMATCH);
  EXPECT_THAT(s.message(), HasSubstr("controller lockstep 2.0.0 (wire protocol 2.0)"));
  EXPECT_THAT(s.message(), HasSubstr("agent lockstep 0.1.0 (wire protocol 1.1) on n01:7070"));
  EXPECT_THAT(s.message(), HasSubstr("upgrade the agent on n01:7070 to a lockstep release that "
                                     "speaks wire protocol 2"));
}

TEST(WireVersion, ANewerAgentSaysUpgradeTheController) {
  const absl::Status s = CheckWireVersions({1, 1, "0.1.0"}, {3, 0, ""}, "n02");
  EXPECT_EQ(KindOf(s), v1::VERSION_MISMATCH);
  EXPECT_THAT(s.message(), HasSubstr("agent lockstep of unknown release (wire protocol 3.0)"));
  EXPECT_THAT(s.message(), HasSubstr("upgrade the controller to a lockstep release that speaks "
                                     "wire protocol 3"));
}

TEST(WireVersion, AMismatchHasItsOwnExitCode) {
  EXPECT_EQ(ExitCodeFor(RunFailure::kVersion), kExitVersion);
  EXPECT_EQ(kExitVersion, 8);
}

}  // namespace
}  // namespace lockstep
