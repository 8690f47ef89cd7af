// Bounded input (issue 39 items 7, 8, 10): the plan's limits
// (controller/plan/limits.h), checked 64-bit size arithmetic
// (common/checked_math.h) and path-ish keys. Each test is named by the
// attack it refuses.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "common/checked_math.h"
#include "common/files.h"
#include "controller/plan/limits.h"
#include "controller/plan/plan.h"
#include "controller/plan/plan_smoke.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

constexpr char kPhase[] = "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"/scratch\"\n";

std::string Refusal(const std::string& text) {
  auto plan = ParsePlan(text, "p.toml");
  EXPECT_FALSE(plan.ok()) << "accepted:\n" << text.substr(0, 400);
  return plan.ok() ? "" : std::string(plan.status().message());
}

// ---- checked math -----------------------------------------------------------

TEST(CheckedMath, ProductsThatWrapAreRefusedNotTruncated) {
  // 8 PiB x 2048 segments is exactly 2^64: it wrapped to 0 bytes before.
  EXPECT_FALSE(CheckedMul(uint64_t{8} << 50, 2048).has_value());
  EXPECT_EQ(CheckedMul(uint64_t{8} << 50, 1023), (uint64_t{8} << 50) * 1023);
  EXPECT_FALSE(CheckedProduct({4096, uint64_t{8} << 50, 4294967295u}).has_value());
  EXPECT_EQ(CheckedProduct({4096, 1u << 20, 3}), uint64_t{4096} * (1u << 20) * 3);
  EXPECT_EQ(CheckedProduct({}), 1u);
  EXPECT_FALSE(CheckedAdd(UINT64_MAX, 1).has_value());
  EXPECT_EQ(SaturatingMul(UINT64_MAX / 2, 3), UINT64_MAX);
  EXPECT_EQ(SaturatingAdd(UINT64_MAX - 1, 5), UINT64_MAX);
  EXPECT_EQ(SaturatingMul(6, 7), 42u);
}

// ---- item 8: size overflow ----------------------------------------------------

TEST(PlanSizeOverflow, FourThousandTasksOf8PiBBlocksAndMaxSegmentsIsRefusedByKey) {
  const std::string why = Refusal(std::string(kPhase) +
                                  "tasks_per_agent = 4096\ntransfer_size = \"1g\"\n"
                                  "block_size = \"8p\"\nsegments = 4294967295\n");
  EXPECT_THAT(why, HasSubstr("p.toml:8:"));  // the segments line
  EXPECT_THAT(why, HasSubstr("key 'segments'"));
  EXPECT_THAT(why, HasSubstr("block_size 8 PiB"));
  EXPECT_THAT(why, HasSubstr("segments 4294967295"));
  EXPECT_THAT(why, HasSubstr("tasks_per_agent 4096"));
  EXPECT_THAT(why, HasSubstr("overflows 64 bits"));
}

TEST(PlanSizeOverflow, OneTaskOf8PiBTimes2048SegmentsWrapsToZeroAndIsRefused) {
  const std::string why =
      Refusal(std::string(kPhase) + "block_size = \"8p\"\nsegments = 2048\n");
  EXPECT_THAT(why, HasSubstr("key 'segments'"));
  EXPECT_THAT(why, HasSubstr("more than 8 EiB"));
}

TEST(PlanSizeOverflow, BeyondFileOffsetsButWithin64BitsIsRefusedToo) {
  // 2^63 bytes fits in uint64 but not in off_t.
  const std::string why =
      Refusal(std::string(kPhase) + "block_size = \"8p\"\nsegments = 1024\n");
  EXPECT_THAT(why, HasSubstr("8 EiB asked"));
}

TEST(PlanSizeOverflow, ManyAgentsOfAFittingPhaseAreRefusedWhenTheTestIsSplit) {
  // One agent: 2^60 bytes, fine at the plan check; 16 agents: 2^64.
  auto plan = ParsePlan(std::string(kPhase) + "block_size = \"1p\"\nsegments = 1024\n", "p.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(SplitAggregate(*plan, plan->phases[0], 0, 1).ok());
  auto split = SplitAggregate(*plan, plan->phases[0], 0, 16);
  ASSERT_FALSE(split.ok());
  EXPECT_TRUE(absl::IsOutOfRange(split.status()));
  EXPECT_THAT(split.status().message(), HasSubstr("16 client agent(s)"));
  EXPECT_THAT(split.status().message(), HasSubstr("block_size 1 PiB x segments 1024"));
}

TEST(PlanSizeOverflow, DryRunOfHugeMdtestItemsShowsNoWrappedFigure) {
  // md_items 2^40 x 64 MiB = 2^66 bytes: saturated, never "0 bytes".
  auto plan = ParsePlan(
      "[[phase]]\nname = \"m\"\nkind = \"mdtest\"\ndir = \"/s\"\nmd_op = \"file_create\"\n"
      "md_items = 1099511627776\nmd_write_size = \"64m\"\n",
      "p.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::string text = FormatDryRun(*plan, {.clients = 1, .source = "t"}, {});
  EXPECT_THAT(text, HasSubstr("16 EiB/agent"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr(" 0 bytes/agent")));
}

// ---- item 7: bounded input ----------------------------------------------------

TEST(PlanBounds, AHugeNameStringIsRefusedWithKeyLineAndLimit) {
  const std::string why =
      Refusal("[run]\nname = \"" + std::string(kMaxPlanStringBytes + 1, 'x') + "\"\n" + kPhase);
  EXPECT_THAT(why, HasSubstr("p.toml:2:"));
  EXPECT_THAT(why, HasSubstr("run name"));
  EXPECT_THAT(why, HasSubstr("4097 bytes"));
  EXPECT_THAT(why, HasSubstr("4 KiB"));
  EXPECT_LT(why.size(), 1000u);  // the value is not echoed
}

TEST(PlanBounds, AHugeKeyIsRefusedWithoutEchoingIt) {
  const std::string why = Refusal(std::string(kPhase) + std::string(100000, 'k') + " = 1\n");
  EXPECT_THAT(why, HasSubstr("a key of 100000 bytes"));
  EXPECT_LT(why.size(), 1000u);
}

TEST(PlanBounds, CommandArgvHasItsOwnLargerBound) {
  const std::string ok_arg(kMaxPlanStringBytes * 2, 'a');  // longer than a plan string
  auto plan = ParsePlan(std::string("[[phase]]\nname = \"c\"\nkind = \"command\"\ndir = \"/s\"\n"
                                    "argv = [\"/bin/true\", \"") + ok_arg + "\"]\n",
                        "p.toml");
  if (!plan.ok()) {
    EXPECT_THAT(plan.status().message(), ::testing::Not(HasSubstr("4 KiB")));
  }
}

TEST(PlanBounds, MorePhasesThanTheLimitAreRefusedBeforeTheyAreRead) {
  std::string text;
  for (uint64_t i = 0; i <= kMaxPlanPhases; ++i) {
    text += "[[phase]]\nname = \"p" + std::to_string(i) + "\"\nkind = \"write\"\ndir = \"/s\"\n";
  }
  const std::string why = Refusal(text);
  EXPECT_THAT(why, HasSubstr("10001 [[phase]] tables"));
  EXPECT_THAT(why, HasSubstr("the most a plan may have is 10000"));
}

TEST(PlanBounds, ASweepLongerThanTheLimitIsRefusedWithItsKey) {
  std::string values;
  for (uint64_t i = 0; i <= kMaxSweepPoints; ++i) values += (i ? ", " : "") + std::to_string(i % 7 + 1);
  const std::string why = Refusal(std::string(kPhase) + "segments = [" + values + "]\n");
  EXPECT_THAT(why, HasSubstr("p.toml:5:"));
  EXPECT_THAT(why, HasSubstr("segments: 100001 values"));
  EXPECT_THAT(why, HasSubstr("100000"));
}

TEST(PlanBounds, SweepPointsTimesRepetitionsBeyondTheLimitAreRefused) {
  std::string values;
  for (int i = 0; i < 101; ++i) values += (i ? ", " : "") + std::to_string(i % 7 + 1);
  const std::string why = Refusal("[run]\nrepetitions = 10000\n" + std::string(kPhase) +
                                  "segments = [" + values + "]\n");
  EXPECT_THAT(why, HasSubstr("101 test(s) x 1 phase(s) x 10000 repetition(s) = 1010000"));
  EXPECT_THAT(why, HasSubstr("1000000"));
}

TEST(PlanBounds, DevZeroAsAPlanIsReadWithABoundAndRefused) {
  auto text = ReadFileAtMost("/dev/zero", 1 << 20, "a plan file");
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(text.status().message(), HasSubstr("/dev/zero: more than 1 MiB"));
  EXPECT_THAT(text.status().message(), HasSubstr("a plan file"));
  auto plan = LoadPlan("/dev/zero");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("more than 16 MiB, the most a plan file may be"));
}

TEST(PlanBounds, AFileOfExactlyTheBoundIsRead) {
  char path[] = "/tmp/lockstep-bound-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "abcd", 4), 4);
  ::close(fd);
  EXPECT_EQ(*ReadFileAtMost(path, 4, "x"), "abcd");
  EXPECT_FALSE(ReadFileAtMost(path, 3, "x").ok());
  ::unlink(path);
}

// ---- item 10: path-ish keys ---------------------------------------------------

class PathishFileName : public ::testing::TestWithParam<const char*> {};

TEST_P(PathishFileName, IsRefusedAtThePlanCheckWithKeyLineAndValue) {
  const std::string why = Refusal(std::string(kPhase) + "file_name = \"" + GetParam() + "\"\n");
  EXPECT_THAT(why, HasSubstr("p.toml:5:"));
  EXPECT_THAT(why, HasSubstr("key 'file_name'"));
  EXPECT_THAT(why, HasSubstr("plain file name"));
}

INSTANTIATE_TEST_SUITE_P(DotDotDotEmptySlashNul, PathishFileName,
                         ::testing::Values("..", ".", "", "x/..", "../x", "/etc/passwd",
                                           "a\\u0000b"));

TEST(PathishKeys, DotDotFileNameNamesTheValue) {
  EXPECT_THAT(Refusal(std::string(kPhase) + "file_name = \"..\"\n"),
              HasSubstr("\"..\" names a directory, not a file"));
  EXPECT_THAT(Refusal(std::string(kPhase) + "file_name = \"a\\u0000b\"\n"),
              HasSubstr("\"a\\0b\" has a NUL byte"));
}

TEST(PathishKeys, DatasetFilePrefixDotDotIsRefused) {
  const std::string why =
      Refusal("[[phase]]\nname = \"g\"\nkind = \"datagen\"\ndir = \"/s\"\nformat = \"npz\"\nnum_files = 2\n"
              "record_size = \"4k\"\nfile_prefix = \"..\"\n");
  EXPECT_THAT(why, HasSubstr("key 'file_prefix'"));
  EXPECT_THAT(why, HasSubstr("\"..\" names a directory"));
}

TEST(PathishKeys, DirWithNulIsRefused) {
  const std::string why =
      Refusal("[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"/s\\u0000/etc\"\n");
  EXPECT_THAT(why, HasSubstr("key 'dir'"));
  EXPECT_THAT(why, HasSubstr("NUL"));
}

// ---- the lease, sized to the agents when the plan names none -----------------

TEST(RunLease, GrowsWithTheAgentsBeyond2500OnlyWhenThePlanNamesNone) {
  EXPECT_EQ(LeaseMsForAgents(1), 5000u);
  EXPECT_EQ(LeaseMsForAgents(1024), 5000u);
  EXPECT_EQ(LeaseMsForAgents(2500), 5000u);
  EXPECT_EQ(LeaseMsForAgents(2501), 5002u);
  EXPECT_EQ(LeaseMsForAgents(10000), 20000u);
  EXPECT_EQ(LeaseMsForAgents(size_t{1} << 40), kMaxLeaseMs);  // no wrap at absurd counts
  auto unnamed = ParsePlan(kPhase, "p.toml");
  ASSERT_TRUE(unnamed.ok()) << unnamed.status();
  EXPECT_FALSE(unnamed->lease_ms_given);
  auto named = ParsePlan(std::string("[run]\nlease_ms = 5000\n") + kPhase, "p.toml");
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_TRUE(named->lease_ms_given);  // the default's value, but chosen: kept at any scale
}

}  // namespace
}  // namespace lockstep
