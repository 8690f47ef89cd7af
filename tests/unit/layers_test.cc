// The layers table's arithmetic (controller/record/layers.h): efficiency
// with a layer or both missing, per repetition and against medians, the
// spreads, failed phases left out, one table per test of a sweep; and the
// efficiency figure history, compare and gate read (ai_metrics.h).
#include "controller/record/layers.h"

#include "controller/results/ai_metrics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

using ::testing::ElementsAre;
using ::testing::DoubleNear;
using ::testing::HasSubstr;

void AddPhase(v1::TestRecord* t, const std::string& name, v1::PhaseKind kind, uint32_t rep,
              double mib, const std::string& access, double extra_mib = 0,
              const std::string& extra_access = "", bool ok = true) {
  v1::PhaseRecord* p = t->add_phases();
  p->set_phase(name);
  p->set_kind(kind);
  p->set_repetition(rep);
  p->set_ok(ok);
  p->mutable_row()->set_access(access);
  p->mutable_row()->set_bw_mib(mib);
  if (extra_mib > 0) {
    v1::IterationRow* x = p->add_extra_rows();
    x->set_access(extra_access);
    x->set_bw_mib(extra_mib);
  }
}

// One repetition each of net, backend (write and read), write and read.
v1::TestRecord AllLayers(uint32_t clients, double net, double bw, double br, double w, double r,
                         uint32_t reps = 1) {
  v1::TestRecord t;
  t.set_client_agents(clients);
  for (uint32_t rep = 0; rep < reps; ++rep) {
    AddPhase(&t, "net", v1::NET, rep, net + rep, "net");
    AddPhase(&t, "back", v1::BACKEND, rep, bw + rep, "backend_write", br + rep, "backend_read");
    AddPhase(&t, "w", v1::WRITE, rep, w + rep, "write");
    AddPhase(&t, "r", v1::READ, rep, r + rep, "read");
  }
  return t;
}

TEST(Layers, EfficiencyIsEndToEndOverTheSmallerLayerOfItsDirection) {
  const std::vector<v1::LayerRow> rows = LayersOf(AllLayers(2, 1000, 800, 1200, 680, 900));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].phase(), "w");
  EXPECT_EQ(rows[0].access(), "write");
  EXPECT_EQ(rows[0].client_agents(), 2u);
  EXPECT_DOUBLE_EQ(rows[0].net_mib(), 1000);
  EXPECT_DOUBLE_EQ(rows[0].backend_mib(), 800);  // the write's back end
  EXPECT_DOUBLE_EQ(rows[0].efficiency(), 680.0 / 800);
  EXPECT_EQ(rows[0].bound_by(), "back end");
  EXPECT_DOUBLE_EQ(rows[1].backend_mib(), 1200);  // the read's
  EXPECT_DOUBLE_EQ(rows[1].efficiency(), 900.0 / 1000);
  EXPECT_EQ(rows[1].bound_by(), "network");
}

TEST(Layers, AMissingLayerLeavesTheOtherAndNoneLeavesNoRows) {
  v1::TestRecord net_only;
  AddPhase(&net_only, "net", v1::NET, 0, 500, "net");
  AddPhase(&net_only, "w", v1::WRITE, 0, 400, "write");
  std::vector<v1::LayerRow> rows = LayersOf(net_only);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].backend_mib(), 0);
  EXPECT_DOUBLE_EQ(rows[0].efficiency(), 0.8);
  EXPECT_EQ(rows[0].bound_by(), "network");

  // osd_bench writes only: a read has no back end, and no network here.
  v1::TestRecord osd;
  AddPhase(&osd, "back", v1::BACKEND, 0, 300, "backend_write");
  AddPhase(&osd, "r", v1::READ, 0, 250, "read");
  rows = LayersOf(osd);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].efficiency(), 0);
  EXPECT_EQ(rows[0].bound_by(), "");
  EXPECT_THAT(LayersLines(rows)[0], HasSubstr("no efficiency (no lower layer measured"));

  v1::TestRecord plain;
  AddPhase(&plain, "w", v1::WRITE, 0, 400, "write");
  EXPECT_TRUE(LayersOf(plain).empty());
  EXPECT_TRUE(EfficienciesOf(plain, "w").empty());
}

TEST(Layers, RepetitionsGiveMediansSpreadsAndPerRepetitionRatios) {
  // net 1000, 1001, 1002; back end write 500, 501, 502; write 400, 401, 402.
  const v1::TestRecord t = AllLayers(1, 1000, 500, 900, 400, 450, 3);
  const std::vector<v1::LayerRow> rows = LayersOf(t);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[0].end_to_end_mib(), 401);
  EXPECT_DOUBLE_EQ(rows[0].end_to_end_spread_mib(), 2);
  EXPECT_DOUBLE_EQ(rows[0].backend_spread_mib(), 2);
  EXPECT_EQ(rows[0].repetitions(), 3u);
  EXPECT_THAT(EfficienciesOf(t, "w"),
              ElementsAre(DoubleNear(400.0 / 500, 1e-12), DoubleNear(401.0 / 501, 1e-12),
                          DoubleNear(402.0 / 502, 1e-12)));
  EXPECT_DOUBLE_EQ(rows[0].efficiency(), 401.0 / 501);
  EXPECT_DOUBLE_EQ(rows[0].efficiency_spread(), 402.0 / 502 - 400.0 / 500);
}

TEST(Layers, LayersMeasuredOnceStandForEveryRepetition) {
  v1::TestRecord t;
  AddPhase(&t, "net", v1::NET, 0, 1000, "net");
  for (uint32_t rep = 0; rep < 3; ++rep) AddPhase(&t, "w", v1::WRITE, rep, 500 + 100 * rep, "write");
  EXPECT_THAT(EfficienciesOf(t, "w"), ElementsAre(0.5, 0.6, 0.7));
}

TEST(Layers, FailedPhasesAreLeftOut) {
  v1::TestRecord t;
  AddPhase(&t, "net", v1::NET, 0, 1000, "net", 0, "", /*ok=*/false);
  AddPhase(&t, "back", v1::BACKEND, 0, 800, "backend_write");
  AddPhase(&t, "w", v1::WRITE, 0, 400, "write");
  AddPhase(&t, "w", v1::WRITE, 1, 1, "write", 0, "", /*ok=*/false);
  const std::vector<v1::LayerRow> rows = LayersOf(t);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].net_mib(), 0);
  EXPECT_EQ(rows[0].repetitions(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].efficiency(), 0.5);
}

TEST(Layers, EachTestOfASweepHasItsOwnRowsAndTheEfficiencyFigure) {
  v1::RunRecord run;
  *run.add_tests() = AllLayers(1, 1000, 800, 1200, 700, 900);
  *run.add_tests() = AllLayers(2, 2000, 800, 1200, 760, 1000);
  for (int i = 0; i < 2; ++i) {
    v1::TestRecord* t = run.mutable_tests(i);
    t->set_test_id(i);
    for (const char* name : {"w", "r"}) {
      v1::SummaryRow* s = t->add_summary();
      s->set_phase(name);
      s->set_operation(name == std::string("w") ? "write" : "read");
    }
  }
  EXPECT_DOUBLE_EQ(LayersOf(run.tests(0))[0].efficiency(), 700.0 / 800);
  EXPECT_DOUBLE_EQ(LayersOf(run.tests(1))[0].efficiency(), 760.0 / 800);
  EXPECT_THAT(LayersLines(LayersOf(run.tests(1)))[0],
              HasSubstr("layers: clients 2, write \"w\": end-to-end 760.00 MiB/s (spread 0.00), "
                        "network 2000.00 MiB/s (spread 0.00), back end 800.00 MiB/s (spread "
                        "0.00): efficiency 95.0% (spread 0.0), bound by the back end"));
  int figures = 0;
  for (const AiMetric& m : AiMetricsOf(run)) {
    if (m.metric != "efficiency") continue;
    ++figures;
    ASSERT_EQ(m.values.size(), 1u);
    EXPECT_GT(m.values[0], 0.7);
  }
  EXPECT_EQ(figures, 4);  // write and read of both tests
  EXPECT_EQ(FormatAiValue("efficiency", 0.875), "87.50%");
}

}  // namespace
}  // namespace lockstep
