// --smoke, --dry-run and [run] client_agents (controller/plan/plan_smoke.h,
// plan.h).
#include "controller/plan/plan_smoke.h"

#include <string>

#include "controller/plan/plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "controller/plan/kinds/mdtest_plan.h"

namespace lockstep {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSeedLike[] = R"([run]
name = "seed-like"
repetitions = 3
lustre_lru_clear = true

[[phase]]
name = "write"
kind = "write"
dir = "."
file_per_process = true
tasks_per_agent = [1, 16]
transfer_size = "1m"
block_size = "60g"
stripe_count = 4
stripe_size = "2m"
checksums = false
stonewall_seconds = 300

[[phase]]
name = "md"
kind = "mdtest"
md_op = "file_create"
dir = "."
tasks_per_agent = [1, 16]
md_items = 100000
)";

Plan MustParse(const std::string& text) {
  auto plan = ParsePlan(text, "seed.toml");
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : Plan{};
}

TEST(Smoke, CapsSizesCountsAndRepetitionsAndSaysWhat) {
  Plan plan = MustParse(kSeedLike);
  MakeSmokePlan({.lustre = true}, &plan);
  EXPECT_TRUE(plan.smoke);
  EXPECT_EQ(plan.repetitions, 1u);
  const PhasePlan& w = plan.phases[0];
  EXPECT_EQ(w.block_bytes, 16u << 20);
  EXPECT_EQ(w.block_bytes % w.transfer_bytes, 0u);
  EXPECT_EQ(w.tasks_per_agent[1], 8u);
  EXPECT_EQ(w.stonewall_seconds, 2u);
  EXPECT_EQ(plan.phases[1].Own<MdtestPlan>().md_items, 200u);
  // On Lustre the striping stays.
  EXPECT_TRUE(w.set_stripe);
  EXPECT_EQ(w.checksums, v1::CHECKSUMS_OFF);
  EXPECT_THAT(plan.smoke_changes, Contains("[run]: repetitions 3 -> 1"));
  EXPECT_THAT(plan.smoke_changes, Contains("phase write: block_size 60 GiB -> 16 MiB"));
  EXPECT_THAT(plan.smoke_changes, Contains("phase write: tasks_per_agent 16 -> 8"));
  EXPECT_THAT(plan.smoke_changes, Contains("phase md: md_items 100000 -> 200"));
  // Values already small are not mentioned.
  EXPECT_THAT(plan.smoke_changes, Not(Contains(HasSubstr("transfer_size"))));
}

TEST(Smoke, OffLustreLeavesOutStripingChecksumsAndLruNamingEach) {
  Plan plan = MustParse(kSeedLike);
  MakeSmokePlan({.lustre = false}, &plan);
  EXPECT_FALSE(plan.phases[0].set_stripe);
  EXPECT_EQ(plan.phases[0].checksums, v1::CHECKSUMS_UNCHANGED);
  EXPECT_FALSE(plan.lustre_lru_clear);
  EXPECT_THAT(plan.smoke_changes,
              Contains(AllOf(HasSubstr("phase write"), HasSubstr("striping"),
                             HasSubstr("not on Lustre"))));
  EXPECT_THAT(plan.smoke_changes, Contains(AllOf(HasSubstr("checksums = false"),
                                                 HasSubstr("left out"))));
  EXPECT_THAT(plan.smoke_changes, Contains(HasSubstr("[run]: lustre_lru_clear left out")));
}

TEST(Smoke, SegmentsKeepTheDataPerTaskUnderTheCap) {
  Plan plan = MustParse(R"([[phase]]
name = "w"
kind = "write"
dir = "."
transfer_size = "1m"
block_size = "4m"
segments = 100
)");
  MakeSmokePlan({}, &plan);
  EXPECT_EQ(plan.phases[0].block_bytes * plan.phases[0].segments, 16u << 20);
}

TEST(DryRun, CountsBytesFilesAndTimePerTestAndInAll) {
  Plan plan = MustParse(kSeedLike);
  const std::string text =
      FormatDryRun(plan, {.clients = 2, .servers = 1, .source = "--local 2"},
                   {.rate_mib_s = 1024, .rate_ops_s = 1000});
  EXPECT_THAT(text, HasSubstr("dry run of seed.toml: nothing is sent to any agent"));
  EXPECT_THAT(text, HasSubstr("agents: 2 client(s), 1 server(s) (--local 2)"));
  EXPECT_THAT(text, HasSubstr("2 test(s) x 3 repetition(s)"));
  EXPECT_THAT(text, HasSubstr("test 1: 2 client agent(s), 16 task(s) per agent"));
  // Test 1's write: 16 tasks x 60 GiB per agent, 32 files; at 1 GiB/s 1920 s,
  // which the 300 s stonewall cuts short.
  EXPECT_THAT(text, HasSubstr("write              write          32 tasks     960 GiB/agent"));
  EXPECT_THAT(text, HasSubstr("1.88 TiB in all"));
  EXPECT_THAT(text, HasSubstr("32 files  ~5.0 min  (stonewall 300 s: ends it sooner"));
  // mdtest: 1 task x 2 agents x 100000 items at 1000/s.
  EXPECT_THAT(text, HasSubstr("200000 files  ~3.3 min"));
  EXPECT_THAT(text, HasSubstr("total: 12 phase runs"));
}

TEST(ClientAgents, SweepsWithThePhasesAndLimitsEachTest) {
  Plan plan = MustParse(R"([run]
client_agents = [1, 1, 4, 8]
[[phase]]
name = "w"
kind = "write"
dir = "."
tasks_per_agent = [1, 3, 2, 4]
)");
  EXPECT_EQ(plan.tests(), 4u);
  EXPECT_EQ(plan.ClientAgents(0), 1u);
  EXPECT_EQ(plan.ClientAgents(3), 8u);
  const std::string text = FormatDryRun(plan, {.clients = 4, .source = "--agents"}, {});
  EXPECT_THAT(text, HasSubstr("test 2: 4 client agent(s), 2 task(s) per agent\n"));
  EXPECT_THAT(text, HasSubstr("test 3: 4 client agent(s), 4 task(s) per agent (client_agents "
                              "asks for 8: the run would refuse this test)"));
  EXPECT_EQ(MustParse("[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \".\"\n").ClientAgents(0),
            0u);
}

TEST(ClientAgents, BadValuesNameTheLineKeyAndFix) {
  auto mismatch = ParsePlan(R"([run]
client_agents = [1, 2, 4]
[[phase]]
name = "w"
kind = "write"
dir = "."
tasks_per_agent = [1, 2]
)",
                            "p.toml");
  ASSERT_FALSE(mismatch.ok());
  EXPECT_THAT(std::string(mismatch.status().message()),
              AllOf(HasSubstr("p.toml:2"), HasSubstr("client_agents"), HasSubstr("same length")));
  auto too_many = ParsePlan(R"([run]
client_agents = 3
[[agent]]
address = "n1:7070"
[[agent]]
address = "n2:7070"
[[phase]]
name = "w"
kind = "write"
dir = "."
)",
                            "p.toml");
  ASSERT_FALSE(too_many.ok());
  EXPECT_THAT(std::string(too_many.status().message()),
              AllOf(HasSubstr("asks for 3 client agents"), HasSubstr("list 2")));
  auto zero = ParsePlan("[run]\nclient_agents = [0]\n[[phase]]\nname = \"w\"\nkind = \"write\"\n"
                        "dir = \".\"\n",
                        "p.toml");
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(std::string(zero.status().message()), HasSubstr("client_agents"));
  auto empty = ParsePlan("[run]\nclient_agents = []\n[[phase]]\nname = \"w\"\nkind = \"write\"\n"
                         "dir = \".\"\n",
                         "p.toml");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr("the list is empty"));
}

}  // namespace
}  // namespace lockstep
