#include "controller/results/report.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_split.h"
#include "common/files.h"
#include "controller/results/history.h"
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
  // The scaling curve: one line per operation, five task counts each.
  EXPECT_TRUE(Has(html, "data-plot=\"scaling\""));
  EXPECT_TRUE(Has(html, "<g class=\"series\" data-series=\"write\">")) << html.substr(0, 4000);
  EXPECT_TRUE(Has(html, "<g class=\"series\" data-series=\"read\">"));
  EXPECT_TRUE(Has(html, "total tasks (log2)"));
  EXPECT_TRUE(Has(html, "data-plot=\"spread\""));
  EXPECT_TRUE(Has(html, "data-plot=\"timeseries\""));
  EXPECT_TRUE(Has(html, "data-series=\"10.0.0.2:7070\""));  // per agent
  EXPECT_TRUE(Has(html, "data-plot=\"latency\""));
  EXPECT_TRUE(Has(html, ">p99.9<"));
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
}

}  // namespace
}  // namespace lockstep
