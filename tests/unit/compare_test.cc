#include "controller/results/compare.h"

#include <cmath>

#include "gtest/gtest.h"
#include "unit/results_fixtures.h"

namespace lockstep {
namespace {

using testing::MakeRun;
using testing::Reps;
using testing::SynthRun;

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
  EXPECT_NE(text.find("-19.9%  p<0.001 *"), std::string::npos) << text;
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

}  // namespace
}  // namespace lockstep
