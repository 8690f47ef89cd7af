#include "controller/results/report.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "common/files.h"
#include "common/sizes.h"
#include "controller/results/csv_cell.h"
#include "controller/results/history.h"
#include "controller/results/report_figures.h"
#include "controller/results/report_labels.h"
#include "controller/cli/results_commands.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "unit/results_fixtures.h"

namespace lockstep {
namespace {

using testing::TempDir;

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// The train results of a sweep over accelerators (`counts`, one test each;
// 2 repetitions of 2 epochs on 2 hosts, one accelerator per host in the
// tasks): samples/s 100 x count, AU falling 3 points per doubling.
v1::RunRecord TrainSweepRun(const std::string& id, const std::vector<uint32_t>& counts) {
  SynthRun s;
  s.run_id = id;
  s.name = "unet3d";
  for (uint32_t n : counts) s.results.push_back({"train", n, Reps(50.0 * n, 0.02, 2, n)});
  v1::RunRecord run = MakeRun(s);
  testing::SetAiFigures(&run, "train", {0.95, 0.95}, 0.9);
  for (auto& test : *run.mutable_tests()) {
    const uint32_t n = test.total_tasks();
    const double au = 0.99 - 0.03 * std::log2(static_cast<double>(n));
    for (auto& ph : *test.mutable_phases()) {
      v1::AiSummary* ai = ph.mutable_ai();
      ai->set_accelerators(n);
      ai->set_samples_per_s(100.0 * n * (ph.repetition() == 0 ? 1.0 : 1.04));
      ai->set_au_mean(au);
      ai->clear_epoch_au();
      ai->add_epoch_au(au);
      ai->add_epoch_au(au);
      for (int a = 0; a < ph.agents_size(); ++a) {
        v1::TrainResult* tr = ph.mutable_agents(a)->mutable_tasks(0)->mutable_train();
        for (int e = 0; e < 2; ++e) {
          v1::TrainEpoch* ep = tr->add_epochs();
          ep->set_epoch(static_cast<uint32_t>(e));
          ep->set_start_unix_ns(int64_t{1'000'000'000} * (10 + e));
          ep->set_stop_unix_ns(int64_t{1'000'000'000} * (11 + e));
          ep->set_wall_ns(1'000'000'000);
          ep->set_compute_ns(static_cast<int64_t>(1e9 * (au - 0.1 * a - 0.05 * e)));
        }
      }
    }
  }
  return run;
}

v1::RunRecord ScalingRun(const std::string& id, double factor) {
  SynthRun s;
  s.run_id = id;
  for (uint32_t tasks : {1u, 2u, 4u, 8u, 16u}) {
    s.results.push_back({"write", tasks, Reps(300 * tasks * factor, 0.03, 4, tasks)});
    s.results.push_back({"read", tasks, Reps(500 * tasks * factor, 0.03, 4, tasks)});
  }
  return MakeRun(s);
}

TEST(ReportHtml, SelfContainedWithSvgPlotsOfTheSeries) {
  std::string html = RenderHtml({ScalingRun("run-a", 1.0)});
  EXPECT_TRUE(Has(html, "<!DOCTYPE html>"));
  EXPECT_EQ(Count(html, "<svg"), Count(html, "</svg>"));
  EXPECT_GE(Count(html, "<svg"), 4u);
  // The plan's figure, throughput vs tasks: one line per run and operation,
  // five task counts each, evenly spaced and labelled with the counts.
  EXPECT_TRUE(Has(html, "data-plot=\"scaling\""));
  // One run: legends name the operation only.
  EXPECT_TRUE(Has(html, "<g class=\"series\" data-series=\"write\">")) << html.substr(0, 4000);
  EXPECT_TRUE(Has(html, "<g class=\"series\" data-series=\"read\">"));
  EXPECT_TRUE(Has(html, "seed: throughput vs tasks (median over repetitions, min..max)"));
  EXPECT_TRUE(Has(html, "tasks (all agents)"));
  EXPECT_TRUE(Has(html, "class=\"xtick\">16<"));
  EXPECT_EQ(Count(html, "class=\"whisker\""), 10u);  // min..max of each point
  EXPECT_TRUE(Has(html, "data-plot=\"spread\""));
  // Every repetition's series, per agent, labelled.
  EXPECT_TRUE(Has(html, "data-plot=\"timeseries\""));
  EXPECT_TRUE(Has(html, "data-series=\"rep 0 10.0.0.2:7070\""));
  EXPECT_TRUE(Has(html, "data-series=\"rep 3 10.0.0.1:7070\""));
  EXPECT_TRUE(Has(html, "data-plot=\"latency\""));
  EXPECT_TRUE(Has(html, ">p99.9<"));
  EXPECT_TRUE(Has(html, "merged over tasks, agents and repetitions"));
  EXPECT_TRUE(Has(html, "class=\"ytick\">1 ms<"));  // latency ticks with units
  // Facts and tables.
  EXPECT_TRUE(Has(html, "6.1.0-18-amd64"));
  EXPECT_TRUE(Has(html, "<th>mean MiB/s</th>"));
  // Self-contained: nothing fetched, no script.
  EXPECT_FALSE(Has(html, "<script"));
  EXPECT_FALSE(Has(html, "http://"));
  EXPECT_FALSE(Has(html, "https://"));
  EXPECT_FALSE(Has(html, "<link"));
  EXPECT_FALSE(Has(html, "nan"));
  EXPECT_FALSE(Has(html, "inf\""));
}

TEST(ReportHtml, SeveralRunsAreOverlaid) {
  // Runs alike in everything but their results are "run 1", "run 2", the
  // legend at the top saying which run id each is.
  std::string html = RenderHtml({ScalingRun("run-a", 1.0), ScalingRun("run-b", 0.8)});
  EXPECT_TRUE(Has(html, "data-series=\"run 1 write\""));
  EXPECT_TRUE(Has(html, "data-series=\"run 2 write\""));
  EXPECT_FALSE(Has(html, "data-series=\"run-a write\""));
  EXPECT_TRUE(Has(html, "<li><b>run 2</b> run-b (complete, "));
  EXPECT_TRUE(Has(html, "stroke-dasharray"));  // the second run is dashed
  EXPECT_TRUE(Has(html, "data-series=\"run 2 test 3 (4 tasks)\""));  // latency overlay
}

TEST(ReportHtml, EscapesNamesAndSurvivesEmptyRuns) {
  SynthRun s;
  s.run_id = "<b>&\"x\"";
  v1::RunRecord run = MakeRun(s);
  std::string html = RenderHtml({run});
  EXPECT_FALSE(Has(html, "<b>&"));
  EXPECT_TRUE(Has(html, "&lt;b&gt;&amp;&quot;x&quot;"));
  EXPECT_TRUE(Has(html, "no data"));
  EXPECT_TRUE(Has(html, "No throughput series recorded."));
}

// Seeds 003/004: a sweep over another key than tasks: one bar per sweep
// point per run and operation, at the median, whiskers min..max.
v1::RunRecord StripeRun(const std::string& id) {
  SynthRun s;
  s.run_id = id;
  s.name = "stripe-size";
  s.results = {{"write", 4, {101.83, 101.85, 101.77}}, {"read", 4, {73.21, 66.88, 67.31}}};
  v1::RunRecord r = MakeRun(s);
  v1::TestRecord small = r.tests(0);
  small.set_test_id(1);
  for (auto& row : *small.mutable_summary()) {
    for (double& v : *row.mutable_bw_mib_per_rep()) v /= 7;
  }
  auto label = [](v1::TestRecord* t, const char* value) {
    auto* v = t->add_sweep();
    v->set_key("stripe_size");
    v->set_value(value);
  };
  label(r.mutable_tests(0), "2m");
  label(&small, "64k");
  *r.add_tests() = small;
  return r;
}

TEST(ReportHtml, BarsPerSweepPoint) {
  std::string html = RenderHtml({StripeRun("run-a"), StripeRun("run-b")});
  EXPECT_TRUE(Has(html, "data-plot=\"bars\""));
  EXPECT_FALSE(Has(html, "data-plot=\"scaling\""));
  EXPECT_TRUE(Has(html, "stripe-size: throughput per configuration"));
  EXPECT_EQ(Count(html, "<g class=\"group\" data-group=\"stripe_size=2m\">"), 1u);
  EXPECT_EQ(Count(html, "<g class=\"group\" data-group=\"stripe_size=64k\">"), 1u);
  // Two runs x two operations in each group, legend names run and operation.
  EXPECT_EQ(Count(html, "<g class=\"series\" data-series=\"run 2 read\"><rect"), 2u);
  EXPECT_TRUE(Has(html, "run 1 read, stripe_size=2m: median 67.31, min 66.88, max 73.21"));
  EXPECT_TRUE(Has(html, "<title>run 1 write</title>"));
  // Seed 004's "median of several runs": per result over both runs.
  EXPECT_TRUE(Has(html, "<h3>stripe-size: median of 2 runs (every repetition of each)</h3>"));
  EXPECT_TRUE(Has(html, "[stripe_size=2m]</td><td class=\"n\">2</td><td class=\"n\">6</td>"
                        "<td class=\"n\">67.31</td><td class=\"n\">66.88</td>"))
      << html;
  EXPECT_FALSE(Has(RenderHtml({StripeRun("run-a")}), "median of 1 runs"));
  // The sweep point in the results table and the CSV.
  EXPECT_TRUE(Has(html, "<td>stripe_size=64k</td>"));
  EXPECT_TRUE(Has(RenderCsv({StripeRun("run-a")}), ",stripe_size=64k\n"));
}

// The page leads with the answer: the plan's figure, then one table with
// each result's median, spread, change against the first run and its
// significance; agents and every repetition come after, folded.
TEST(ReportHtml, LeadsWithTheFigureAndTheComparison) {
  std::string html = RenderHtml({ScalingRun("run-a", 1.0), ScalingRun("run-b", 0.8)});
  const size_t figure = html.find("<svg class=\"plot\" data-plot=\"scaling\"");
  const size_t table = html.find("<table class=\"answer\">");
  const size_t details = html.find("<details>");
  ASSERT_NE(figure, std::string::npos);
  ASSERT_NE(table, std::string::npos);
  ASSERT_NE(details, std::string::npos);
  EXPECT_LT(figure, table);
  EXPECT_LT(table, details);
  EXPECT_EQ(html.find("<svg"), figure);  // no other plot before it
  EXPECT_LT(html.find("<details><summary>Agents (4)</summary>"), html.find("6.1.0-18-amd64"));
  EXPECT_LT(details, html.find("<th>mean MiB/s</th>"));
  // The answer table: a row per result, the second run 20% lower, significant.
  EXPECT_TRUE(Has(html, "<th>run 2: median MiB/s</th><th>spread</th><th>change</th>"
                        "<th>significance</th>"));
  const size_t row = html.find("<tr><td>write, test 5 (16 tasks)</td>");
  ASSERT_NE(row, std::string::npos) << html.substr(table, 3000);
  const std::string line = html.substr(row, html.find("</tr>", row) - row);
  EXPECT_TRUE(Has(line, ">-20.0%<")) << line;
  EXPECT_TRUE(Has(line, "class=\"n sig\">p")) << line;
  EXPECT_TRUE(Has(line, "4 reps)")) << line;
  // Two runs of one plan: the median over both, every repetition of each.
  EXPECT_TRUE(Has(html, "<th>all 2 runs: median</th><th>min–max</th></tr>"));
  EXPECT_FALSE(Has(html, "nan"));
}

// Smoke runs say what they changed; phases shorter than three sampling
// intervals get no time series (a single sample is no rate over time).
TEST(ReportHtml, SaysWhatRanAndDrawsNoSeriesForShortPhases) {
  v1::RunRecord run = ScalingRun("run-a", 1.0);
  run.set_smoke(true);
  run.add_smoke_changes("phase write: block_size 8GiB -> 16MiB");
  run.add_smoke_changes("phase write: striping (stripe_count/stripe_size) left out (the "
                        "directories are not on Lustre)");
  std::string html = RenderHtml({run});
  EXPECT_TRUE(Has(html, "<summary>Smoke runs (lockstep run --smoke): not the plan as written; 2 "
                        "changes, each below</summary>"));
  EXPECT_TRUE(Has(html, "<li>phase write: block_size 8GiB -&gt; 16MiB</li>"));
  EXPECT_TRUE(Has(html, "<p class=\"note\">Not applied: phase write: striping"));
  EXPECT_FALSE(Has(html, "Not applied: phase write: block_size"));
  EXPECT_TRUE(Has(html, "data-plot=\"timeseries\""));
  for (auto& t : *run.mutable_tests()) {
    for (auto& ph : *t.mutable_phases()) {
      for (auto& a : *ph.mutable_agents()) a.mutable_series_bytes()->Truncate(2);
    }
  }
  html = RenderHtml({run});
  EXPECT_FALSE(Has(html, "data-plot=\"timeseries\""));
  EXPECT_TRUE(Has(html, "10 phases ran for fewer than 3 sampling intervals"));
}

// Runs are named by what differs between them, not by their ids.
TEST(ReportLabels, RunsAreNamedByWhatDiffers) {
  SynthRun a;
  a.run_id = "20260110-120000-seed-1234";
  SynthRun b = a;
  b.run_id = "20260110-130000-seed-5678";
  b.kernel = "6.12.9";
  using Names = std::vector<std::string>;
  EXPECT_EQ(RunNames({MakeRun(a)}), Names{""});
  EXPECT_EQ(RunNames({MakeRun(a), MakeRun(a)}), (Names{"run 1", "run 2"}));
  EXPECT_EQ(RunNames({MakeRun(a), MakeRun(b)}), (Names{"6.1.0-18-amd64", "6.12.9"}));
  EXPECT_EQ(RunNames({MakeRun(a), MakeRun(a)}, {{"lab", {"before"}}, {"lab", {"after"}}}),
            (Names{"before", "after"}));
  EXPECT_EQ(RunNames({MakeRun(a), MakeRun(b)}, {{"lab", {}}, {"cloud", {}}}),
            (Names{"lab 6.1.0-18-amd64", "cloud 6.12.9"}));
}

// Tests are named by what ran: a smoke run off Lustre drops striping (no
// phase spec sets a layout), a capped block_size is the size sent.
TEST(ReportLabels, TestsAreNamedByWhatRan) {
  v1::RunRecord run;
  for (uint32_t id : {0u, 1u}) {
    v1::TestRecord* t = run.add_tests();
    t->set_test_id(id);
    t->set_total_tasks(4);
    t->set_client_agents(4);
    auto sweep = [&](const char* key, const char* value) {
      v1::SweepValue* v = t->add_sweep();
      v->set_key(key);
      v->set_value(value);
    };
    t->set_tasks_per_agent(1);
    sweep("client_agents", "8");  // capped by the smoke run's local agents
    sweep("tasks_per_agent", "16");  // capped at 8 by a smoke run, 1 here
    sweep("stripe_size", id == 0 ? "64k" : "2m");
    sweep("block_size", "8g");
    v1::PhaseSpec* spec = t->add_plan_specs();
    spec->set_phase_name("write");
    spec->set_block_bytes(16 << 20);
  }
  const std::string block = "block_size=" + HumanBytes(16 << 20);
  EXPECT_EQ(RanLabel(run.tests(0)), "client_agents=4 tasks_per_agent=1 " + block);
  EXPECT_EQ(TestName(run, run.tests(1)),
            "client_agents=4 tasks_per_agent=1 " + block + ", test 1 (4 tasks)");
  run.mutable_tests(0)->mutable_plan_specs(0)->set_set_stripe(true);
  EXPECT_EQ(RanLabel(run.tests(0)), "client_agents=4 tasks_per_agent=1 stripe_size=64k " + block);
  EXPECT_EQ(TestName(run, run.tests(0)), "client_agents=4 tasks_per_agent=1 stripe_size=64k " + block);
}

// Percentiles of the merged histograms, not the mean of per-repetition
// percentiles: repetition 0 has 900 transfers of 1 ms, repetition 1 100 of
// 100 ms. Merged, p50 is 1 ms and p99 100 ms; averaged per repetition, p50
// would be 50.5 ms.
TEST(ReportHtml, LatencyFromMergedHistograms) {
  v1::TestRecord t;
  for (uint32_t rep = 0; rep < 2; ++rep) {
    auto* ph = t.add_phases();
    ph->set_phase("w");
    ph->set_repetition(rep);
    ph->set_ok(true);
    for (int a = 0; a < 2; ++a) {  // two agents, their halves
      LatencyHistogram h;
      for (int k = 0; k < (rep == 0 ? 450 : 50); ++k) h.Record(rep == 0 ? 1'000'000 : 100'000'000);
      h.ToProto(ph->add_agents()->add_tasks()->mutable_latency());
    }
  }
  auto* superseded = t.add_phases();  // a repeated attempt does not count
  superseded->set_phase("w");
  superseded->set_error_kind(v1::SUPERSEDED);
  LatencyHistogram slow;
  for (int k = 0; k < 5000; ++k) slow.Record(900'000'000);
  slow.ToProto(superseded->add_agents()->add_tasks()->mutable_latency());
  LatencyHistogram m = MergedLatency(t, "w");
  EXPECT_EQ(m.count(), 1000u);
  EXPECT_NEAR(static_cast<double>(m.Quantile(0.5)), 1e6, 1e6 * 0.01);
  EXPECT_NEAR(static_cast<double>(m.Quantile(0.99)), 1e8, 1e8 * 0.01);
  EXPECT_EQ(m.max(), 100'000'000u);
  EXPECT_EQ(MergedLatency(t, "other").count(), 0u);
}

TEST(ReportCsv, OneRowPerResult) {
  std::string csv = RenderCsv({ScalingRun("run-a", 1.0), ScalingRun("run-b", 1.0)});
  std::vector<std::string> lines = absl::StrSplit(csv, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 1u + 20u);
  EXPECT_EQ(lines[0].substr(0, 30), "run_id,name,plan_sha256,starte");
  size_t cols = Count(lines[0], ",");
  for (const auto& l : lines) EXPECT_EQ(Count(l, ","), cols) << l;
  EXPECT_TRUE(Has(lines[1], "run-a,seed,")) << lines[1];
}

// A plan's name is a site's text: in a CSV it must stay text. Before one
// CSV cell function, `lockstep report --csv` and the service's /runs/ID.csv
// wrote =HYPERLINK(...) as it came, a formula to a spreadsheet.
TEST(ReportCsv, AFormulaInAPlanNameIsText) {
  v1::RunRecord run = ScalingRun("run-a", 1.0);
  run.set_name("=HYPERLINK(\"http://evil.example/x\",\"click\")");
  std::vector<std::string> lines = absl::StrSplit(RenderCsv({run}), '\n', absl::SkipEmpty());
  ASSERT_GE(lines.size(), 2u);
  EXPECT_TRUE(absl::StartsWith(
      lines[1], "run-a,\"'=HYPERLINK(\"\"http://evil.example/x\"\",\"\"click\"\")\","))
      << lines[1];
}

TEST(CsvCell, QuotesAndGuardsFormulas) {
  EXPECT_EQ(CsvCell("nightly"), "nightly");
  EXPECT_EQ(CsvCell(""), "");
  EXPECT_EQ(CsvCell("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvCell("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvCell("two\nlines"), "\"two\nlines\"");
  for (const char* formula : {"=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"}) {
    const std::string cell = CsvCell(formula);
    EXPECT_TRUE(absl::StartsWith(cell, "'") || absl::StartsWith(cell, "\"'")) << cell;
  }
  EXPECT_EQ(CsvCell("=cmd|' /C calc'!A0"), "'=cmd|' /C calc'!A0");
  EXPECT_EQ(CsvCell("a=b"), "a=b");  // only a first character makes a formula
}

TEST(ReportExport, OpenMetricsAndInflux) {
  std::string om = RenderOpenMetrics({ScalingRun("run-a", 1.0)});
  EXPECT_TRUE(absl::EndsWith(om, "# EOF\n"));
  EXPECT_EQ(Count(om, "# TYPE lockstep_result_bandwidth_bytes_per_second gauge"), 1u);
  EXPECT_EQ(Count(om, "lockstep_result_bandwidth_bytes_per_second{"), 40u);  // 10 results x 4 stats
  EXPECT_TRUE(Has(om, "operation=\"write\",api=\"POSIX\",tasks=\"16\""));
  EXPECT_TRUE(Has(om, "} 1768046400.000000000\n") || Has(om, " 1768046400.000000000\n")) << om.substr(0, 600);

  std::string lp = RenderInfluxLines({ScalingRun("run-a", 1.0)});
  std::vector<std::string> lines = absl::StrSplit(lp, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 10u);
  EXPECT_TRUE(absl::StartsWith(lines[0], "lockstep_result,api=POSIX,block_bytes=16777216,"))
      << lines[0];
  EXPECT_TRUE(Has(lines[0], " bw_mean_mib=")) << lines[0];
  EXPECT_TRUE(Has(lines[0], ",repetitions=4i 1768046400000000000")) << lines[0];

  SynthRun s;
  s.run_id = "a b,c=d";
  s.results = {{"write", 1, {1.5}}};
  std::string esc = RenderInfluxLines({MakeRun(s)});
  EXPECT_TRUE(Has(esc, "run_id=a\\ b\\,c\\=d")) << esc;
}

// `lockstep report` names runs by the site and tags the history db
// recorded with them, when those differ.
TEST(ReportCommand, LegendsNameRunsBySiteAndTag) {
  std::string dir = TempDir("report-tags");
  std::string db = dir + "/h.db";
  ASSERT_TRUE(WriteFileAtomically(dir + "/a.json", RunToJson(ScalingRun("run-a", 1.0))).ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/b.json", RunToJson(ScalingRun("run-b", 0.9))).ok());
  ASSERT_EQ(ImportCommand({"--db", db, "--site", "lab", "--tag", "before", dir + "/a.json"}), 0);
  ASSERT_EQ(ImportCommand({"--db", db, "--site", "lab", "--tag", "after", dir + "/b.json"}), 0);
  ASSERT_EQ(ReportCommand({"--db", db, "run-a", "run-b", "--html", dir + "/r.html"}), 0);
  absl::StatusOr<std::string> html = ReadFileToString(dir + "/r.html");
  ASSERT_TRUE(html.ok()) << html.status();
  EXPECT_TRUE(Has(*html, "data-series=\"before write\"")) << html->substr(0, 3000);
  EXPECT_TRUE(Has(*html, "data-series=\"after write\""));
  EXPECT_TRUE(Has(*html, "<li><b>after</b> run-b (complete, "));
}

TEST(ReportCommand, WritesEveryOutputAtomically) {
  std::string dir = TempDir("report");
  std::string a = dir + "/a.json";
  ASSERT_TRUE(WriteFileAtomically(a, RunToJson(ScalingRun("run-a", 1.0))).ok());
  std::string db = dir + "/h.db";
  ASSERT_EQ(ImportCommand({"--db", db, a}), 0);
  ASSERT_TRUE(WriteFileAtomically(dir + "/b.json", RunToJson(ScalingRun("run-b", 0.9))).ok());
  EXPECT_EQ(ReportCommand({"--db", db, "run-a", dir + "/b.json", "--html", dir + "/r.html",
                           "--csv", dir + "/r.csv", "--openmetrics", dir + "/r.om", "--influx",
                           dir + "/r.lp", "--title", "nightly"}),
            0);
  for (const char* f : {"/r.html", "/r.csv", "/r.om", "/r.lp"}) {
    auto text = ReadFileToString(dir + f);
    ASSERT_TRUE(text.ok()) << f;
    EXPECT_FALSE(text->empty()) << f;
  }
  EXPECT_TRUE(Has(*ReadFileToString(dir + "/r.html"), "<title>nightly</title>"));
  EXPECT_EQ(ReportCommand({a}), 0);                           // no output: the summary
  EXPECT_EQ(ReportCommand({"--html"}), 2);                    // flag without value
  EXPECT_EQ(ReportCommand({"--html", dir + "/x.html"}), 2);   // no run
  EXPECT_EQ(ReportCommand({a, "--html", "/proc/nope/r.html"}), 1);
}

// The page in a real browser: headless Chromium (deploy/test.sh installs it;
// skipped with the reason when it is missing). No shell: argument vector.
constexpr char kChromium[] = "/usr/bin/chromium";
constexpr char kNoChromium[] =
    "/usr/bin/chromium is not installed (apt-get install chromium); the headless checks need it";

bool HaveChromium() {
  struct stat st;
  return ::stat(kChromium, &st) == 0;
}

testing::CommandResult DumpDom(const std::string& dir, const std::string& page) {
  return testing::RunCommand(
      {kChromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
       "--no-first-run", "--disable-background-networking", "--disable-component-update",
       "--disable-sync", "--enable-logging=stderr", "--v=0", "--user-data-dir=" + dir + "/profile",
       "--window-size=1300,900", "--dump-dom", "file://" + page});
}

// How the page lays out in a 1300 x 900 window: a copy of it with a script
// that writes the measurement into the DOM (the report itself has none).
struct Layout {
  int scroll_width = -1;    // document.documentElement.scrollWidth
  int first_plot_top = -1;  // the first plot's top edge, px from the page's top
  std::string first_plot;   // its data-plot
};
Layout Measure(const std::string& dir, const std::string& html) {
  const std::string script =
      "<script>addEventListener('load',function(){var s=document.querySelector('svg.plot');"
      "var m=document.createElement('pre');m.id='layout';m.textContent='layout width='+"
      "document.documentElement.scrollWidth+' top='+(s?Math.round(s.getBoundingClientRect().top"
      "+window.scrollY):-1)+' plot='+(s?s.getAttribute('data-plot'):'')+' end';"
      "document.body.appendChild(m);});</script>";
  std::string page = html;
  page.insert(page.rfind("</body>"), script);
  const std::string path = dir + "/measure.html";
  EXPECT_TRUE(WriteFileAtomically(path, page).ok());
  testing::CommandResult r = DumpDom(dir, path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Layout l;
  const size_t at = r.out.find(">layout width=");
  if (at == std::string::npos) {
    ADD_FAILURE() << "no measurement in the DOM: " << r.out.substr(0, 500);
    return l;
  }
  char plot[64] = {0};
  if (std::sscanf(r.out.c_str() + at, ">layout width=%d top=%d plot=%63s", &l.scroll_width,
                  &l.first_plot_top, plot) != 3) {
    ADD_FAILURE() << r.out.substr(at, 100);
  }
  l.first_plot = plot;
  return l;
}

TEST(ReportHtml, LoadsInHeadlessChromium) {
  if (!HaveChromium()) GTEST_SKIP() << kNoChromium;
  std::string dir = TempDir("chromium");
  std::string page = dir + "/r.html";
  ASSERT_TRUE(WriteFileAtomically(page, RenderHtml({ScalingRun("run-a", 1.0),
                                                    ScalingRun("run-b", 0.9)}))
                  .ok());
  testing::CommandResult r = DumpDom(dir, page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The DOM after load has the plots, the scaling curve among them, with
  // both runs' series; the console has no script error.
  EXPECT_TRUE(Has(r.out, "<svg")) << r.out.substr(0, 500);
  EXPECT_TRUE(Has(r.out, "data-plot=\"scaling\"")) << r.out.substr(0, 500);
  EXPECT_TRUE(Has(r.out, "data-series=\"run 1 write\""));
  EXPECT_TRUE(Has(r.out, "data-series=\"run 2 write\""));
  EXPECT_FALSE(Has(r.err, "Uncaught")) << r.err;
  EXPECT_FALSE(Has(r.err, "CONSOLE(")) << r.err;
  // A sweep over stripe sizes: the bar figure.
  ASSERT_TRUE(WriteFileAtomically(page, RenderHtml({StripeRun("run-a")})).ok());
  testing::CommandResult bars = DumpDom(dir, page);
  ASSERT_EQ(bars.exit_code, 0) << bars.err;
  EXPECT_TRUE(Has(bars.out, "data-plot=\"bars\"")) << bars.out.substr(0, 500);
  EXPECT_TRUE(Has(bars.out, "data-group=\"stripe_size=64k\""));
  EXPECT_FALSE(Has(bars.err, "CONSOLE(")) << bars.err;
}

// At 1300 px the page has no horizontal scrollbar (its wide tables scroll in
// their own box, its plots scale down) and the plan's figure is the first
// thing below the title, inside the first screen. The pages: two runs of a
// scaling plan, and three runs of a sweep with long run ids and plan name.
TEST(ReportHtml, FitsTheWindowAndShowsTheFigureFirst) {
  if (!HaveChromium()) GTEST_SKIP() << kNoChromium;
  std::string dir = TempDir("chromium-layout");
  const std::string id = "20261202-191519-seed-004-stripe-size-with-a-long-name-6b79";
  v1::RunRecord a = StripeRun(id + "-a"), b = StripeRun(id + "-b"), c = StripeRun(id + "-c");
  for (v1::RunRecord* r : {&a, &b, &c}) r->set_name("seed-004-stripe-size-on-a-site-with-a-long-name");
  struct Page {
    const char* what;
    std::vector<v1::RunRecord> runs;
    const char* plot;
  };
  for (const Page& p : {Page{"scaling, 2 runs", {ScalingRun("run-a", 1.0), ScalingRun("run-b", 0.9)},
                             "scaling"},
                        Page{"sweep, 3 runs", {a, b, c}, "bars"}}) {
    const Layout l = Measure(dir, RenderHtml(p.runs));
    EXPECT_GT(l.scroll_width, 0) << p.what;
    EXPECT_LE(l.scroll_width, 1300) << p.what;
    EXPECT_EQ(l.first_plot, p.plot) << p.what;
    EXPECT_GE(l.first_plot_top, 0) << p.what;
    EXPECT_LT(l.first_plot_top, 450) << p.what << ": the figure starts below the first half screen";
  }
}

TEST(ReportHtml, TrainingSamplesAndAuAgainstAcceleratorsAndAuPerHostOverTime) {
  const std::string html = RenderHtml({TrainSweepRun("sweep", {2, 4, 8})});
  EXPECT_EQ(Count(html, "data-plot=\"ai-samples\""), 1u);
  EXPECT_EQ(Count(html, "data-plot=\"ai-au\""), 1u);
  EXPECT_TRUE(Has(html, "data-series=\"unet3d: train\"")) << html.substr(0, 2000);
  EXPECT_TRUE(Has(html, "data-series=\"unet3d: train AU\""));
  EXPECT_TRUE(Has(html, "data-series=\"unet3d: train threshold\""));
  // Both before the tables: the answer first.
  EXPECT_LT(html.find("data-plot=\"ai-samples\""), html.find("<h2>Details</h2>"));
  // A line per host and repetition for each of the 3 tests (2 epochs each).
  EXPECT_EQ(Count(html, "data-plot=\"ai-au-time\""), 3u);
  EXPECT_TRUE(Has(html, "data-series=\"rep 0 10.0.0.1:7070\""));
  EXPECT_TRUE(Has(html, "data-series=\"rep 1 10.0.0.2:7070\""));
  EXPECT_TRUE(Has(html, "AU per host over time (3 train phases)"));

  // One accelerator count: no scaling figure; one epoch: no line, said so.
  v1::RunRecord one = TrainSweepRun("one", {4});
  for (auto& ph : *one.mutable_tests(0)->mutable_phases()) ph.mutable_ai()->mutable_epoch_au()->RemoveLast();
  const std::string single = RenderHtml({one});
  EXPECT_FALSE(Has(single, "data-plot=\"ai-samples\""));
  EXPECT_FALSE(Has(single, "data-plot=\"ai-au-time\""));
  EXPECT_TRUE(Has(single, "1 train phases ran one epoch")) << single;
  // find-max: one run per count, of one plan: one line across the runs.
  const std::string steps =
      RenderHtml({TrainSweepRun("s1", {1}), TrainSweepRun("s2", {2}), TrainSweepRun("s4", {4})});
  EXPECT_EQ(Count(steps, "data-plot=\"ai-samples\""), 1u);
  // No train phase: nothing of it.
  EXPECT_FALSE(Has(RenderHtml({ScalingRun("run-a", 1.0)}), "AU per host"));
}

TEST(ReportHtml, TrainingFiguresInHeadlessChromium) {
  if (!HaveChromium()) GTEST_SKIP() << kNoChromium;
  std::string dir = TempDir("chromium-ai");
  const std::string html = RenderHtml({TrainSweepRun("sweep-a", {2, 4, 8}),
                                       TrainSweepRun("sweep-b", {2, 4, 8})});
  std::string page = dir + "/r.html";
  ASSERT_TRUE(WriteFileAtomically(page, html).ok());
  testing::CommandResult r = DumpDom(dir, page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "data-plot=\"ai-samples\"")) << r.out.substr(0, 500);
  EXPECT_TRUE(Has(r.out, "data-plot=\"ai-au-time\""));
  EXPECT_FALSE(Has(r.err, "CONSOLE(")) << r.err;
  const Layout l = Measure(dir, html);
  EXPECT_GT(l.scroll_width, 0);
  EXPECT_LE(l.scroll_width, 1300);
  EXPECT_GE(l.first_plot_top, 0);
  EXPECT_LT(l.first_plot_top, 450) << "the first figure starts below the first half screen";
}

}  // namespace
}  // namespace lockstep
