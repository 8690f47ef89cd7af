// The keys a kind owns, kept in the phase (controller/plan/kind_params.h,
// PhasePlan::Own): defaults until set, deep copies, one struct per kind, and
// a sweep of an own key giving each test its value.
#include "controller/plan/kind_params.h"

#include "controller/plan/kinds/find_plan.h"
#include "controller/plan/kinds/mdtest_plan.h"
#include "controller/plan/kinds/seeks_plan.h"
#include "controller/plan/plan.h"
#include "controller/plan/sweep.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

TEST(KindParams, AStructNeverSetReadsAsItsDefaults) {
  const PhasePlan p;
  EXPECT_EQ(p.Own<SeeksPlan>().seeks, 0u);
  EXPECT_EQ(p.Own<SeeksPlan>().seek_rewrite_pct, 10u);
  EXPECT_EQ(p.Own<MdtestPlan>().md_branching, 1u);
  EXPECT_EQ(p.Own<MdtestPlan>().md_op, v1::MD_OP_UNSPECIFIED);
}

TEST(KindParams, EachKindsStructIsKeptApartAndCopiedDeeply) {
  PhasePlan p;
  p.Own<SeeksPlan>().seeks = 7;
  p.Own<FindPlan>().find_name_glob = "*.dat";
  const PhasePlan& read = p;
  EXPECT_EQ(read.Own<SeeksPlan>().seeks, 7u);  // setting FindPlan kept SeeksPlan
  EXPECT_EQ(read.Own<FindPlan>().find_name_glob, "*.dat");

  PhasePlan copy = p;
  copy.Own<SeeksPlan>().seeks = 9;
  copy.Own<FindPlan>().find_name_glob = "x";
  EXPECT_EQ(read.Own<SeeksPlan>().seeks, 7u);  // the copy has its own structs
  EXPECT_EQ(read.Own<FindPlan>().find_name_glob, "*.dat");

  PhasePlan assigned;
  assigned.Own<MdtestPlan>().md_items = 3;
  assigned = p;  // replaces every struct it held
  const PhasePlan& a = assigned;
  EXPECT_EQ(a.Own<MdtestPlan>().md_items, 0u);
  EXPECT_EQ(a.Own<SeeksPlan>().seeks, 7u);
  p.Own<SeeksPlan>().seeks = 1;
  EXPECT_EQ(a.Own<SeeksPlan>().seeks, 7u);
}

TEST(KindParams, ASweptOwnKeyGivesEachTestItsValue) {
  auto plan = ParsePlan(
      "[[agent]]\naddress = \"h:1\"\n"
      "[[phase]]\nname = \"m\"\nkind = \"mdtest\"\ndir = \"/d\"\nmd_op = \"file_create\"\n"
      "md_items = [10, 20, 30]\n",
      "p.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->tests(), 3u);
  for (uint32_t t = 0; t < 3; ++t) {
    const PhasePlan p = ResolvePhase(*plan, plan->phases[0], t);
    EXPECT_EQ(p.Own<MdtestPlan>().md_items, 10u * (t + 1)) << "test " << t;
    EXPECT_EQ(p.Own<MdtestPlan>().md_op, v1::MD_FILE_CREATE) << "test " << t;
  }
  EXPECT_EQ(plan->phases[0].Own<MdtestPlan>().md_items, 10u);  // test 0's, as read
}

}  // namespace
}  // namespace lockstep
