// The AI figures of train and checkpoint results (controller/results/
// ai_metrics.h) in compare and gate.
#include "controller/results/ai_metrics.h"

#include <cstdio>

#include "common/files.h"
#include "controller/cli/exit_codes.h"
#include "controller/cli/results_commands.h"
#include "controller/results/gate.h"
#include "controller/results/run_json.h"
#include "gtest/gtest.h"
#include "unit/results_fixtures.h"

namespace lockstep {
namespace {

using testing::TempDir;

// A run with a train result (AU per repetition `au`, threshold 0.9) and a
// checkpoint-write result (scale per repetition `ckpt`), 5 repetitions each.
v1::RunRecord AiRun(const std::string& id, const std::vector<double>& au,
                    const std::vector<double>& ckpt) {
  SynthRun s;
  s.run_id = id;
  s.results = {{"train", 4, Reps(500, 0.01, static_cast<int>(au.size()))},
               {"checkpoint-write", 4, Reps(800, 0.01, static_cast<int>(ckpt.size()))}};
  v1::RunRecord run = MakeRun(s);
  SetAiFigures(&run, "train", au, 0.9);
  SetAiFigures(&run, "checkpoint-write", ckpt);
  return run;
}

const std::vector<double> kAuGood = {0.95, 0.951, 0.949, 0.952, 0.948};
const std::vector<double> kAuBad = {0.80, 0.801, 0.799, 0.802, 0.798};
const std::vector<double> kCkpt = {1.0, 1.01, 0.99, 1.02, 0.98};

const AiMetric* Find(const std::vector<AiMetric>& ms, const std::string& metric) {
  for (const AiMetric& m : ms) {
    if (m.metric == metric) return &m;
  }
  return nullptr;
}

TEST(AiMetrics, EveryFigureOfTrainAndCheckpointResultsPerRepetition) {
  const v1::RunRecord run = AiRun("a", kAuGood, kCkpt);
  const std::vector<AiMetric> ms = AiMetricsOf(run);
  ASSERT_EQ(ms.size(), 7u);  // 4 train + 3 checkpoint-write
  const AiMetric* au = Find(ms, "au");
  ASSERT_NE(au, nullptr);
  EXPECT_EQ(au->key.operation, "train");
  EXPECT_EQ(au->values, kAuGood);
  EXPECT_EQ(au->passed, 1);
  EXPECT_DOUBLE_EQ(au->threshold, 0.9);
  EXPECT_NEAR(Find(ms, "au_min")->values[0], 0.93, 1e-12);
  EXPECT_NEAR(Find(ms, "au_host_min")->values[0], 0.94, 1e-12);  // the lower of the two hosts
  EXPECT_NEAR(Find(ms, "samples_per_s")->values[0], 950, 1e-9);
  EXPECT_EQ(Find(ms, "au_min")->passed, -1);
  const AiMetric* ckpt = Find(ms, "checkpoint_write_min_mib_per_s");
  ASSERT_NE(ckpt, nullptr);
  EXPECT_EQ(ckpt->key.operation, "checkpoint-write");
  EXPECT_NEAR(ckpt->values[3], 102, 1e-9);
  EXPECT_NEAR(Find(ms, "checkpoint_write_aggregate_mib_per_s")->values[0], 400, 1e-9);
  EXPECT_NEAR(Find(ms, "checkpoint_write_max_duration_s")->values[0], 1, 1e-12);
  EXPECT_EQ(Find(ms, "checkpoint_read_min_mib_per_s"), nullptr);

  // One repetition below the threshold fails the result; a run without AI
  // phases (or from before them) has no figures.
  std::vector<double> one_low = kAuGood;
  one_low[2] = 0.85;
  EXPECT_EQ(Find(AiMetricsOf(AiRun("b", one_low, kCkpt)), "au")->passed, 0);
  SynthRun plain;
  plain.results = {{"write", 4, Reps(1000, 0.01, 3)}};
  EXPECT_TRUE(AiMetricsOf(MakeRun(plain)).empty());
}

TEST(AiMetrics, NamesAreKnownAndDurationsAreLowerIsBetter) {
  EXPECT_NE(FindAiMetric("au"), nullptr);
  EXPECT_EQ(FindAiMetric("bandwidth"), nullptr);
  EXPECT_TRUE(FindAiMetric("checkpoint_read_max_duration_s")->lower_is_better);
  EXPECT_FALSE(FindAiMetric("samples_per_s")->lower_is_better);
  EXPECT_TRUE(Has(AiMetricNames(), "au, au_min, au_host_min, samples_per_s, "
                                   "checkpoint_write_min_mib_per_s"));
  EXPECT_EQ(FormatAiValue("au", 0.9512), "95.12%");
  EXPECT_EQ(FormatAiValue("samples_per_s", 12.345), "12.35");
}

TEST(AiMetricsCompare, ShowsMediansChangeSignificanceAndTheAuVerdict) {
  const Comparison c = CompareRuns(AiRun("a", kAuGood, kCkpt), AiRun("b", kAuBad, kCkpt));
  ASSERT_EQ(c.metrics.size(), 7u);
  const MetricComparison* au = nullptr;
  for (const auto& m : c.metrics) {
    if (m.metric == "au") au = &m;
  }
  ASSERT_NE(au, nullptr);
  EXPECT_NEAR(au->median_a, 0.95, 1e-12);
  EXPECT_NEAR(au->median_b, 0.80, 1e-12);
  EXPECT_NEAR(au->median_change_pct, -15.79, 0.01);
  EXPECT_TRUE(au->welch.available);
  EXPECT_LT(au->welch.p_two_sided, 0.001);
  EXPECT_EQ(au->passed_a, 1);
  EXPECT_EQ(au->passed_b, 0);
  const std::string text = FormatComparison(c);
  EXPECT_TRUE(Has(text, "AI figures (median over the repetitions of each side):")) << text;
  EXPECT_TRUE(Has(text, "95.00%")) << text;
  EXPECT_TRUE(Has(text, "80.00%")) << text;
  EXPECT_TRUE(Has(text, "PASS (>= 90%) -> FAIL (>= 90%)")) << text;
  EXPECT_TRUE(Has(text, "checkpoint_write_max_duration_s")) << text;
  // Runs without AI phases print no such section.
  SynthRun plain;
  plain.results = {{"write", 4, Reps(1000, 0.01, 3)}};
  EXPECT_FALSE(Has(FormatComparison(CompareRuns(MakeRun(plain), MakeRun(plain))), "AI figures"));
}

const GateCase* CaseOf(const GateReport& r, const std::string& metric) {
  for (const GateCase& g : r.cases) {
    if (g.metric == metric) return &g;
  }
  return nullptr;
}

TEST(AiMetricsGate, AuBelowItsThresholdAndSlowerCheckpointsFail) {
  // The run's checkpoints take 25% longer and write 20% slower; its AU
  // falls below 90%.
  const std::vector<double> slow = {0.8, 0.808, 0.792, 0.816, 0.784};
  GateReport r = EvaluateGate(AiRun("base", kAuGood, kCkpt), AiRun("run", kAuBad, slow), {});
  EXPECT_EQ(r.verdict(), GateVerdict::kRegression);
  const GateCase* au = CaseOf(r, "au");
  ASSERT_NE(au, nullptr);
  EXPECT_EQ(au->outcome, GateCase::Outcome::kFail);
  EXPECT_TRUE(Has(au->message, "AU 80.00% is below the phase's threshold 90% (baseline 95.00% "
                               "passed)"))
      << au->message;
  const GateCase* dur = CaseOf(r, "checkpoint_write_max_duration_s");
  ASSERT_NE(dur, nullptr);
  EXPECT_NEAR(dur->drop_pct, 25, 0.5);  // a rise of a duration is its drop
  EXPECT_EQ(dur->outcome, GateCase::Outcome::kFail) << dur->message;
  EXPECT_EQ(CaseOf(r, "checkpoint_write_min_mib_per_s")->outcome, GateCase::Outcome::kFail);
  EXPECT_TRUE(Has(r.Text(), "train/train tasks=4")) << r.Text();
  EXPECT_TRUE(Has(r.Text(), " au: REGRESSION: AU 80.00%")) << r.Text();
  EXPECT_TRUE(Has(GateJunitXml(r), "run run: 80.00% (5 reps)")) << GateJunitXml(r);

  // The same run against itself passes; a per-figure --max-drop excuses
  // what it names and nothing else.
  EXPECT_EQ(EvaluateGate(AiRun("base", kAuGood, kCkpt), AiRun("run", kAuGood, kCkpt), {}).verdict(),
            GateVerdict::kPass);
  GateOptions loose;
  ASSERT_TRUE(ParseMaxDrop("checkpoint_write_max_duration_s=30%", &loose.max_drop).ok());
  GateReport r2 = EvaluateGate(AiRun("base", kAuGood, kCkpt), AiRun("run", kAuGood, slow), loose);
  EXPECT_EQ(CaseOf(r2, "checkpoint_write_max_duration_s")->outcome, GateCase::Outcome::kPass);
  EXPECT_EQ(CaseOf(r2, "checkpoint_write_min_mib_per_s")->outcome, GateCase::Outcome::kFail);
}

TEST(AiMetricsGate, AnUnknownMetricIsRefusedListingTheValidOnes) {
  const v1::RunRecord base = AiRun("base", kAuGood, kCkpt), run = AiRun("run", kAuGood, kCkpt);
  MaxDrop ok;
  for (const char* m : {"au=2%", "train=5%", "checkpoint-write=5%", "samples_per_s=3"}) {
    ASSERT_TRUE(ParseMaxDrop(m, &ok).ok()) << m;
  }
  EXPECT_TRUE(CheckMaxDropMetrics(ok, base, run).ok());
  MaxDrop bad;
  ASSERT_TRUE(ParseMaxDrop("samples_per_sec=3%", &bad).ok());
  absl::Status s = CheckMaxDropMetrics(bad, base, run);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Has(std::string(s.message()), "--max-drop samples_per_sec=3%: \"samples_per_sec\" "
                                            "is no metric of runs base and run"))
      << s;
  EXPECT_TRUE(Has(std::string(s.message()), "an operation (checkpoint-write, train)")) << s;
  EXPECT_TRUE(Has(std::string(s.message()), "au, au_min, au_host_min, samples_per_s")) << s;

  // Through the command: bad input.
  const std::string dir = TempDir("aigate");
  ASSERT_TRUE(WriteFileAtomically(dir + "/b.json", RunToJson(base)).ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/r.json", RunToJson(run)).ok());
  EXPECT_EQ(GateCommand({dir + "/r.json", "--baseline", dir + "/b.json", "--max-drop",
                         "samples_per_sec=3%", "--db", dir + "/h.db"}),
            kGateBadInput);
  EXPECT_EQ(GateCommand({dir + "/r.json", "--baseline", dir + "/b.json", "--max-drop", "au=2%",
                         "--db", dir + "/h.db"}),
            kGatePass);
}

}  // namespace
}  // namespace lockstep
