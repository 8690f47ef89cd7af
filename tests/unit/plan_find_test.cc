// The plan keys of the find phase, mdtest -W and the stonewall hand-off:
// find_newer_than, find_size, find_name, md_stonewall_seconds,
// stonewall_count_from (controller/plan/phase_table.cc).
#include <string>

#include "controller/plan/plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "unit/plan_text.h"
#include "controller/plan/kinds/find_plan.h"
#include "controller/plan/kinds/mdtest_plan.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using plan_text::Error;
using plan_text::Phase;

std::string Md(const std::string& name, const std::string& op, const std::string& extra = "") {
  return Phase(name, "mdtest", "md_op = \"" + op + "\"\nmd_items = 100\n" + extra);
}

// IO500's sequence in plan form: creates with a wall, a find newer than an
// earlier phase, the stat and remove working on the count the create agreed on.
const std::string kIo500Like =
    Md("tree", "tree_create") + Phase("mark", "write", "") +
    Md("create", "file_create", "md_stonewall_seconds = 300\nmd_write_size = 3901\n") +
    Phase("find", "find", "find_newer_than = \"mark\"\nfind_size = \"3901\"\nfind_name = \"*01*\"\n") +
    Md("stat", "file_stat", "stonewall_count_from = \"create\"\n") +
    Phase("w", "write", "stonewall_seconds = 30\nstonewall_wear_out = true\n") +
    Phase("r", "read", "stonewall_count_from = \"w\"\n");

TEST(PlanFind, ParsesTheKeys) {
  auto plan = ParsePlan(kIo500Like, "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const PhasePlan& create = plan->phases[2];
  EXPECT_EQ(create.Own<MdtestPlan>().md_stonewall_seconds, 300u);
  const PhasePlan& find = plan->phases[3];
  EXPECT_EQ(find.kind, v1::FIND);
  EXPECT_EQ(find.Own<FindPlan>().find_newer_than, "mark");
  EXPECT_TRUE(find.Own<FindPlan>().find_match_size);
  EXPECT_EQ(find.Own<FindPlan>().find_size_bytes, 3901u);
  EXPECT_EQ(find.Own<FindPlan>().find_name_glob, "*01*");
  EXPECT_EQ(plan->phases[4].stonewall_count_from, "create");
  EXPECT_EQ(plan->phases[6].stonewall_count_from, "w");

  auto sizes = ParsePlan(Phase("f", "find", "find_size = \"3901c\"\n") +
                             Phase("g", "find", "find_size = 0\n") +
                             Phase("h", "find", "find_size = \"4k\"\n") + Phase("i", "find", ""),
                         "plan.toml");
  ASSERT_TRUE(sizes.ok()) << sizes.status();
  EXPECT_EQ(sizes->phases[0].Own<FindPlan>().find_size_bytes, 3901u);
  EXPECT_TRUE(sizes->phases[1].Own<FindPlan>().find_match_size);
  EXPECT_EQ(sizes->phases[1].Own<FindPlan>().find_size_bytes, 0u);
  EXPECT_EQ(sizes->phases[2].Own<FindPlan>().find_size_bytes, 4096u);
  EXPECT_FALSE(sizes->phases[3].Own<FindPlan>().find_match_size);  // no -size
}

TEST(PlanFind, FindKeysErrorsNameTheKeyAndValue) {
  EXPECT_THAT(Error(Phase("f", "find", "find_newer_than = \"later\"\n") + Phase("later", "write", "")),
              HasSubstr("key 'find_newer_than': \"later\" is not an earlier phase of this plan"));
  EXPECT_THAT(Error(Phase("a", "write", "") + Phase("f", "find", "find_newer_than = \"f\"\n")),
              HasSubstr("(earlier phases: 'a')"));
  EXPECT_THAT(Error(Phase("f", "find", "find_name = \"a/*\"\n")),
              HasSubstr("key 'find_name': \"a/*\" has a '/'"));
  EXPECT_THAT(Error(Phase("f", "find", "find_size = \"big\"\n")), HasSubstr("key 'find_size'"));
  EXPECT_THAT(Error(Phase("f", "find", "find_size = true\n")),
              HasSubstr("key 'find_size': expected a size"));
  EXPECT_THAT(Error(Phase("w", "write", "find_name = \"*\"\n")),
              HasSubstr("key 'find_name': applies to find phases, not to kind = \"write\""));
}

TEST(PlanFind, MdtestStonewallOnlyOnCreates) {
  EXPECT_EQ(Error(Md("c", "dir_create", "md_stonewall_seconds = 5\n")), "OK");
  EXPECT_THAT(Error(Md("s", "file_stat", "md_stonewall_seconds = 5\n")),
              HasSubstr("key 'md_stonewall_seconds': applies to md_op = \"file_create\" or "
                        "\"dir_create\""));
  EXPECT_THAT(Error(Phase("w", "write", "md_stonewall_seconds = 5\n")),
              HasSubstr("key 'md_stonewall_seconds': applies to mdtest phases"));
}

TEST(PlanFind, StonewallCountFromNamesAnEarlierPhaseWithAWall) {
  EXPECT_THAT(Error(Md("s", "file_stat", "stonewall_count_from = \"nope\"\n")),
              HasSubstr("key 'stonewall_count_from': \"nope\" is not an earlier phase"));
  EXPECT_THAT(Error(Md("c", "file_create") + Md("s", "file_stat", "stonewall_count_from = \"c\"\n")),
              HasSubstr("phase 'c' is not an mdtest file_create phase with md_stonewall_seconds"));
  // Directories take their count from the directory create.
  EXPECT_THAT(Error(Md("c", "file_create", "md_stonewall_seconds = 5\n") +
                    Md("s", "dir_stat", "stonewall_count_from = \"c\"\n")),
              HasSubstr("is not an mdtest dir_create phase"));
  EXPECT_EQ(Error(Md("c", "dir_create", "md_stonewall_seconds = 5\n") +
                  Md("s", "dir_rename", "stonewall_count_from = \"c\"\n")),
            "OK");
  EXPECT_THAT(Error(Phase("w", "write", "stonewall_seconds = 3\n") +
                    Phase("r", "read", "stonewall_count_from = \"w\"\n")),
              HasSubstr("stonewall_wear_out = true, so its tasks agree on no count"));
  EXPECT_THAT(Error(Phase("w", "write", "stonewall_seconds = 3\nstonewall_wear_out = true\n") +
                    Phase("w2", "write", "stonewall_count_from = \"w\"\n")),
              HasSubstr("key 'stonewall_count_from': applies to read phases and to mdtest"));
  EXPECT_THAT(Error(Md("c", "file_create", "md_stonewall_seconds = 5\n") +
                    Md("c2", "file_create", "stonewall_count_from = \"c\"\n")),
              HasSubstr("not to kind = \"mdtest\" md_op = \"file_create\""));
}

}  // namespace
}  // namespace lockstep
