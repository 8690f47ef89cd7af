#include "controller/results/report.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_split.h"
#include "common/files.h"
#include "controller/results/history.h"
#include "controller/results/report_figures.h"
#include "controller/cli/results_commands.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "unit/results_fixtures.h"

namespace lockstep {
namespace {

using testing::MakeRun;
using testing::Reps;
using testing::SynthRun;
using testing::TempDir;

bool Has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
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
  EXPECT_TRUE(Has(html, "<g class=\"series\" data-series=\"run-a write\">")) << html.substr(0, 4000);
  EXPECT_TRUE(Has(html, "<g class=\"series\" data-series=\"run-a read\">"));
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
  std::string html = RenderHtml({ScalingRun("run-a", 1.0), ScalingRun("run-b", 0.8)});
  EXPECT_TRUE(Has(html, "data-series=\"run-a write\""));
  EXPECT_TRUE(Has(html, "data-series=\"run-b write\""));
  EXPECT_TRUE(Has(html, "stroke-dasharray"));  // the second run is dashed
  EXPECT_TRUE(Has(html, "data-series=\"run-b test 3 (4 tasks)\""));  // latency overlay
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
  EXPECT_EQ(Count(html, "<g class=\"series\" data-series=\"run-b read\"><rect"), 2u);
  EXPECT_TRUE(Has(html, "run-a read, stripe_size=2m: median 67.31, min 66.88, max 73.21"));
  EXPECT_TRUE(Has(html, "<title>run-a write</title>"));
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
TEST(ReportHtml, LoadsInHeadlessChromium) {
  const char* chromium = "/usr/bin/chromium";
  struct stat st;
  if (::stat(chromium, &st) != 0) {
    GTEST_SKIP() << chromium << " is not installed (apt-get install chromium); the headless "
                 << "render check needs it";
  }
  std::string dir = TempDir("chromium");
  std::string page = dir + "/r.html";
  ASSERT_TRUE(WriteFileAtomically(page, RenderHtml({ScalingRun("run-a", 1.0),
                                                    ScalingRun("run-b", 0.9)}))
                  .ok());
  testing::CommandResult r = testing::RunCommand(
      {chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
       "--no-first-run", "--disable-background-networking", "--disable-component-update",
       "--disable-sync", "--enable-logging=stderr", "--v=0", "--user-data-dir=" + dir + "/profile",
       "--dump-dom", "file://" + page});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The DOM after load has the plots, the scaling curve among them, with
  // both runs' series; the console has no script error.
  EXPECT_TRUE(Has(r.out, "<svg")) << r.out.substr(0, 500);
  EXPECT_TRUE(Has(r.out, "data-plot=\"scaling\"")) << r.out.substr(0, 500);
  EXPECT_TRUE(Has(r.out, "data-series=\"run-a write\""));
  EXPECT_TRUE(Has(r.out, "data-series=\"run-b write\""));
  EXPECT_FALSE(Has(r.err, "Uncaught")) << r.err;
  EXPECT_FALSE(Has(r.err, "CONSOLE(")) << r.err;
  // A sweep over stripe sizes: the bar figure.
  ASSERT_TRUE(WriteFileAtomically(page, RenderHtml({StripeRun("run-a")})).ok());
  testing::CommandResult bars = testing::RunCommand(
      {chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
       "--no-first-run", "--disable-background-networking", "--disable-component-update",
       "--disable-sync", "--enable-logging=stderr", "--v=0", "--user-data-dir=" + dir + "/profile",
       "--dump-dom", "file://" + page});
  ASSERT_EQ(bars.exit_code, 0) << bars.err;
  EXPECT_TRUE(Has(bars.out, "data-plot=\"bars\"")) << bars.out.substr(0, 500);
  EXPECT_TRUE(Has(bars.out, "data-group=\"stripe_size=64k\""));
  EXPECT_FALSE(Has(bars.err, "CONSOLE(")) << bars.err;
}

}  // namespace
}  // namespace lockstep
