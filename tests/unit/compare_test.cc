#include "controller/results/compare.h"

#include <cmath>

#include "gtest/gtest.h"
#include "unit/results_fixtures.h"

namespace lockstep {
namespace {


TEST(CompareStats, IncompleteBetaKnownValues) {
  EXPECT_NEAR(RegularizedIncompleteBeta(2, 3, 0.5), 0.6875, 1e-12);
  EXPECT_NEAR(RegularizedIncompleteBeta(1, 1, 0.3), 0.3, 1e-12);
  // I_x(1/2, 1/2) = (2/pi) asin(sqrt(x)).
  EXPECT_NEAR(RegularizedIncompleteBeta(0.5, 0.5, 0.3), 2 / M_PI * std::asin(std::sqrt(0.3)), 1e-10);
  EXPECT_EQ(RegularizedIncompleteBeta(3, 4, 0), 0);
  EXPECT_EQ(RegularizedIncompleteBeta(3, 4, 1), 1);
  EXPECT_TRUE(std::isnan(RegularizedIncompleteBeta(-1, 4, 0.5)));
}

TEST(CompareStats, StudentTCdfKnownValues) {
  EXPECT_NEAR(StudentTCdf(0, 7), 0.5, 1e-12);
  EXPECT_NEAR(StudentTCdf(1, 1), 0.75, 1e-10);           // Cauchy
  EXPECT_NEAR(StudentTCdf(2.0, 5), 0.9490302605850709, 1e-9);
  EXPECT_NEAR(StudentTCdf(2.228138851986274, 10), 0.975, 1e-9);
  EXPECT_NEAR(StudentTCdf(-1.812461122811676, 10), 0.05, 1e-9);
  EXPECT_NEAR(StudentTCdf(1.959963984540054, 1e7), 0.975, 1e-6);  // -> normal
  EXPECT_NEAR(StudentTCdf(2.5, 4.5) + StudentTCdf(-2.5, 4.5), 1.0, 1e-12);
}

TEST(CompareStats, WelchMatchesReference) {
  // Reference values computed independently (Welch formulas, and Simpson
  // integration of the t density for p).
  std::vector<double> a = {27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1,
                           19.6, 19.0, 21.7, 21.4};
  std::vector<double> b = {27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9,
                           22.1, 22.9, 20.5, 24.4};
  auto w = WelchTTest(a, b);
  ASSERT_TRUE(w.available);
  EXPECT_NEAR(w.t, 2.455356, 1e-5);  // (mean_b - mean_a) / se
  EXPECT_NEAR(w.df, 24.988529, 1e-5);
  EXPECT_NEAR(w.p_two_sided, 0.021378, 1e-5);
  EXPECT_NEAR(w.p_b_higher, w.p_two_sided / 2, 1e-12);
  EXPECT_FALSE(WelchTTest({1.0}, {1.0, 2.0}).available);
}

TEST(CompareRuns, TwentyPercentDropWithLowNoiseIsSignificant) {
  SynthRun a, b;
  a.run_id = "A";
  b.run_id = "B";
  a.results = {{"write", 4, Reps(1000, 0.01, 5)}};
  b.results = {{"write", 4, Reps(800, 0.01, 5, 3)}};
  Comparison c = CompareRuns(MakeRun(a), MakeRun(b));
  ASSERT_EQ(c.matched.size(), 1u);
  const auto& m = c.matched[0];
  EXPECT_NEAR(m.change_pct, -20.0, 0.5);
  ASSERT_TRUE(m.welch.available);
  EXPECT_LT(m.welch.p_two_sided, 0.001);
  EXPECT_LT(m.welch.p_b_lower, 0.001);
  EXPECT_NE(m.SignificanceText().find("*"), std::string::npos);
  std::string text = FormatComparison(c);
  EXPECT_NE(text.find("Welch"), std::string::npos) << text;
  // The change of the medians (1001.0 -> 800.8); the means' is -19.9%.
  EXPECT_NE(text.find("-20.0%  p<0.001 *"), std::string::npos) << text;
  EXPECT_NE(text.find("1001.00  990.00..1009.00"), std::string::npos) << text;
}

TEST(CompareRuns, OnePercentDropWithLargeNoiseIsNotSignificant) {
  SynthRun a, b;
  a.results = {{"write", 4, Reps(1000, 0.15, 5)}};
  b.results = {{"write", 4, Reps(990, 0.15, 5, 4)}};
  Comparison c = CompareRuns(MakeRun(a), MakeRun(b));
  ASSERT_EQ(c.matched.size(), 1u);
  EXPECT_NEAR(c.matched[0].change_pct, -1.0, 1.0);
  ASSERT_TRUE(c.matched[0].welch.available);
  EXPECT_GT(c.matched[0].welch.p_two_sided, 0.3);
  EXPECT_EQ(c.matched[0].SignificanceText().find("*"), std::string::npos);
}

TEST(CompareRuns, SingleRepetitionSaysNotAvailable) {
  SynthRun a, b;
  a.results = {{"read", 2, {500}}};
  b.results = {{"read", 2, {450}}};
  Comparison c = CompareRuns(MakeRun(a), MakeRun(b));
  ASSERT_EQ(c.matched.size(), 1u);
  EXPECT_EQ(c.matched[0].SignificanceText(), "n/a (1 rep)");
  EXPECT_NE(FormatComparison(c).find("n/a (1 rep)"), std::string::npos);
}

TEST(CompareRuns, ListsWhatDiffers) {
  SynthRun a, b;
  a.results = b.results = {{"write", 4, Reps(1000, 0.01, 3)}};
  b.run_id = "run-b";
  b.kernel = "6.1.0-21-amd64";
  b.agent_version = "0.2.0";
  b.fs_type = "lustre";
  b.direct = true;
  b.plan_sha256 = "ffff";
  auto diffs = DiffRuns(MakeRun(a), MakeRun(b));
  std::map<std::string, std::pair<std::string, std::string>> by;
  for (const auto& d : diffs) by[d.what] = {d.a, d.b};
  EXPECT_EQ(by["kernel"], std::make_pair(std::string("6.1.0-18-amd64"), std::string("6.1.0-21-amd64")));
  EXPECT_EQ(by["agent_version"].second, "0.2.0");
  EXPECT_EQ(by["fs types"].second, "lustre");
  EXPECT_EQ(by["phase write: direct"], std::make_pair(std::string("false"), std::string("true")));
  EXPECT_TRUE(by.count("plan_sha256"));
  EXPECT_FALSE(by.count("cores"));
  EXPECT_EQ(diffs[0].what, "plan_sha256");  // identity first
}

TEST(CompareRuns, NothingMatchingSaysWhatDiffers) {
  SynthRun a, b;
  a.results = {{"write", 4, Reps(1000, 0.01, 3)}};
  b.results = {{"write", 8, Reps(1000, 0.01, 3)}};
  b.kernel = "6.5.0";
  Comparison c = CompareRuns(MakeRun(a), MakeRun(b));
  EXPECT_TRUE(c.matched.empty());
  std::string text = FormatComparison(c);
  EXPECT_NE(text.find("No results match"), std::string::npos) << text;
  EXPECT_NE(text.find("tasks=4"), std::string::npos) << text;
  EXPECT_NE(text.find("tasks=8"), std::string::npos) << text;
  EXPECT_NE(text.find("kernel"), std::string::npos) << text;
  EXPECT_NE(text.find("total tasks"), std::string::npos) << text;
}

TEST(CompareMatrix, ThreeRunsSideBySide) {
  std::vector<v1::RunRecord> runs;
  for (int i = 0; i < 3; ++i) {
    SynthRun s;
    s.run_id = "run-" + std::to_string(i);
    s.results = {{"write", 4, Reps(1000 - 100 * i, 0.01, 5)}, {"read", 4, Reps(2000, 0.01, 5)}};
    if (i == 2) s.kernel = "6.9";
    runs.push_back(MakeRun(s));
  }
  std::string m = FormatMatrix(runs);
  EXPECT_NE(m.find("[3] run-2"), std::string::npos) << m;
  EXPECT_NE(m.find("(-20.0%*)"), std::string::npos) << m;
  EXPECT_NE(m.find("kernel"), std::string::npos) << m;
  EXPECT_NE(m.find("read/read tasks=4"), std::string::npos) << m;
}

// Seed 004: "median of several runs". Three runs per side, each with
// repetitions; a side's values are all of them pooled.
TEST(CompareGroups, MedianMinMaxOverSeveralRuns) {
  std::vector<v1::RunRecord> a, b;
  const double reads_a[3][2] = {{73.21, 70.0}, {66.88, 65.0}, {67.31, 69.0}};
  for (int i = 0; i < 3; ++i) {
    SynthRun s;
    s.run_id = "a" + std::to_string(i);
    s.results = {{"read", 4, {reads_a[i][0], reads_a[i][1]}}};
    a.push_back(MakeRun(s));
    s.run_id = "b" + std::to_string(i);
    s.results = {{"read", 4, {169.89 - i, 166.98 + i}}};
    b.push_back(MakeRun(s));
  }
  Comparison c = CompareGroups(a, b);
  ASSERT_EQ(c.matched.size(), 1u);
  const ResultComparison& m = c.matched[0];
  EXPECT_EQ(m.runs_a, 3u);
  EXPECT_EQ(m.reps_a.size(), 6u);
  // Sorted A: 65.0 66.88 67.31 69.0 70.0 73.21 -> median (67.31 + 69.0) / 2.
  EXPECT_NEAR(m.median_a, 68.155, 1e-9);
  EXPECT_DOUBLE_EQ(m.min_a, 65.0);
  EXPECT_DOUBLE_EQ(m.max_a, 73.21);
  EXPECT_NEAR(m.median_b, (167.98 + 168.89) / 2, 1e-9);
  EXPECT_NEAR(m.median_change_pct, (m.median_b - m.median_a) / m.median_a * 100, 1e-9);
  EXPECT_TRUE(m.welch.available);
  EXPECT_EQ(c.run_a, "a0, a1, a2");
  std::string text = FormatComparison(c);
  EXPECT_NE(text.find("A = a0, a1, a2 (3 runs"), std::string::npos) << text;
  EXPECT_NE(text.find("68.16"), std::string::npos) << text;
  EXPECT_NE(text.find("65.00..73.21"), std::string::npos) << text;
  EXPECT_NE(text.find("A median"), std::string::npos) << text;
  // One run a side is the same as CompareRuns.
  Comparison one = CompareGroups({a[0]}, {b[0]});
  EXPECT_EQ(FormatComparison(one), FormatComparison(CompareRuns(a[0], b[0])));
  EXPECT_NE(FormatComparison(one).find("A = a0\n"), std::string::npos);
  // Three groups: a matrix of medians over the groups.
  std::string matrix = FormatMatrix(std::vector<std::vector<v1::RunRecord>>{a, b, {b[0]}});
  EXPECT_NE(matrix.find("[1] a0, a1, a2"), std::string::npos) << matrix;
  EXPECT_NE(matrix.find("(3 runs)"), std::string::npos) << matrix;
  EXPECT_NE(matrix.find("68.16"), std::string::npos) << matrix;
}

TEST(CompareGroups, MedianOfEvenAndOddCounts) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Median({}), 0);
}

// Two tests of one shape that differ only in a swept key (stripe_size) are
// two results, matched by their sweep point.
TEST(CompareGroups, SweepPointsAreSeparateResults) {
  auto run = [](const std::string& id, double small, double big) {
    SynthRun s;
    s.run_id = id;
    s.results = {{"read", 4, Reps(small, 0.01, 3)}};
    v1::RunRecord r = MakeRun(s);
    v1::TestRecord second = r.tests(0);
    second.set_test_id(1);
    for (auto& row : *second.mutable_summary()) {
      row.clear_bw_mib_per_rep();
      for (double v : Reps(big, 0.01, 3)) row.add_bw_mib_per_rep(v);
    }
    auto* v = r.mutable_tests(0)->add_sweep();
    v->set_key("stripe_size");
    v->set_value("64k");
    auto* w = second.add_sweep();
    w->set_key("stripe_size");
    w->set_value("2m");
    *r.add_tests() = second;
    return r;
  };
  Comparison c = CompareRuns(run("a", 10, 67), run("b", 11, 168));
  ASSERT_EQ(c.matched.size(), 2u);
  EXPECT_EQ(c.matched[0].key.sweep, "stripe_size=2m");
  EXPECT_EQ(c.matched[1].key.sweep, "stripe_size=64k");
  EXPECT_NEAR(c.matched[0].median_a, 67 * 0.9945, 1e-6);  // the middle of 0.99, 0.9945, 1.0035
  EXPECT_NE(c.matched[1].key.ToString().find("[stripe_size=64k]"), std::string::npos);
}

}  // namespace
}  // namespace lockstep
