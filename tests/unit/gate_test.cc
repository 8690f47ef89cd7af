#include "controller/results/gate.h"

#include "absl/strings/str_format.h"
#include "common/files.h"
#include "controller/results/history.h"
#include "controller/cli/exit_codes.h"
#include "controller/cli/results_commands.h"
#include "gtest/gtest.h"
#include "unit/results_fixtures.h"

namespace lockstep {
namespace {

using testing::TempDir;

v1::RunRecord MkRun(const std::string& id, std::vector<testing::SynthResult> results,
                  const std::string& started = "2026-01-10T12:00:00Z") {
  SynthRun s;
  s.run_id = id;
  s.started_at = started;
  s.results = std::move(results);
  return MakeRun(s);
}

TEST(GateMaxDrop, Parses) {
  MaxDrop m;
  ASSERT_TRUE(ParseMaxDrop("7%", &m).ok());
  ASSERT_TRUE(ParseMaxDrop("write=10%", &m).ok());
  ASSERT_TRUE(ParseMaxDrop("read = 2.5", &m).ok());
  EXPECT_EQ(m.default_pct, 7);
  EXPECT_EQ(m.For({.phase = "write", .operation = "write"}), 10);
  EXPECT_EQ(m.For({.phase = "read", .operation = "read"}), 2.5);
  EXPECT_EQ(m.For({.phase = "x", .operation = "remove"}), 7);
  for (const char* bad : {"", "%", "abc", "-3%", "120%", "=5%", "write="}) {
    absl::Status s = ParseMaxDrop(bad, &m);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_TRUE(Has(std::string(s.message()), "write=10%")) << s;
  }
}

TEST(GateEvaluate, SignificantTwentyPercentDropFails) {
  auto base = MkRun("base", {{"write", 4, Reps(1000, 0.01, 5)}, {"read", 4, Reps(2000, 0.01, 5)}});
  auto run = MkRun("new", {{"write", 4, Reps(800, 0.01, 5, 2)}, {"read", 4, Reps(2010, 0.01, 5, 2)}});
  GateReport r = EvaluateGate(base, run, {});
  EXPECT_EQ(r.verdict(), GateVerdict::kRegression);
  EXPECT_EQ(r.failures(), 1);
  ASSERT_EQ(r.cases.size(), 2u);
  const GateCase* write = r.cases[0].key.operation == "write" ? &r.cases[0] : &r.cases[1];
  EXPECT_EQ(write->outcome, GateCase::Outcome::kFail);
  EXPECT_NEAR(write->drop_pct, 20, 0.5);
  EXPECT_TRUE(Has(write->message, "Welch")) << write->message;
  EXPECT_TRUE(Has(r.Text(), "FAIL: 1 of 2")) << r.Text();
}

TEST(GateEvaluate, NoisyDropIsNotAFailure) {
  // 8% drop > 5% threshold, but the repetitions scatter by +-30%.
  auto base = MkRun("base", {{"write", 4, Reps(1000, 0.3, 5)}});
  auto run = MkRun("new", {{"write", 4, Reps(920, 0.3, 5, 5)}});
  GateReport r = EvaluateGate(base, run, {});
  EXPECT_EQ(r.verdict(), GateVerdict::kPass) << r.Text();
  EXPECT_TRUE(Has(r.cases[0].message, "not significant")) << r.cases[0].message;
}

TEST(GateEvaluate, SmallSignificantDropUnderThresholdPasses) {
  auto base = MkRun("base", {{"write", 4, Reps(1000, 0.001, 5)}});
  auto run = MkRun("new", {{"write", 4, Reps(970, 0.001, 5)}});
  GateReport r = EvaluateGate(base, run, {});
  EXPECT_EQ(r.verdict(), GateVerdict::kPass);
  EXPECT_LT(r.cases[0].welch.p_b_lower, 0.05);  // significant, but only 3%
}

TEST(GateEvaluate, SingleRepUsesTheThresholdOnlyAndOverridesApply) {
  auto base = MkRun("base", {{"write", 4, {1000}}, {"read", 4, {1000}}});
  auto run = MkRun("new", {{"write", 4, {880}}, {"read", 4, {960}}});
  GateReport r = EvaluateGate(base, run, {});
  EXPECT_EQ(r.failures(), 1);  // write -12% fails, read -4% passes
  for (const auto& c : r.cases) EXPECT_TRUE(Has(c.message, "threshold only")) << c.message;
  GateOptions o;
  ASSERT_TRUE(ParseMaxDrop("write=15%", &o.max_drop).ok());
  EXPECT_EQ(EvaluateGate(base, run, o).verdict(), GateVerdict::kPass);
}

constexpr char kWriteKey[] = "write/write tasks=4 tpn=2 xfer=1 MiB block=16 MiB seg=1 fpp";

TEST(GateEvaluate, DropWithinTheNoiseWindowSpreadPasses) {
  auto base = MkRun("base", {{"write", 4, {1000}}});
  auto run = MkRun("new", {{"write", 4, {880}}});
  GateOptions o;
  o.noise_window = NoiseWindow{.baseline_id = "base", .requested = 4,
                               .run_ids = {"w4", "w3", "w2", "w1"},
                               .means = {{kWriteKey, {1000, 850, 1020, 900}}}};
  GateReport r = EvaluateGate(base, run, o);
  EXPECT_EQ(r.verdict(), GateVerdict::kPass) << r.Text();
  EXPECT_TRUE(Has(r.cases[0].message, "within the run-to-run spread")) << r.cases[0].message;
  EXPECT_TRUE(Has(r.Text(), "--noise-window 4, the 4 complete runs of the plan recorded before "
                            "base: w4, w3, w2, w1")) << r.Text();
  // Without the window the same drop fails: the baseline's repetitions are the only noise.
  GateReport plain = EvaluateGate(base, run, {});
  EXPECT_EQ(plain.verdict(), GateVerdict::kRegression) << plain.Text();
  EXPECT_TRUE(Has(plain.Text(), "noise: baseline base's repetitions (Welch t-test, alpha 0.05); "
                                "no --noise-window")) << plain.Text();
}

// (2) A 33% drop with p < 0.01 fails even when a window of very noisy runs
// (spread 100%) would excuse it; a 10.7% drop with 0.01 < p < 0.05 is excused
// by the same window, so the window is not simply ignored.
TEST(GateEvaluate, ADecisiveDropFailsWhateverTheNoiseWindow) {
  auto base = MkRun("base", {{"write", 4, Reps(1000, 0.1, 5)}});
  GateOptions o;
  o.noise_window = NoiseWindow{.baseline_id = "base", .requested = 3,
                               .run_ids = {"n3", "n2", "n1"},
                               .means = {{kWriteKey, {500, 1500, 1000}}}};
  GateReport big = EvaluateGate(base, MkRun("new", {{"write", 4, Reps(670, 0.1, 5, 1)}}), o);
  ASSERT_EQ(big.cases.size(), 1u);
  EXPECT_NEAR(big.cases[0].drop_pct, 32, 0.5);
  EXPECT_LT(big.cases[0].welch.p_b_lower, 0.01);
  EXPECT_NEAR(big.cases[0].spread_pct, 100, 0.01);
  EXPECT_EQ(big.cases[0].outcome, GateCase::Outcome::kFail) << big.Text();
  EXPECT_EQ(big.verdict(), GateVerdict::kRegression);
  EXPECT_TRUE(Has(big.cases[0].message, "within the spread, but p < 0.01 fails regardless"))
      << big.cases[0].message;

  GateReport small = EvaluateGate(base, MkRun("new", {{"write", 4, Reps(880, 0.1, 5, 3)}}), o);
  ASSERT_EQ(small.cases.size(), 1u);
  EXPECT_NEAR(small.cases[0].drop_pct, 10.7, 0.1);
  EXPECT_GT(small.cases[0].welch.p_b_lower, 0.01);
  EXPECT_LT(small.cases[0].welch.p_b_lower, 0.05);
  EXPECT_EQ(small.verdict(), GateVerdict::kPass) << small.Text();
  EXPECT_EQ(EvaluateGate(base, MkRun("new", {{"write", 4, Reps(880, 0.1, 5, 3)}}), {}).verdict(),
            GateVerdict::kRegression);
}

TEST(GateNoiseWindow, ParsesAWholeNumberOfRuns) {
  EXPECT_EQ(*ParseNoiseWindow("3"), 3);
  EXPECT_EQ(*ParseNoiseWindow(" 12 "), 12);
  for (const char* bad : {"0", "-2", "abc", "", "1.5", "3x"}) {
    auto n = ParseNoiseWindow(bad);
    ASSERT_FALSE(n.ok()) << bad;
    EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(Has(std::string(n.status().message()),
                    std::string("--noise-window \"") + bad + "\": expected a whole number of "
                                                             "runs >= 1"))
        << n.status();
  }
}

TEST(GateEvaluate, MissingResultFailsAndNewResultIsSkipped) {
  auto base = MkRun("base", {{"write", 4, Reps(1000, 0.01, 3)}, {"read", 4, Reps(1000, 0.01, 3)}});
  auto run = MkRun("new", {{"write", 4, Reps(1000, 0.01, 3)}, {"write", 8, Reps(1000, 0.01, 3)}});
  GateReport r = EvaluateGate(base, run, {});
  EXPECT_EQ(r.verdict(), GateVerdict::kRegression);
  std::string xml = GateJunitXml(r);
  EXPECT_TRUE(Has(xml, "type=\"missing\"")) << xml;
  EXPECT_TRUE(Has(xml, "<skipped")) << xml;
  EXPECT_TRUE(Has(xml, "tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\"")) << xml;
}

TEST(GateEvaluate, NothingComparableIsNoBaseline) {
  auto base = MkRun("base", {{"write", 4, Reps(1000, 0.01, 3)}});
  auto run = MkRun("new", {{"write", 8, Reps(1000, 0.01, 3)}});
  GateReport r = EvaluateGate(base, run, {});
  // The baseline's result is missing from the run: that is a failure, not "no baseline".
  EXPECT_EQ(r.verdict(), GateVerdict::kRegression);
  GateReport empty = EvaluateGate(MkRun("b", {}), run, {});
  EXPECT_EQ(empty.verdict(), GateVerdict::kNoBaseline);
}

TEST(GateJunit, OneTestcasePerResultWithNumbers) {
  auto base = MkRun("base", {{"write", 4, Reps(1000, 0.01, 5)}, {"read", 4, Reps(2000, 0.01, 5)}});
  auto run = MkRun("new", {{"write", 4, Reps(800, 0.01, 5)}, {"read", 4, Reps(2000, 0.01, 5)}});
  std::string xml = GateJunitXml(EvaluateGate(base, run, {}));
  EXPECT_TRUE(Has(xml, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
  size_t n = 0;
  for (size_t p = xml.find("<testcase "); p != std::string::npos; p = xml.find("<testcase ", p + 1)) ++n;
  EXPECT_EQ(n, 2u);
  EXPECT_TRUE(Has(xml, "<failure type=\"regression\" message=\"REGRESSION: 799.68 MiB/s vs baseline "
                       "999.60 MiB/s (-20.0%; max drop 5.0%)")) << xml;
  EXPECT_TRUE(Has(xml, "name=\"write/write tasks=4 tpn=2 xfer=1 MiB block=16 MiB seg=1 fpp\"")) << xml;
  EXPECT_TRUE(Has(xml, "<property name=\"baseline\" value=\"base\"/>")) << xml;
  EXPECT_TRUE(Has(xml, "</testsuites>"));
}

class GateCommandTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = TempDir("gate"); }
  std::string Write(const std::string& name, const v1::RunRecord& run) {
    std::string p = dir_ + "/" + name;
    EXPECT_TRUE(WriteFileAtomically(p, RunToJson(run)).ok());
    return p;
  }
  std::string dir_;
};

TEST_F(GateCommandTest, ExitCodesAndJunitFile) {
  std::string base = Write("base.json", MkRun("base", {{"write", 4, Reps(1000, 0.01, 5)}}));
  std::string bad = Write("bad.json", MkRun("bad", {{"write", 4, Reps(800, 0.01, 5)}}));
  std::string same = Write("same.json", MkRun("same", {{"write", 4, Reps(1001, 0.01, 5, 1)}}));
  std::string junit = dir_ + "/junit.xml";
  std::string db = dir_ + "/h.db";
  EXPECT_EQ(GateCommand({bad, "--baseline", base, "--junit", junit, "--db", db}), kGateRegression);
  auto xml = ReadFileToString(junit);
  ASSERT_TRUE(xml.ok());
  EXPECT_TRUE(Has(*xml, "<failure")) << *xml;
  EXPECT_EQ(GateCommand({same, "--baseline=" + base, "--junit", junit, "--db", db}), kGatePass);
  EXPECT_FALSE(Has(*ReadFileToString(junit), "<failure"));
  EXPECT_EQ(GateCommand({bad, "--baseline", base, "--max-drop", "25%", "--db", db}), kGatePass);
  EXPECT_EQ(GateCommand({bad, "--baseline", base, "--max-drop", "write=25%", "--db", db}), kGatePass);

  // last-good: no db at all, then a db without that plan -> 3.
  EXPECT_EQ(GateCommand({bad, "--db", db}), kGateNoBaseline);
  EXPECT_EQ(ImportCommand({"--db", db, bad}), 0);
  EXPECT_EQ(GateCommand({bad, "--db", db}), kGateNoBaseline);  // never its own baseline
  EXPECT_EQ(GateCommand({bad, "--baseline", dir_ + "/nope.json", "--db", db}), kGateNoBaseline);
  // Record a good run: last-good finds it, by run id too.
  EXPECT_EQ(ImportCommand({"--db", db, base}), 0);
  EXPECT_EQ(GateCommand({bad, "--db", db}), kGateRegression);
  EXPECT_EQ(GateCommand({"bad", "--db", db, "--baseline", "base"}), kGateRegression);

  // Bad input -> 2.
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/corrupt.json", "{\"formatVersion\": 1, \"runId\"").ok());
  EXPECT_EQ(GateCommand({dir_ + "/corrupt.json", "--baseline", base}), kGateBadInput);
  EXPECT_EQ(GateCommand({bad, "--baseline", base, "--max-drop", "lots"}), kGateBadInput);
  EXPECT_EQ(GateCommand({bad, "--bogus"}), kGateBadInput);
  EXPECT_EQ(GateCommand({}), kGateBadInput);
}

// What GateCommand printed.
struct GateOutput {
  int exit_code;
  std::string out, err;
};
GateOutput RunGate(const std::vector<std::string>& args) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int code = GateCommand(args);
  std::string out = ::testing::internal::GetCapturedStdout();
  std::string err = ::testing::internal::GetCapturedStderr();
  return {code, out, err};
}

std::string Day(int d) { return absl::StrFormat("2026-01-%02dT12:00:00Z", d); }

// (1) gate RUN3 --baseline RUN1 gives the same verdict, with the same
// numbers, before and after later runs and earlier slow runs are recorded.
// (The old rule took the spread from every run of the plan but RUN3: the
// later runs below made it pass.)
TEST_F(GateCommandTest, LaterRunsAndEarlierSlowRunsDoNotChangeTheVerdict) {
  std::string db = dir_ + "/h.db";
  auto record = [&](const std::string& id, int day, double base, double noise, int salt) {
    std::string p = Write(id + ".json", MkRun(id, {{"write", 4, Reps(base, noise, 5, salt)}},
                                               Day(day)));
    ASSERT_EQ(ImportCommand({"--db", db, p}), 0);
  };
  record("RUN0", 8, 1000, 0.1, 1);
  record("RUN0b", 9, 1005, 0.1, 9);
  record("RUN1", 10, 1000, 0.1, 0);
  record("RUN2", 11, 995, 0.1, 2);
  record("RUN3", 12, 880, 0.1, 3);  // -10.7%, one-sided p = 0.02
  const std::vector<std::string> plain = {"RUN3", "--baseline", "RUN1", "--db", db};
  std::vector<std::string> windowed = plain;
  windowed.insert(windowed.end(), {"--noise-window", "2"});
  GateOutput before = RunGate(plain);
  GateOutput before_windowed = RunGate(windowed);
  EXPECT_EQ(before.exit_code, kGateRegression) << before.out << before.err;
  EXPECT_TRUE(Has(before.out, "no --noise-window")) << before.out;
  EXPECT_EQ(before_windowed.exit_code, kGateRegression) << before_windowed.out;
  EXPECT_TRUE(Has(before_windowed.out, "recorded before RUN1: RUN0b, RUN0 (")) << before_windowed.out;

  record("RUN4", 13, 800, 0.1, 4);   // later, slow
  record("RUN5", 14, 1060, 0.1, 5);  // later, fast
  record("RUN6", 15, 880, 0.1, 6);
  record("SLOW1", 2, 600, 0.3, 7);   // earlier and slow
  record("SLOW2", 3, 1400, 0.3, 8);
  GateOutput after = RunGate(plain);
  EXPECT_EQ(after.exit_code, kGateRegression);
  EXPECT_EQ(after.out, before.out);
  // The window of 2 before RUN1 is still RUN0b, RUN0: the slow runs are older.
  GateOutput after_windowed = RunGate(windowed);
  EXPECT_EQ(after_windowed.exit_code, kGateRegression);
  EXPECT_EQ(after_windowed.out, before_windowed.out);
}

// last-good is the newest complete run of the plan that started at or
// before RUN: never a later one.
TEST_F(GateCommandTest, LastGoodNeverPicksARunRecordedAfterTheGatedRun) {
  std::string db = dir_ + "/h.db";
  std::string base = Write("base.json", MkRun("base", {{"write", 4, Reps(1000, 0.01, 5)}}, Day(10)));
  std::string bad = Write("bad.json", MkRun("bad", {{"write", 4, Reps(800, 0.01, 5)}}, Day(11)));
  std::string later = Write("later.json", MkRun("later", {{"write", 4, Reps(800, 0.01, 5, 3)}}, Day(12)));
  ASSERT_EQ(ImportCommand({"--db", db, base, bad, later}), 0);
  GateOutput g = RunGate({"bad", "--db", db});
  EXPECT_EQ(g.exit_code, kGateRegression) << g.out << g.err;
  EXPECT_TRUE(Has(g.out, "gate: run bad against baseline base")) << g.out;
  // The first run of the plan has none.
  GateOutput first = RunGate({"base", "--db", db});
  EXPECT_EQ(first.exit_code, kGateNoBaseline) << first.out;
  EXPECT_TRUE(Has(first.err, "recorded at or before run base")) << first.err;
}

// Another site's run of the plan (in a db mirrored from a results service,
// any site's shared run) is never the baseline of this site's run unless
// --site names it: a site could push a fast run with an earlier start time.
TEST_F(GateCommandTest, LastGoodIsARunOfTheGatedRunsSite) {
  std::string db = dir_ + "/h.db";
  std::string base = Write("base.json", MkRun("base", {{"write", 4, Reps(1000, 0.01, 5)}}, Day(10)));
  std::string bait = Write("bait.json", MkRun("bait", {{"write", 4, Reps(9000, 0.01, 5)}}, Day(11)));
  std::string run = Write("run.json", MkRun("run", {{"write", 4, Reps(1000, 0.01, 5, 3)}}, Day(12)));
  ASSERT_EQ(ImportCommand({"--db", db, "--site", "lab", base, run}), 0);
  ASSERT_EQ(ImportCommand({"--db", db, "--site", "other", bait}), 0);
  GateOutput g = RunGate({"run", "--db", db});
  EXPECT_EQ(g.exit_code, kGatePass) << g.out << g.err;
  EXPECT_TRUE(Has(g.out, "gate: run run against baseline base")) << g.out;
  GateOutput other = RunGate({"run", "--db", db, "--site", "other"});
  EXPECT_EQ(other.exit_code, kGateRegression) << other.out << other.err;
  EXPECT_TRUE(Has(other.out, "against baseline bait")) << other.out;
}

// (3) --noise-window N is exactly the N complete runs of the baseline's plan
// recorded before the baseline: not later runs, not other plans, not failed
// runs, never the gated run.
TEST_F(GateCommandTest, TheNoiseWindowIsTheNRunsBeforeTheBaseline) {
  std::string db = dir_ + "/h.db";
  auto record = [&](const std::string& id, int day, double bw, const std::string& status = "complete",
                    const std::string& plan = "") {
    SynthRun sr;
    sr.run_id = id;
    sr.started_at = Day(day);
    sr.status = status;
    if (!plan.empty()) {
      sr.name = plan;
      sr.plan_sha256 = "ffff0000ffff0000";
    }
    sr.results = {{"write", 4, Reps(bw, 0.01, 5)}};
    std::string p = Write(id + ".json", MakeRun(sr));
    ASSERT_EQ(ImportCommand({"--db", db, p}), 0);
  };
  record("w1", 1, 900);
  record("w2", 2, 1000);
  record("w3", 3, 1100);
  record("other", 4, 100, "complete", "other-plan");
  record("failed", 5, 10, "failed");
  record("w4", 6, 1000);
  record("B", 7, 1000);
  record("L1", 8, 1000);
  record("RUN", 9, 900);
  auto store = HistoryStore::Open(db);
  ASSERT_TRUE(store.ok()) << store.status();
  auto b = (*store)->Load("B");
  ASSERT_TRUE(b.ok());
  auto ids = [&](int n, const std::string& gated) {
    auto w = LoadNoiseWindow(**store, *b, n, gated, std::nullopt);
    EXPECT_TRUE(w.ok()) << w.status();
    return w.ok() ? w->run_ids : std::vector<std::string>{"error"};
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(ids(1, "RUN"), V({"w4"}));
  EXPECT_EQ(ids(3, "RUN"), V({"w4", "w3", "w2"}));
  EXPECT_EQ(ids(10, "RUN"), V({"w4", "w3", "w2", "w1"}));
  EXPECT_EQ(ids(3, "w3"), V({"w4", "w2", "w1"}));  // never the gated run
  auto w = LoadNoiseWindow(**store, *b, 3, "RUN", std::nullopt);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->means.at(kWriteKey).size(), 3u);
  EXPECT_NEAR(w->means.at(kWriteKey)[0], Mean(Reps(1000, 0.01, 5)), 1e-9);  // w4 first

  GateOutput g = RunGate({"RUN", "--baseline", "B", "--noise-window", "3", "--db", db});
  EXPECT_TRUE(Has(g.out, "--noise-window 3, the 3 complete runs of the plan recorded before B: "
                         "w4, w3, w2")) << g.out;
  EXPECT_TRUE(Has(g.out, "run-to-run spread 9.7% over 3 window runs")) << g.out;
  EXPECT_EQ(g.exit_code, kGateRegression) << g.out;  // -10%
}

// (4) A bad --noise-window value is bad input (exit 2) naming the flag and
// the value; so is a window without a history db.
TEST_F(GateCommandTest, BadNoiseWindowIsBadInput) {
  std::string base = Write("base.json", MkRun("base", {{"write", 4, Reps(1000, 0.01, 5)}}));
  std::string run = Write("run.json", MkRun("run", {{"write", 4, Reps(1000, 0.01, 5, 1)}}));
  for (const char* bad : {"0", "-1", "abc", "2.5"}) {
    GateOutput g = RunGate({run, "--baseline", base, "--noise-window", bad});
    EXPECT_EQ(g.exit_code, kGateBadInput) << bad;
    EXPECT_TRUE(Has(g.err, std::string("lockstep gate: --noise-window \"") + bad +
                               "\": expected a whole number of runs >= 1"))
        << g.err;
    EXPECT_TRUE(Has(g.err, "[--noise-window N]")) << g.err;  // the usage follows
  }
  GateOutput empty = RunGate({run, "--baseline", base, "--noise-window="});
  EXPECT_EQ(empty.exit_code, kGateBadInput);
  EXPECT_TRUE(Has(empty.err, "--noise-window \"\"")) << empty.err;
  GateOutput no_value = RunGate({run, "--baseline", base, "--noise-window"});
  EXPECT_EQ(no_value.exit_code, kGateBadInput);
  EXPECT_TRUE(Has(no_value.err, "--noise-window: needs a value")) << no_value.err;
  GateOutput no_db =
      RunGate({run, "--baseline", base, "--noise-window", "3", "--db", dir_ + "/none.db"});
  EXPECT_EQ(no_db.exit_code, kGateBadInput);
  EXPECT_TRUE(Has(no_db.err, "--noise-window needs the history db: no history db at " + dir_ +
                                 "/none.db"))
      << no_db.err;
}

TEST_F(GateCommandTest, OtherCommandsExitCodes) {
  std::string db = dir_ + "/h.db";
  std::string a = Write("a.json", MkRun("a", {{"write", 4, Reps(1000, 0.01, 5)}}));
  std::string b = Write("b.json", MkRun("b", {{"write", 4, Reps(900, 0.01, 5)}}, "2026-01-11T00:00:00Z"));
  EXPECT_EQ(HistoryCommand({"--db", db}), 1);  // no db yet
  EXPECT_EQ(ImportCommand({"--db", db, "--site", "lab", "--tag", "ci", a, b}), 0);
  EXPECT_EQ(HistoryCommand({"--db", db, "--tag", "ci", "--since", "2026-01-01"}), 0);
  EXPECT_EQ(HistoryCommand({"--db", db, "--since", "yesterday"}), 2);
  EXPECT_EQ(HistoryCommand({"--nope"}), 2);
  EXPECT_EQ(CompareCommand({"--db", db, "a", b}), 0);
  EXPECT_EQ(CompareCommand({"--db", db, "a", "b", a}), 0);
  EXPECT_EQ(CompareCommand({"--db", db, "a"}), 2);
  EXPECT_EQ(CompareCommand({"--db", db, "a", "zzz"}), 2);  // names no run: a bad command line
  EXPECT_EQ(ExportCommand({"--db", db, "a", dir_ + "/a-out.json"}), 0);
  EXPECT_EQ(*ReadFileToString(dir_ + "/a-out.json"), *ReadFileToString(a));
  EXPECT_EQ(ExportCommand({"--db", db, "b", "--openmetrics", dir_ + "/b.om", "--influx",
                           dir_ + "/b.lp", "--csv", dir_ + "/b.csv"}),
            0);
  EXPECT_TRUE(ReadFileToString(dir_ + "/b.om").ok());
  EXPECT_EQ(ImportCommand({"--db", db}), 2);
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/cut.json", "{\"formatVersion\": 1,").ok());
  EXPECT_EQ(ImportCommand({"--db", db, dir_ + "/cut.json"}), 2);
}

}  // namespace
}  // namespace lockstep
