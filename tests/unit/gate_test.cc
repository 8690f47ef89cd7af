#include "controller/gate.h"

#include "common/files.h"
#include "controller/history.h"
#include "controller/results_commands.h"
#include "gtest/gtest.h"
#include "unit/results_fixtures.h"

namespace lockstep {
namespace {

using testing::MakeRun;
using testing::Reps;
using testing::SynthRun;
using testing::TempDir;

bool Has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

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
  EXPECT_EQ(r.ExitCode(), kGateRegression);
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
  EXPECT_EQ(r.ExitCode(), kGatePass) << r.Text();
  EXPECT_TRUE(Has(r.cases[0].message, "not significant")) << r.cases[0].message;
}

TEST(GateEvaluate, SmallSignificantDropUnderThresholdPasses) {
  auto base = MkRun("base", {{"write", 4, Reps(1000, 0.001, 5)}});
  auto run = MkRun("new", {{"write", 4, Reps(970, 0.001, 5)}});
  GateReport r = EvaluateGate(base, run, {});
  EXPECT_EQ(r.ExitCode(), kGatePass);
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
  EXPECT_EQ(EvaluateGate(base, run, o).ExitCode(), kGatePass);
}

TEST(GateEvaluate, DropWithinRunToRunSpreadPasses) {
  auto base = MkRun("base", {{"write", 4, {1000}}});
  auto run = MkRun("new", {{"write", 4, {880}}});
  GateOptions o;
  o.history["write/write tasks=4 tpn=2 xfer=1 MiB block=16 MiB seg=1 fpp"] = {1000, 850, 1020, 900};
  GateReport r = EvaluateGate(base, run, o);
  EXPECT_EQ(r.ExitCode(), kGatePass) << r.Text();
  EXPECT_TRUE(Has(r.cases[0].message, "run-to-run spread")) << r.cases[0].message;
}

TEST(GateEvaluate, MissingResultFailsAndNewResultIsSkipped) {
  auto base = MkRun("base", {{"write", 4, Reps(1000, 0.01, 3)}, {"read", 4, Reps(1000, 0.01, 3)}});
  auto run = MkRun("new", {{"write", 4, Reps(1000, 0.01, 3)}, {"write", 8, Reps(1000, 0.01, 3)}});
  GateReport r = EvaluateGate(base, run, {});
  EXPECT_EQ(r.ExitCode(), kGateRegression);
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
  EXPECT_EQ(r.ExitCode(), kGateRegression);
  GateReport empty = EvaluateGate(MkRun("b", {}), run, {});
  EXPECT_EQ(empty.ExitCode(), kGateNoBaseline);
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
  EXPECT_EQ(CompareCommand({"--db", db, "a", "zzz"}), 1);
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
