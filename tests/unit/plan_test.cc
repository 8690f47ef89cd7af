#include "controller/plan.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

constexpr char kGood[] = R"(
[run]
name = "ppa-scaling"
repetitions = 2

[[agent]]
address = "bullet01:7070"
role = "client"

[[agent]]
address = "oss01:7070"
role = "oss"

[[phase]]
name = "seq-write"
kind = "write"
dir = "/lustre/ki/pfs/lockstep"
tasks_per_agent = [1, 3, 8, 16]
transfer_size = "1m"
block_size = "20g"
segments = 1
file_per_process = true
fsync = true
direct = false
keep = false

[[phase]]
name = "seq-read"
kind = "read"
dir = "/lustre/ki/pfs/lockstep"
tasks_per_agent = [1, 3, 8, 16]
transfer_size = "1MiB"
block_size = 21474836480
file_per_process = true
)";

// Error message of parsing `text`, or "OK".
std::string Error(const std::string& text) {
  auto plan = ParsePlan(text, "plan.toml");
  if (plan.ok()) return "OK";
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(plan.status().message());
}

std::string WithPhase(const std::string& extra) {
  return "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"/x\"\n" + extra;
}

TEST(Plan, ParsesTheIssueExample) {
  auto plan = ParsePlan(kGood, "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->name, "ppa-scaling");
  EXPECT_EQ(plan->repetitions, 2u);
  ASSERT_EQ(plan->agents.size(), 2u);
  EXPECT_EQ(plan->agents[1].role, v1::OSS);
  ASSERT_EQ(plan->phases.size(), 2u);
  EXPECT_EQ(plan->tests(), 4u);
  EXPECT_EQ(plan->TasksPerAgent(plan->phases[0], 2), 8u);
  EXPECT_EQ(plan->phases[0].block_bytes, 20ULL << 30);
  EXPECT_EQ(plan->phases[1].block_bytes, 20ULL << 30);
  EXPECT_EQ(plan->phases[1].transfer_bytes, 1ULL << 20);
  EXPECT_TRUE(plan->phases[0].fsync);
  EXPECT_EQ(plan->phases[1].kind, v1::READ);
}

TEST(Plan, DefaultsFollowIor) {
  auto plan = ParsePlan(WithPhase(""), "dir/my-plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->name, "my-plan");
  EXPECT_EQ(plan->phases[0].transfer_bytes, 256u * 1024);
  EXPECT_EQ(plan->phases[0].block_bytes, 1u << 20);
  EXPECT_FALSE(plan->phases[0].file_per_process);
  EXPECT_EQ(plan->tests(), 1u);
  EXPECT_TRUE(plan->agents.empty());
}

TEST(Plan, MalformedTomlNamesLineAndColumn) {
  EXPECT_THAT(Error("[run]\nname = \"x\nrepetitions = 2\n"),
              ::testing::AllOf(HasSubstr("plan.toml:2:"), HasSubstr("malformed TOML")));
}

TEST(Plan, UnknownKeyListsValidOnes) {
  std::string e = Error(WithPhase("blok_size = \"1m\"\n"));
  EXPECT_THAT(e, HasSubstr("plan.toml:5:1"));
  EXPECT_THAT(e, HasSubstr("unknown key 'blok_size'"));
  EXPECT_THAT(e, HasSubstr("block_size"));
  EXPECT_THAT(Error("[runn]\n" + WithPhase("")), HasSubstr("unknown top-level key 'runn'"));
  EXPECT_THAT(Error("[run]\nnmae = 1\n" + WithPhase("")), HasSubstr("unknown key 'nmae' in [run]"));
}

TEST(Plan, WrongType) {
  EXPECT_THAT(Error(WithPhase("fsync = \"yes\"\n")),
              ::testing::AllOf(HasSubstr("key 'fsync'"), HasSubstr("expected true or false, got a string")));
  EXPECT_THAT(Error(WithPhase("segments = \"4\"\n")), HasSubstr("expected an integer, got a string"));
  EXPECT_THAT(Error(WithPhase("transfer_size = 1.5\n")), HasSubstr("got a float"));
}

TEST(Plan, BadSizes) {
  EXPECT_THAT(Error(WithPhase("block_size = \"-1m\"\n")), HasSubstr("negative"));
  EXPECT_THAT(Error(WithPhase("block_size = -5\n")), HasSubstr("cannot be negative"));
  EXPECT_THAT(Error(WithPhase("transfer_size = 0\n")), HasSubstr("greater than zero"));
  EXPECT_THAT(Error(WithPhase("transfer_size = \"1x\"\n")), HasSubstr("unknown unit"));
  EXPECT_THAT(Error(WithPhase("transfer_size = \"3m\"\nblock_size = \"4m\"\n")),
              HasSubstr("not a multiple of transfer"));
  EXPECT_THAT(Error(WithPhase("transfer_size = \"8m\"\nblock_size = \"4m\"\n")),
              HasSubstr("larger than block"));
  EXPECT_THAT(Error(WithPhase("transfer_size = 1001\nblock_size = 2002\n")),
              HasSubstr("multiple of 8"));
  EXPECT_THAT(Error(WithPhase("segments = 0\n")), HasSubstr("out of range"));
}

TEST(Plan, UnknownKind) {
  EXPECT_THAT(Error("[[phase]]\nname = \"w\"\nkind = \"scribble\"\ndir = \"/x\"\n"),
              ::testing::AllOf(HasSubstr("plan.toml:3:"), HasSubstr("\"scribble\" is not a phase kind")));
}

TEST(Plan, TasksPerAgentBounds) {
  EXPECT_THAT(Error(WithPhase("tasks_per_agent = 0\n")), HasSubstr("out of range; use 1 to 4096"));
  EXPECT_THAT(Error(WithPhase("tasks_per_agent = 5000\n")), HasSubstr("out of range"));
  EXPECT_THAT(Error(WithPhase("tasks_per_agent = [1, 0]\n")), HasSubstr("out of range"));
  EXPECT_THAT(Error(WithPhase("tasks_per_agent = []\n")), HasSubstr("the list is empty"));
}

TEST(Plan, SweepsMustAgree) {
  std::string two = WithPhase("tasks_per_agent = [1, 2]\n") +
                    "[[phase]]\nname = \"r\"\nkind = \"read\"\ndir = \"/x\"\ntasks_per_agent = [1, 2, 4]\n";
  EXPECT_THAT(Error(two), HasSubstr("phases of one plan sweep together"));
}

TEST(Plan, RepetitionsMustAgree) {
  std::string two = WithPhase("repetitions = 2\n") +
                    "[[phase]]\nname = \"r\"\nkind = \"read\"\ndir = \"/x\"\nrepetitions = 3\n";
  EXPECT_THAT(Error(two), HasSubstr("a test repeats all its phases together"));
  auto ok = ParsePlan(WithPhase("repetitions = 4\n"), "p.toml");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->repetitions, 4u);
}

TEST(Plan, MissingAndDuplicate) {
  EXPECT_THAT(Error("[run]\nname = \"x\"\n"), HasSubstr("has no [[phase]]"));
  EXPECT_THAT(Error("[[phase]]\nname = \"w\"\nkind = \"write\"\n"), HasSubstr("has no 'dir'"));
  EXPECT_THAT(Error(WithPhase("") + WithPhase("")), HasSubstr("used by two phases"));
  EXPECT_THAT(Error("[[agent]]\naddress = \"a:1\"\n[[agent]]\naddress = \"a:1\"\n" + WithPhase("")),
              HasSubstr("listed twice"));
}

TEST(Plan, BadAgents) {
  EXPECT_THAT(Error("[[agent]]\naddress = \"nohostport\"\n" + WithPhase("")), HasSubstr("has no port"));
  EXPECT_THAT(Error("[[agent]]\naddress = \"h:1\"\nrole = \"boss\"\n" + WithPhase("")),
              HasSubstr("use client, oss or mds"));
  EXPECT_THAT(Error("[[agent]]\naddress = \"h:1\"\nrole = \"oss\"\n" + WithPhase("")),
              HasSubstr("no [[agent]] has role = \"client\""));
  EXPECT_THAT(Error("[[agent]]\naddress = \"h:1\"\n" + WithPhase("reorder_tasks = true\n")),
              HasSubstr("reorder_tasks = true with one agent"));
}

TEST(Plan, PhaseOptionConflicts) {
  EXPECT_THAT(Error(WithPhase("verify = true\n")), HasSubstr("applies to read phases"));
  EXPECT_THAT(Error(WithPhase("direct = true\ntransfer_size = 512\nblock_size = 1024\n")),
              HasSubstr("O_DIRECT needs"));
}

}  // namespace
}  // namespace lockstep
