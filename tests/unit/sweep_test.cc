// Sweeps of any sweepable phase key: parsing, refusal, expansion into tests
// (ResolvePhase) and the labels of the tests (SweepValuesOf, SweepLabel).
#include "controller/plan/sweep.h"

#include "controller/plan/plan.h"
#include "controller/plan/compile.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "unit/plan_text.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using plan_text::Error;
using plan_text::Phase;

// Seed 004: 64 KiB against 2 MiB stripes, with and without checksums (zipped).
constexpr char kStripes[] = R"(
[[phase]]
name = "w"
kind = "write"
dir = "/x"
transfer_size = "1m"
block_size = "4m"
stripe_size = ["64k", "2m"]
checksums = [true, false]
stripe_count = 4

[[phase]]
name = "r"
kind = "read"
dir = "/x"
transfer_size = "1m"
block_size = "4m"
stripe_size = ["64k", "2m"]
)";

TEST(Sweep, ListOnAnySweepableKeyMakesTests) {
  auto plan = ParsePlan(kStripes, "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->tests(), 2u);
  const PhasePlan& w = plan->phases[0];
  // The phase holds test 0's values; ResolvePhase gives each test's.
  EXPECT_EQ(w.stripe_size_bytes, 64u << 10);
  PhasePlan t0 = ResolvePhase(*plan, w, 0), t1 = ResolvePhase(*plan, w, 1);
  EXPECT_EQ(t0.stripe_size_bytes, 64u << 10);
  EXPECT_EQ(t0.checksums, v1::CHECKSUMS_ON);
  EXPECT_EQ(t1.stripe_size_bytes, 2u << 20);
  EXPECT_EQ(t1.checksums, v1::CHECKSUMS_OFF);
  EXPECT_TRUE(t1.set_stripe);
  EXPECT_EQ(t1.stripe_count, 4);  // not swept: the same in every test
  EXPECT_TRUE(t1.points.empty());
  // The PhaseSpec the agents get carries the test's values.
  const ResolvedPlan resolved = ResolvePlan(*plan);
  auto test1 = CompileTest(*plan, resolved, 1, 2, false);
  ASSERT_TRUE(test1.ok()) << test1.status();
  const v1::PhaseSpec& s = test1->phases[0].spec;
  EXPECT_EQ(s.stripe_size_bytes(), 2u << 20);
  EXPECT_EQ(s.checksums(), v1::CHECKSUMS_OFF);
  auto test0 = CompileTest(*plan, resolved, 0, 2, false);
  ASSERT_TRUE(test0.ok()) << test0.status();
  EXPECT_EQ(test0->phases[1].spec.stripe_size_bytes(), 64u << 10);
}

TEST(Sweep, LabelsNameTheSweepPoint) {
  auto plan = ParsePlan(kStripes, "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  // stripe_size: every phase, same values -> once, phase ""; checksums: w's own.
  auto values = SweepValuesOf(*plan, 1);
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0].phase(), "");
  EXPECT_EQ(values[0].key(), "stripe_size");
  EXPECT_EQ(values[0].value(), "2m");  // as the plan wrote it
  EXPECT_EQ(values[1].phase(), "w");
  v1::TestRecord t;
  for (const auto& v : values) *t.add_sweep() = v;
  EXPECT_EQ(SweepLabel(t.sweep()), "stripe_size=2m w:checksums=false");
  v1::TestRecord none;
  EXPECT_EQ(SweepLabel(none.sweep()), "");
  auto flat = ParsePlan(Phase("w", "write", "fsync = true\n"), "p.toml");
  ASSERT_TRUE(flat.ok());
  EXPECT_TRUE(SweepValuesOf(*flat, 0).empty());
}

TEST(Sweep, TasksPerAgentStillSweepsAndZipsWithOtherKeys) {
  auto plan = ParsePlan(Phase("w", "write",
                              "tasks_per_agent = [1, 4, 8]\ntransfer_size = [\"64k\", \"1m\", "
                              "\"1m\"]\nblock_size = \"4m\"\nfsync = [false, true, true]\n"),
                        "p.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->tests(), 3u);
  EXPECT_EQ(plan->TasksPerAgent(plan->phases[0], 2), 8u);
  PhasePlan t2 = ResolvePhase(*plan, plan->phases[0], 2);
  EXPECT_EQ(t2.tasks_per_agent, std::vector<uint32_t>{8});
  EXPECT_EQ(t2.transfer_bytes, 1u << 20);
  EXPECT_TRUE(t2.fsync);
  EXPECT_FALSE(ResolvePhase(*plan, plan->phases[0], 0).fsync);
  const ResolvedPlan resolved = ResolvePlan(*plan);
  auto test1 = CompileTest(*plan, resolved, 1, 2, false);
  ASSERT_TRUE(test1.ok()) << test1.status();
  EXPECT_EQ(test1->phases[0].spec.total_tasks(), 8u);
  // A list of one value is that value, not a sweep.
  auto one = ParsePlan(Phase("w", "write", "stripe_size = [\"1m\"]\n"), "p.toml");
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->tests(), 1u);
  EXPECT_TRUE(one->phases[0].sweep.empty());
  EXPECT_EQ(one->phases[0].stripe_size_bytes, 1u << 20);
}

TEST(Sweep, ListOnAKeyThatCannotSweepIsRefused) {
  std::string e = Error(Phase("w", "write", "") + "file_name = [\"a\", \"b\"]\n");
  EXPECT_THAT(e, HasSubstr("plan.toml:5:13"));  // file, line and column of the list
  EXPECT_THAT(e, HasSubstr("key 'file_name'"));
  EXPECT_THAT(e, HasSubstr("cannot sweep"));
  EXPECT_THAT(e, HasSubstr("keys that can: tasks_per_agent, file_per_process, transfer_size"));
  EXPECT_THAT(e, HasSubstr("stripe_size"));
  EXPECT_THAT(e, HasSubstr("checksums"));
  EXPECT_THAT(Error("[[phase]]\nname = \"w\"\nkind = [\"write\", \"read\"]\ndir = \"/x\"\n"),
              HasSubstr("key 'kind': a list makes a sweep, and 'kind' cannot sweep"));
  EXPECT_THAT(Error(Phase("w", "write", "cache = [\"none\", \"all\"]\n")),
              HasSubstr("'cache' cannot sweep"));
  EXPECT_THAT(Error(Phase("w", "write", "checksums = []\n")), HasSubstr("the list is empty"));
}

TEST(Sweep, ListsMustHaveOneLength) {
  // Within a phase and across phases; the message names the other list.
  EXPECT_THAT(Error(Phase("w", "write", "stripe_size = [\"64k\", \"2m\"]\nfsync = [true, false, "
                                        "true]\n")),
              HasSubstr("phases of one plan sweep together"));
  std::string e = Error(Phase("w", "write", "checksums = [true, false]\n") +
                        Phase("r", "read", "stripe_size = [\"64k\", \"1m\", \"2m\"]\n"));
  EXPECT_THAT(e, HasSubstr("a sweep of 3 values, but phase 'w' key 'checksums' sweeps 2"));
  EXPECT_THAT(e, HasSubstr("key 'stripe_size'"));
}

TEST(Sweep, EveryPointIsCheckedAndNamed) {
  // Test 1's transfer is larger than the block: refused, naming the value.
  std::string e = Error(Phase("w", "write", "block_size = \"1m\"\ntransfer_size = [\"64k\", "
                                            "\"4m\"]\n"));
  EXPECT_THAT(e, HasSubstr("transfer 4 MiB is larger than block 1 MiB"));
  EXPECT_THAT(e, HasSubstr("in test 1 of the sweep: transfer_size=4m"));
  EXPECT_THAT(Error(Phase("w", "write", "stripe_size = [\"64k\", \"100k\"]\n")),
              HasSubstr("not a multiple of 64 KiB"));
  EXPECT_THAT(Error(Phase("w", "write", "checksums = [true, \"no\"]\n")),
              HasSubstr("expected true or false"));
  // A key of another kind is refused in a list as it is alone.
  EXPECT_THAT(Error(Phase("r", "read", "fsync = [true, false]\n")),
              HasSubstr("applies to write, rewrite, mdtest, seeks, datagen and checkpoint phases, "
                        "not to kind = \"read\""));
}

}  // namespace
}  // namespace lockstep
