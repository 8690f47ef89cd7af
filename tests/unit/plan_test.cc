#include "controller/plan/plan.h"
#include "controller/plan/sweep.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "unit/plan_text.h"
#include "controller/plan/kinds/mdtest_plan.h"
#include "controller/plan/kinds/small_files_plan.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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
using plan_text::Error;

std::string WithPhase(const std::string& extra) {
  return "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"/x\"\n" + extra;
}

// file_names (IOzone -F): one plain, distinct name per task, with a file
// per process; random_blocks (IOR -z -z): read phases only.
TEST(Plan, FileNamesAndRandomBlocks) {
  auto plan = ParsePlan(WithPhase("file_per_process = true\ntasks_per_agent = 2\n"
                                  "file_names = [\"a\", \"b c\"]\n"),
                        "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->phases[0].file_names, (std::vector<std::string>{"a", "b c"}));
  EXPECT_THAT(Error(WithPhase("file_names = [\"a\"]\n")),
              HasSubstr("plan.toml:5:14: [[phase]] 'w' key 'file_names': names a file per task: "
                        "set file_per_process = true"));
  EXPECT_THAT(Error(WithPhase("file_per_process = true\nfile_names = [\"a\", \"a\"]\n")),
              HasSubstr("\"a\" is given twice"));
  EXPECT_THAT(Error(WithPhase("file_per_process = true\nfile_names = [\"x/y\"]\n")),
              HasSubstr("each must be a plain file name"));
  EXPECT_THAT(Error(WithPhase("random_blocks = true\n")),
              HasSubstr("key 'random_blocks': applies to read phases, not to kind = \"write\""));
  const std::string read = "[[phase]]\nname = \"r\"\nkind = \"read\"\ndir = \"/x\"\n";
  EXPECT_EQ(Error(read + "random_blocks = true\n"), "OK");
  EXPECT_THAT(Error(read + "random_blocks = true\nrandom_offsets = true\n"),
              HasSubstr("random_offsets is set too"));
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
  EXPECT_THAT(e, HasSubstr("unknown key 'blok_size' in [[phase]] 'w'; did you mean 'block_size'? "
                           "kind = \"write\" takes the shared keys name, kind, dir,"));
  EXPECT_THAT(e, HasSubstr(", total_size (some of them apply to some kinds only)"));
  EXPECT_THAT(e, Not(HasSubstr("md_items")));
  // A kind's own keys come first; a phase with no kind is told every key.
  EXPECT_THAT(Error("[[phase]]\nname = \"m\"\nkind = \"mdtest\"\nmd_itms = 1\n"),
              HasSubstr("did you mean 'md_items'? kind = \"mdtest\" takes its own keys md_op, "
                        "md_branching,"));
  EXPECT_THAT(Error("[[phase]]\nname = \"x\"\nmd_itms = 1\n"),
              HasSubstr("did you mean 'md_items'? valid keys: name, kind,"));
  // No guess for a word close to no key.
  EXPECT_THAT(Error(WithPhase("zzzzzzzz = 1\n")),
              ::testing::AllOf(HasSubstr("unknown key 'zzzzzzzz'"), Not(HasSubstr("did you mean"))));
  EXPECT_THAT(Error("[runn]\n" + WithPhase("")), HasSubstr("unknown top-level key 'runn'"));
  EXPECT_THAT(Error("[run]\nnmae = 1\n" + WithPhase("")), HasSubstr("unknown key 'nmae' in [run]"));
}

// A key of another kind names the kinds it applies to, and the keys this
// kind takes.
TEST(Plan, KeyOfAnotherKindNamesThisKindsKeys) {
  const std::string e = Error(WithPhase("md_items = 10\n"));
  EXPECT_THAT(e, HasSubstr("plan.toml:5:12: [[phase]] 'w' key 'md_items': applies to mdtest "
                           "phases, not to kind = \"write\"; kind = \"write\" takes the shared "
                           "keys name, kind, dir,"));
  EXPECT_THAT(Error("[[phase]]\nname = \"t\"\nkind = \"train\"\ndir = \"/x\"\nmd_items = 1\n"),
              HasSubstr("kind = \"train\" takes its own keys epochs, batch_size,"));
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
  EXPECT_THAT(Error(WithPhase("verify = true\n")),
              HasSubstr("applies to read, rewrite, mdtest and seeks phases, not to kind = \"write\""));
  EXPECT_THAT(Error(WithPhase("verify = true\n")), HasSubstr("verify_after_write (IOR -W)"));
  EXPECT_THAT(Error(WithPhase("direct = true\ntransfer_size = 512\nblock_size = 1024\n")),
              HasSubstr("O_DIRECT needs"));
}

std::string WithKind(const std::string& kind, const std::string& extra) {
  return "[[phase]]\nname = \"p\"\nkind = \"" + kind + "\"\ndir = \"/x\"\n" + extra;
}

TEST(Plan, IorFinerOptionsAndNewKinds) {
  auto plan = ParsePlan(WithPhase("random_offsets = true\nstonewall_seconds = 30\n"
                                  "stonewall_wear_out = true\nverify_after_write = true\n"
                                  "delay_seconds = 2\nintra_barriers = true\n"),
                        "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const PhasePlan& p = plan->phases[0];
  EXPECT_TRUE(p.random_offsets && p.stonewall_wear_out && p.verify_after_write && p.intra_barriers);
  EXPECT_EQ(p.stonewall_seconds, 30u);
  EXPECT_EQ(p.delay_seconds, 2u);

  auto small = ParsePlan(WithKind("small_files", "small_files = 500\nsmall_file_min_size = \"1k\"\n"
                                                 "small_file_max_size = \"64k\"\nsmall_files_per_dir = 50\n"),
                         "plan.toml");
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(small->phases[0].kind, v1::SMALL_FILES);
  EXPECT_EQ(small->phases[0].Own<SmallFilesPlan>().small_file_max_bytes, 65536u);

  auto md = ParsePlan(WithKind("mdtest", "md_op = \"file_create\"\nmd_items = 100\nmd_branching = 2\n"
                                         "md_depth = 3\nmd_unique_dir = true\nmd_write_size = \"4k\"\n"),
                      "plan.toml");
  ASSERT_TRUE(md.ok()) << md.status();
  EXPECT_EQ(md->phases[0].Own<MdtestPlan>().md_op, v1::MD_FILE_CREATE);
  EXPECT_EQ(md->phases[0].Own<MdtestPlan>().md_write_bytes, 4096u);
  auto rename = ParsePlan(WithKind("mdtest", "md_op = \"dir_rename\"\nmd_items = 0\n"
                                             "md_leaf_only = true\nmd_neighbor_shift = 3\n"),
                          "plan.toml");
  ASSERT_TRUE(rename.ok()) << rename.status();
  EXPECT_EQ(rename->phases[0].Own<MdtestPlan>().md_op, v1::MD_DIR_RENAME);
  EXPECT_EQ(rename->phases[0].Own<MdtestPlan>().md_items, 0u);  // mdtest without -n
  EXPECT_TRUE(rename->phases[0].Own<MdtestPlan>().md_leaf_only);
  EXPECT_EQ(rename->phases[0].Own<MdtestPlan>().md_neighbor_shift, 3u);
  auto reorder = ParsePlan(WithKind("read", "reorder_random = true\nreorder_random_seed = -4\n"
                                            "multi_file = true\n"),
                           "plan.toml");
  ASSERT_TRUE(reorder.ok()) << reorder.status();
  EXPECT_TRUE(reorder->phases[0].reorder_random && reorder->phases[0].multi_file);
  EXPECT_EQ(reorder->phases[0].reorder_random_seed, -4);
  EXPECT_EQ(Error(WithKind("rewrite", "verify = true\n")), "OK");
}

TEST(Plan, IorFinerOptionsErrorsArePositioned) {
  EXPECT_THAT(Error(WithPhase("random_offsets = true\nblock_size = \"1m\"\ntransfer_size = \"1m\"\n")),
              HasSubstr("plan.toml:5:18: [[phase]] 'w' key 'random_offsets': block_size equals"));
  EXPECT_THAT(Error(WithPhase("stonewall_wear_out = true\n")),
              HasSubstr("key 'stonewall_wear_out': needs stonewall_seconds"));
  EXPECT_THAT(Error(WithKind("read", "verify_after_write = true\n")),
              HasSubstr("key 'verify_after_write': applies to write phases"));
  EXPECT_THAT(Error(WithKind("mdtest", "random_offsets = true\nmd_op = \"dir_stat\"\nmd_items = 1\n")),
              HasSubstr("applies to write, read and rewrite phases"));
  EXPECT_THAT(Error(WithPhase("small_files = 10\n")), HasSubstr("applies to small_files phases"));
  EXPECT_THAT(Error(WithKind("small_files", "")), HasSubstr("has no 'small_files'"));
  EXPECT_THAT(Error(WithKind("small_files", "small_files = 1\nsmall_file_min_size = \"8k\"\n"
                                            "small_file_max_size = \"4k\"\n")),
              HasSubstr("key 'small_file_min_size': 8 KiB is larger"));
  EXPECT_THAT(Error(WithKind("mdtest", "md_items = 5\n")), HasSubstr("has no 'md_op'"));
  EXPECT_THAT(Error(WithKind("mdtest", "md_op = \"rename\"\n")),
              HasSubstr("\"rename\" is not an mdtest operation"));
  EXPECT_THAT(Error(WithKind("mdtest", "md_op = \"file_stat\"\n")), HasSubstr("has no 'md_items'"));
  EXPECT_THAT(Error(WithKind("mdtest", "md_op = \"tree_create\"\nmd_branching = 1000\nmd_depth = 4\n")),
              HasSubstr("the limit is 10 million"));
  EXPECT_THAT(Error(WithKind("write", "reorder_random = true\n")),
              HasSubstr("key 'reorder_random': applies to read phases"));
  EXPECT_THAT(Error(WithKind("read", "reorder_random_seed = 3\n")),
              HasSubstr("add reorder_random = true"));
  EXPECT_THAT(Error(WithKind("read", "reorder_random = true\nreorder_tasks = true\n")),
              HasSubstr("IOR takes -C or -Z, not both"));
  EXPECT_THAT(Error(WithKind("mdtest", "md_op = \"dir_stat\"\nmd_items = 1\nmulti_file = true\n")),
              HasSubstr("key 'multi_file': applies to write, read and rewrite"));
  EXPECT_THAT(Error(WithKind("bonnie", "")), HasSubstr("use write, read, rewrite, small_files, mdtest, find, command, "
                                                         "seeks, train, datagen, checkpoint, net or backend"));
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// total_size: the seed 001 report's "aggregate of 2 TB divided equally among
// the threads of each test".
TEST(PlanAggregate, SplitsTheTotalOverEveryTaskOfEachTest) {
  auto plan = ParsePlan(WithPhase("transfer_size = \"1m\"\ntotal_size = \"2t\"\n"
                                  "tasks_per_agent = [1, 3, 256]\nfile_per_process = true\n"),
                        "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const PhasePlan& p = plan->phases[0];
  EXPECT_EQ(p.total_bytes, uint64_t{2} << 40);
  // Test 0: 1 task on each of 4 agents: 512 GiB each, nothing dropped.
  auto t0 = SplitAggregate(*plan, p, 0, 4);
  ASSERT_TRUE(t0.ok()) << t0.status();
  EXPECT_EQ(t0->block_bytes, uint64_t{512} << 30);
  EXPECT_EQ(t0->dropped_bytes, 0u);
  EXPECT_EQ(AggregateNote(p, 0, 4, *t0), "");
  // Test 1: 3 tasks on 4 agents = 12: 2 TiB / 12, rounded down to 1 MiB.
  auto t1 = SplitAggregate(*plan, p, 1, 4);
  ASSERT_TRUE(t1.ok());
  const uint64_t block = (uint64_t{2} << 40) / 12 / (1 << 20) * (1 << 20);
  EXPECT_EQ(t1->block_bytes, block);
  EXPECT_EQ(t1->dropped_bytes, (uint64_t{2} << 40) - 12 * block);
  EXPECT_THAT(AggregateNote(p, 1, 12, *t1),
              ::testing::AllOf(HasSubstr("phase 'w' test 1: total_size 2 TiB over 12 tasks"),
                               HasSubstr("not moved"), HasSubstr("transfer_size 1 MiB")));
  // No total_size: the block as given.
  auto plain = ParsePlan(WithPhase("block_size = \"4m\"\n"), "plan.toml");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(SplitAggregate(*plain, plain->phases[0], 0, 8)->block_bytes, 4u << 20);
}

TEST(PlanAggregate, RefusesTooSmallAndBlockSizeWithTheFix) {
  auto plan = ParsePlan(WithPhase("transfer_size = \"1m\"\ntotal_size = \"8m\"\n"
                                  "tasks_per_agent = [2, 8]\n"),
                        "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(SplitAggregate(*plan, plan->phases[0], 0, 2).ok());
  auto small = SplitAggregate(*plan, plan->phases[0], 1, 2);  // 16 tasks × 1 MiB > 8 MiB
  ASSERT_FALSE(small.ok());
  EXPECT_THAT(small.status().message(),
              ::testing::AllOf(HasSubstr("phase 'w' test 1: total_size 8 MiB is smaller than "
                                         "16 tasks x transfer_size 1 MiB (16 MiB)"),
                               HasSubstr("raise total_size to 16 MiB")));
  EXPECT_THAT(Error(WithPhase("total_size = \"1g\"\nblock_size = \"1m\"\n")),
              HasSubstr("key 'block_size': total_size is given too"));
  EXPECT_THAT(Error(WithPhase("transfer_size = \"1m\"\ntotal_size = \"4k\"\n")),
              HasSubstr("smaller than one transfer_size"));
  EXPECT_THAT(Error("[[phase]]\nname = \"m\"\nkind = \"mdtest\"\ndir = \"/x\"\nmd_op = "
                    "\"tree_create\"\ntotal_size = \"1g\"\n"),
              HasSubstr("total_size"));
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

TEST(PlanAggregate, TotalSizeSweeps) {
  auto plan = ParsePlan(WithPhase("transfer_size = \"1m\"\ntotal_size = [\"1g\", \"4g\"]\n"),
                        "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->tests(), 2u);
  const PhasePlan t1 = ResolvePhase(*plan, plan->phases[0], 1);
  EXPECT_EQ(t1.total_bytes, uint64_t{4} << 30);
  EXPECT_EQ(SplitAggregate(*plan, t1, 1, 2)->block_bytes, uint64_t{2} << 30);
  // Each test's value is checked as if written alone.
  EXPECT_THAT(Error(WithPhase("transfer_size = \"1m\"\ntotal_size = [\"1g\", \"4k\"]\n")),
              HasSubstr("smaller than one transfer_size"));
}

}  // namespace
}  // namespace lockstep
