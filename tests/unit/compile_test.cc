// CompileTest: a test's phases resolved once, their specs built once and
// stamped per repetition and client; refusals returned, not swallowed; an
// unknown kind refused, and inert where a record of a newer version has one.
#include "controller/plan/compile.h"

#include "controller/plan/phase_kind.h"
#include "controller/plan/plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "unit/plan_text.h"

namespace lockstep {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A write of 8 MiB in all and its read, each at 2 and 8 tasks per agent.
const std::string kPlan =
    plan_text::Phase("w", "write",
                     "transfer_size = \"1m\"\ntotal_size = \"8m\"\n"
                     "tasks_per_agent = [2, 8]\nfile_per_process = true\n") +
    plan_text::Phase("r", "read",
                     "transfer_size = \"1m\"\nblock_size = \"4m\"\n"
                     "tasks_per_agent = [2, 8]\nfile_per_process = true\n");

TEST(Compile, EachPhaseOnceWithTheTestsValuesAndSplit) {
  auto plan = ParsePlan(kPlan, "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const ResolvedPlan resolved = ResolvePlan(*plan);
  auto test = CompileTest(*plan, resolved, 0, 2, /*ignore_free_space=*/false);
  ASSERT_TRUE(test.ok()) << test.status();
  ASSERT_EQ(test->phases.size(), 2u);
  EXPECT_EQ(test->client_agents, 2u);
  const CompiledPhase& w = test->phases[0];
  EXPECT_EQ(w.planned, &plan->phases[0]);
  EXPECT_EQ(w.resolved, &resolved.tests[0][0]);
  EXPECT_EQ(w.resolved->tasks_per_agent, std::vector<uint32_t>{2});
  EXPECT_EQ(w.spec.phase_id(), "t0/r0/w");
  EXPECT_EQ(w.spec.tasks(), 2u);
  EXPECT_EQ(w.spec.total_tasks(), 4u);
  EXPECT_EQ(w.spec.block_bytes(), 2u << 20);  // 8 MiB over 4 tasks
  EXPECT_EQ(w.spec.first_rank(), 0u);
  EXPECT_EQ(w.aggregate_note, "");
  EXPECT_EQ(test->phases[1].spec.block_bytes(), 4u << 20);  // block_size as given
  EXPECT_FALSE(test->phases[1].spec.ignore_free_space());
}

TEST(Compile, APlanIsResolvedOncePerTestAndPhase) {
  auto plan = ParsePlan(kPlan, "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const ResolvedPlan resolved = ResolvePlan(*plan);
  ASSERT_EQ(resolved.tests.size(), 2u);  // tasks_per_agent = [2, 8]
  for (uint32_t t = 0; t < 2; ++t) {
    ASSERT_EQ(resolved.tests[t].size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      const PhasePlan& p = resolved.tests[t][i];
      EXPECT_EQ(p.name, plan->phases[i].name);
      EXPECT_EQ(p.tasks_per_agent, std::vector<uint32_t>{t == 0 ? 2u : 8u});
      EXPECT_TRUE(p.points.empty());
    }
  }
  // A recompile (fewer clients after a loss) reads the same resolution.
  auto first = CompileTest(*plan, resolved, 0, 2, false);
  auto again = CompileTest(*plan, resolved, 0, 1, false);
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(first->phases[1].resolved, again->phases[1].resolved);
  EXPECT_EQ(again->phases[1].spec.total_tasks(), 2u);
}

TEST(Compile, RepetitionAndClientAreStampsNotRebuilds) {
  auto plan = ParsePlan(kPlan, "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const ResolvedPlan resolved = ResolvePlan(*plan);
  auto test = CompileTest(*plan, resolved, 0, 3, /*ignore_free_space=*/true);
  ASSERT_TRUE(test.ok()) << test.status();
  v1::PhaseSpec s = SpecOfRepetition(test->phases[1], 4);
  EXPECT_EQ(s.repetition(), 4u);
  EXPECT_EQ(s.phase_id(), "t0/r4/r");
  EXPECT_TRUE(s.ignore_free_space());
  SetClientRanks(2, &s);
  EXPECT_EQ(s.first_rank(), 4u);  // client 2 of 3, 2 tasks each
  // Everything else is the compiled spec's.
  s.set_repetition(0);
  s.set_phase_id("t0/r0/r");
  s.set_first_rank(0);
  EXPECT_EQ(s.SerializeAsString(), test->phases[1].spec.SerializeAsString());
}

TEST(Compile, ASplitTooSmallIsRefusedNotSwallowed) {
  auto plan = ParsePlan(kPlan, "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const ResolvedPlan resolved = ResolvePlan(*plan);
  auto test = CompileTest(*plan, resolved, 1, 2, false);  // 16 tasks x 1 MiB > 8 MiB
  ASSERT_FALSE(test.ok());
  EXPECT_THAT(test.status().message(),
              AllOf(HasSubstr("phase 'w' test 1: total_size 8 MiB is smaller than 16 tasks"),
                    HasSubstr("raise total_size to 16 MiB")));
}

TEST(Compile, AnUnknownKindIsRefusedNamingThePlanAndPhase) {
  auto plan = ParsePlan(kPlan, "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  plan->phases[1].kind = static_cast<v1::PhaseKind>(977);  // a front end's or a newer plan's
  const ResolvedPlan resolved = ResolvePlan(*plan);
  auto test = CompileTest(*plan, resolved, 0, 2, false);
  ASSERT_FALSE(test.ok());
  EXPECT_EQ(test.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(test.status().message(),
              AllOf(HasSubstr("plan.toml: phase 'r' has kind 977"), HasSubstr("does not know"),
                    HasSubstr("write, read")));
}

TEST(Compile, AnUnknownKindInARecordIsInertNotAWrite) {
  const v1::PhaseKind newer = static_cast<v1::PhaseKind>(977);
  EXPECT_EQ(FindKind(newer), nullptr);
  EXPECT_EQ(FindKind(v1::WRITE), &KindOf(v1::WRITE));
  const PhaseKindDef& k = KindOf(newer);
  EXPECT_NE(&k, &KindOf(v1::WRITE));
  EXPECT_FALSE(k.LeavesFiles(PhasePlan{}));
  EXPECT_FALSE(k.IorReportRow());
  v1::PhaseSpec spec;
  spec.set_kind(newer);
  v1::PhaseRecord pr;
  pr.set_ok(true);
  k.Reduce({}, spec, 0, &pr);
  EXPECT_FALSE(pr.ok());
  EXPECT_THAT(pr.error(), HasSubstr("phase kind 977 is not known"));
  pr.set_kind(newer);
  EXPECT_THAT(k.ReportNotes(pr, {}), ::testing::ElementsAre(HasSubstr("not shown")));
}

}  // namespace
}  // namespace lockstep
