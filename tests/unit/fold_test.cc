#include "controller/record/fold.h"

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

v1::PhaseSpec Spec(const std::string& name, v1::PhaseKind kind, uint32_t total_tasks) {
  v1::PhaseSpec s;
  s.set_phase_name(name);
  s.set_kind(kind);
  s.set_tasks(1);
  s.set_total_tasks(total_tasks);
  s.set_transfer_bytes(1 << 20);
  s.set_block_bytes(4 << 20);
  s.set_segments(1);
  return s;
}

v1::PhaseRecord Record(const v1::PhaseSpec& spec, uint32_t rep, double total_s, bool ok,
                       bool superseded = false) {
  v1::PhaseRecord p;
  p.set_phase(spec.phase_name());
  p.set_phase_id(absl::StrFormat("t0/r%u/%s", rep, spec.phase_name()));
  p.set_kind(spec.kind());
  p.set_repetition(rep);
  *p.mutable_spec() = spec;
  p.mutable_row()->set_bytes((uint64_t{4} << 20) * spec.total_tasks());
  p.mutable_row()->set_total_s(total_s);
  p.set_ok(ok);
  if (superseded) p.set_error_kind(v1::SUPERSEDED);
  return p;
}

TEST(FoldTest, OneRowPerPlannedPhaseInPlanOrderFromTheCountedRecords) {
  v1::RunRecord run;
  v1::TestRecord test;
  const v1::PhaseSpec w = Spec("w", v1::WRITE, 4), r = Spec("r", v1::READ, 4);
  *test.add_plan_specs() = w;
  *test.add_plan_specs() = r;
  *test.add_phases() = Record(w, 0, 1.0, true);
  *test.add_phases() = Record(r, 0, 9.0, true, /*superseded=*/true);
  *test.add_phases() = Record(r, 0, 2.0, true);
  *test.add_phases() = Record(w, 1, 2.0, false);  // failed: not counted
  test.add_summary()->set_phase("stale");          // replaced

  FoldTest(run, &test);
  ASSERT_EQ(test.summary_size(), 2);
  EXPECT_EQ(test.summary(0).phase(), "w");
  EXPECT_EQ(test.summary(0).repetitions(), 1u);
  EXPECT_DOUBLE_EQ(test.summary(0).bw_max_mib(), 16.0);
  EXPECT_EQ(test.summary(1).phase(), "r");
  EXPECT_EQ(test.summary(1).repetitions(), 1u);  // the superseded attempt left out
  EXPECT_DOUBLE_EQ(test.summary(1).bw_max_mib(), 8.0);
}

TEST(FoldTest, LayoutIsTheLastCountedRecordsAPhaseNeverCountedStillHasItsRow) {
  v1::RunRecord run;
  v1::TestRecord test;
  const v1::PhaseSpec w4 = Spec("w", v1::WRITE, 4), r4 = Spec("r", v1::READ, 4);
  *test.add_plan_specs() = w4;
  *test.add_plan_specs() = r4;
  // Repetition 0 on 4 clients, one lost: repetition 1 on 2 (on_agent_loss = "continue").
  *test.add_phases() = Record(w4, 0, 1.0, true);
  *test.add_phases() = Record(r4, 0, 1.0, false);
  *test.add_phases() = Record(Spec("w", v1::WRITE, 2), 1, 1.0, true);
  // A phase only an older run's records name (no planned spec): after the plan's.
  *test.add_phases() = Record(Spec("x", v1::WRITE, 2), 1, 1.0, true);

  FoldTest(run, &test);
  ASSERT_EQ(test.summary_size(), 3);
  EXPECT_EQ(test.summary(0).num_tasks(), 2u);
  EXPECT_EQ(test.summary(0).repetitions(), 2u);
  EXPECT_EQ(test.summary(1).phase(), "r");
  EXPECT_EQ(test.summary(1).repetitions(), 0u);
  EXPECT_EQ(test.summary(1).num_tasks(), 4u);
  EXPECT_EQ(test.summary(2).phase(), "x");
}

}  // namespace
}  // namespace lockstep
