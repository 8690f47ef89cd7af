// The controller's phase kinds (controller/plan/phase_kind.h): one per wire
// kind, their keys, and their agreement with the agent's workloads.
#include "controller/plan/phase_kind.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "agent/workloads/workload.h"
#include "common/names.h"
#include "controller/plan/plan.h"
#include "controller/plan/plan_toml.h"
#include "controller/plan/sweep.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "controller/plan/kinds/mdtest_plan.h"
#include "controller/plan/kinds/seeks_plan.h"
#include "controller/plan/kinds/small_files_plan.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

TEST(PhaseKindTest, EveryWireKindHasExactlyOne) {
  const google::protobuf::EnumDescriptor* wire = v1::PhaseKind_descriptor();
  std::map<int, int> count;
  for (const PhaseKindDef* k : AllKinds()) ++count[k->wire()];
  for (int i = 0; i < wire->value_count(); ++i) {
    const int value = wire->value(i)->number();
    if (value == v1::PHASE_KIND_UNSPECIFIED) {
      EXPECT_EQ(count[value], 0) << "PHASE_KIND_UNSPECIFIED is no kind";
      continue;
    }
    EXPECT_EQ(count[value], 1) << wire->value(i)->name() << " needs exactly one PhaseKindDef "
                               << "in controller/plan/kinds/registry.cc";
  }
  EXPECT_EQ(AllKinds().size(), static_cast<size_t>(wire->value_count() - 1))
      << "a registered kind is no wire kind";
}

TEST(PhaseKindTest, NamesAreTheWireNames) {
  for (const PhaseKindDef* k : AllKinds()) {
    EXPECT_STREQ(k->name(), PhaseKindName(k->wire()));
    EXPECT_EQ(KindNamed(k->name()), k);
    EXPECT_EQ(&KindOf(k->wire()), k);
    ASSERT_TRUE(ParsePhaseKind(k->name()).has_value()) << k->name();
    EXPECT_EQ(*ParsePhaseKind(k->name()), k->wire());
  }
  EXPECT_EQ(KindNamed("bogus"), nullptr);
  EXPECT_EQ(KindNamesForMessage(),
            "write, read, rewrite, small_files, mdtest, find, command, seeks, train, datagen, "
            "checkpoint, net or backend");
}

TEST(PhaseKindTest, OwnKeysBelongToOneKindAndSweptKeysAreOwn) {
  std::map<std::string, std::string> owner;
  for (const PhaseKindDef* k : AllKinds()) {
    const std::vector<std::string> own = k->OwnKeys();
    for (const std::string& key : own) {
      auto [it, added] = owner.emplace(key, k->name());
      EXPECT_TRUE(added) << key << " is owned by " << it->second << " and " << k->name();
    }
    for (const SweptKey& s : k->SweptKeys()) {
      EXPECT_NE(std::find(own.begin(), own.end(), s.key), own.end()) << s.key;
      EXPECT_TRUE(IsSweepableKey(s.key)) << s.key;
    }
  }
}

// What the repetition removes is something the agent's workload made: the
// agent's CreatesFiles() (what a session without its controller removes)
// covers every phase the controller removes after, but for a read with
// remove_files (it removes what a write made).
TEST(PhaseKindTest, LeavesFilesAgreesWithTheAgentsCreatesFiles) {
  for (const PhaseKindDef* k : AllKinds()) {
    v1::PhaseSpec spec;
    spec.set_phase_id("t0/r0/p");
    spec.set_kind(k->wire());
    spec.set_tasks(1);
    spec.set_total_tasks(1);
    auto workload = MakeWorkload(spec);
    ASSERT_TRUE(workload.ok()) << k->name() << ": " << workload.status();
    PhasePlan p;
    p.kind = k->wire();
    if (k->LeavesFiles(p)) {
      EXPECT_TRUE((*workload)->CreatesFiles()) << k->name();
    }
    p.remove_files = true;
    if (k->LeavesFiles(p) && k->wire() != v1::READ) {
      EXPECT_TRUE((*workload)->CreatesFiles()) << k->name();
    }
  }
  PhasePlan read;
  read.kind = v1::READ;
  EXPECT_FALSE(KindOf(v1::READ).LeavesFiles(read));
  read.remove_files = true;
  EXPECT_TRUE(KindOf(v1::READ).LeavesFiles(read));
  // mdtest removes its own items in its remove phases, as mdtest does.
  PhasePlan md;
  md.kind = v1::MDTEST;
  EXPECT_FALSE(KindOf(v1::MDTEST).LeavesFiles(md));
}

TEST(PhaseKindTest, AKeyOfAnotherKindNamesTheKindItAppliesTo) {
  auto plan = ParsePlan(
      "[[agent]]\naddress = \"h:1\"\n[[phase]]\nname = \"w\"\nkind = \"write\"\n"
      "dir = \"/d\"\nmd_items = 4\n",
      "p.toml");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(),
              HasSubstr("'md_items': applies to mdtest phases, not to kind = \"write\""));
}

TEST(PhaseKindTest, PlanToTomlRoundTripsEveryKindsKeys) {
  auto plan = ParsePlan(
      "[[agent]]\naddress = \"h:1\"\n"
      "[[phase]]\nname = \"s\"\nkind = \"small_files\"\ndir = \"/d\"\nsmall_files = 7\n"
      "[[phase]]\nname = \"m\"\nkind = \"mdtest\"\ndir = \"/d\"\nmd_op = \"file_create\"\n"
      "md_items = 9\nmd_write_size = 16\n"
      "[[phase]]\nname = \"k\"\nkind = \"seeks\"\ndir = \"/d\"\nseeks = 5\nblock_size = \"64k\"\n",
      "p.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto again = ParsePlan(PlanToToml(*plan), "again.toml");
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << PlanToToml(*plan);
  ASSERT_EQ(again->phases.size(), 3u);
  EXPECT_EQ(again->phases[0].Own<SmallFilesPlan>().small_files, 7u);
  EXPECT_EQ(again->phases[1].Own<MdtestPlan>().md_op, v1::MD_FILE_CREATE);
  EXPECT_EQ(again->phases[1].Own<MdtestPlan>().md_items, 9u);
  EXPECT_EQ(again->phases[1].Own<MdtestPlan>().md_write_bytes, 16u);
  EXPECT_EQ(again->phases[2].Own<SeeksPlan>().seeks, 5u);
  EXPECT_EQ(again->phases[2].transfer_bytes, 8192u);  // the seeks default
  EXPECT_EQ(again->phases[2].Own<SeeksPlan>().seek_rewrite_pct, 10u);
}

TEST(PhaseKindTest, SetWorkloadFieldsFillsOnlyTheKindsFields) {
  PhasePlan p;
  p.kind = v1::WRITE;
  p.Own<MdtestPlan>().md_items = 5;  // as no plan can say, but the spec must not carry it
  p.Own<SmallFilesPlan>().small_files = 3;
  v1::PhaseSpec spec;
  SetWorkloadFields(p, 1, &spec);
  EXPECT_EQ(spec.md_items(), 0u);
  EXPECT_EQ(spec.small_files(), 0u);
  p.kind = v1::MDTEST;
  SetWorkloadFields(p, 1, &spec);
  EXPECT_EQ(spec.md_items(), 5u);
  EXPECT_EQ(spec.small_files(), 0u);
}

}  // namespace
}  // namespace lockstep
