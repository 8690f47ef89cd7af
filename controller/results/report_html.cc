// RenderHtml (report.h): the answer first, the details folded below it.
//
//   1. the title, which run is which (report_labels.h RunNames), errors, and
//      what the runs changed in their plans (smoke caps, dropped settings);
//   2. the plans' figures (report_figures.h PlanFigures);
//   3. one table of results: per result and run the median, the spread over
//      the repetitions, and against the first run the change and its
//      significance (compare.h);
//   4. <details>: runs, agents, every result and repetition, the spread
//      plot, throughput over time, latency percentiles.
//
// Wide tables scroll inside their own box and plots scale down, so that the
// page is never wider than the window (tests/unit/report_test.cc checks it
// at 1300 px in headless Chromium).
#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/match.h"
#include "common/clock.h"
#include "common/sizes.h"
#include "controller/plan/sweep.h"
#include "controller/results/compare.h"
#include "controller/results/report.h"
#include "controller/results/report_ai.h"
#include "controller/results/report_figures.h"
#include "controller/results/report_labels.h"
#include "controller/results/svg_plot.h"

namespace lockstep {
namespace {

constexpr char kCss[] = R"css(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.2em 1.5em;color:#222;max-width:1250px}
h1{font-size:1.4em;margin:.2em 0 .3em}h2{font-size:1.2em;margin-top:1.4em;border-bottom:1px solid #ccc}
h3{font-size:1.05em}
p{margin:.3em 0}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.sig{font-weight:600}
th{background:#f2f2f2}
.wide{max-width:100%;overflow-x:auto}
.err{color:#b00}.note{color:#555;font-size:.9em}
ul.runs{margin:.2em 0;padding-left:1.2em}
details{margin:.4em 0}summary{cursor:pointer;font-weight:600;padding:.2em 0}
svg.plot{display:block;margin:.6em 0;background:#fff;max-width:100%;height:auto}
svg .frame{fill:none;stroke:#999}svg .grid{stroke:#e5e5e5}
svg text{font-size:11px;fill:#333}svg .ptitle{font-size:13px;font-weight:600}
svg .ytick{text-anchor:end}svg .xtick{text-anchor:middle}svg .xlabel{text-anchor:middle}
svg .ylabel{text-anchor:middle}svg .cat{text-anchor:end;font-size:10px}
svg .nodata{text-anchor:middle;fill:#999}svg .legend{font-size:11px}
svg .whisker{stroke-width:1.5;fill:none}svg .gcat{text-anchor:middle;font-size:10px}
svg .psub{font-size:11px;fill:#555}
)css";

void Row(std::string* o, const std::vector<std::string>& cells, const std::vector<bool>& numeric = {}) {
  absl::StrAppend(o, "<tr>");
  for (size_t i = 0; i < cells.size(); ++i) {
    bool n = i < numeric.size() && numeric[i];
    absl::StrAppend(o, n ? "<td class=\"n\">" : "<td>", HtmlEscape(cells[i]), "</td>");
  }
  absl::StrAppend(o, "</tr>\n");
}

void Header(std::string* o, const std::vector<std::string>& cells) {
  absl::StrAppend(o, "<tr>");
  for (const auto& c : cells) absl::StrAppend(o, "<th>", HtmlEscape(c), "</th>");
  absl::StrAppend(o, "</tr>\n");
}

std::string F2(double v) { return absl::StrFormat("%.2f", v); }


// ---- 1. which run is which -------------------------------------------------------

void AppendRunLegend(const std::vector<v1::RunRecord>& runs, const std::vector<std::string>& names,
                     std::string* o) {
  absl::StrAppend(o, "<ul class=\"runs\">\n");
  for (size_t i = 0; i < runs.size(); ++i) {
    const v1::RunRecord& r = runs[i];
    absl::StrAppend(o, "<li>", names[i].empty() ? "" : "<b>" + HtmlEscape(names[i]) + "</b> ",
                    HtmlEscape(r.run_id()), " (", HtmlEscape(r.status()), ", ", r.agents_size(),
                    " agents, started ", HtmlEscape(r.started_at().substr(0, 19)), ")</li>\n");
  }
  absl::StrAppend(o, "</ul>\n");
  for (const auto& r : runs) {
    if (!r.error().empty()) {
      absl::StrAppend(o, "<p class=\"err\">", HtmlEscape(r.run_id()), ": ", HtmlEscape(r.error()),
                      "</p>\n");
    }
  }
  const std::vector<std::string> changes = PlanChanges(runs);
  if (changes.empty()) return;
  // What the runs left out changes what the figure means: said in the open;
  // the caps are folded.
  for (const std::string& c : changes) {
    if (absl::StrContains(c, " left out (")) {
      absl::StrAppend(o, "<p class=\"note\">Not applied: ", HtmlEscape(c), "</p>\n");
    }
  }
  const bool all_smoke =
      std::all_of(runs.begin(), runs.end(), [](const v1::RunRecord& r) { return r.smoke(); });
  absl::StrAppend(o, "<details class=\"note\"><summary>", all_smoke ? "Smoke runs" : "Some runs",
                  " (lockstep run --smoke): not the plan as written; ", changes.size(),
                  " changes, each below</summary><ul>\n");
  for (const std::string& c : changes) absl::StrAppend(o, "<li>", HtmlEscape(c), "</li>\n");
  absl::StrAppend(o, "</ul></details>\n");
}

// ---- 3. the results table -------------------------------------------------------

// One result of the report: its key, its name in the table and its row in
// each run (nullptr: not in that run).
struct ResultLine {
  ResultKey key;
  std::string name;
  std::vector<const v1::SummaryRow*> rows;
};

std::vector<ResultLine> ResultLines(const std::vector<v1::RunRecord>& runs) {
  std::vector<ResultLine> lines;
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& t : runs[i].tests()) {
      for (const auto& row : t.summary()) {
        const ResultKey key = KeyOf(row, t);
        auto it = std::find_if(lines.begin(), lines.end(), [&](const ResultLine& l) { return l.key == key; });
        if (it == lines.end()) {
          it = lines.insert(lines.end(), {key, absl::StrCat(OperationName(row), ", ", TestName(runs[i], t)),
                                          std::vector<const v1::SummaryRow*>(runs.size(), nullptr)});
        }
        if (it->rows[i] == nullptr) it->rows[i] = &row;
      }
    }
  }
  return lines;
}

// "452.1–483.0 (3.1%)": min–max and the coefficient of variation; "1 rep".
std::string SpreadText(const std::vector<double>& v) {
  if (v.size() < 2) return absl::StrCat(v.size(), " rep");
  const double mean = Mean(v);
  const double cv = mean > 0 ? SampleStdDev(v) / mean * 100 : 0;
  return absl::StrFormat("%.1f–%.1f (cv %.1f%%, %u reps)", *std::min_element(v.begin(), v.end()),
                         *std::max_element(v.begin(), v.end()), cv, static_cast<unsigned>(v.size()));
}

void AppendResultsTable(const std::vector<v1::RunRecord>& runs, const std::vector<std::string>& names,
                        std::string* o) {
  const std::vector<ResultLine> lines = ResultLines(runs);
  absl::StrAppend(o, "<h2>Results</h2>\n<div class=\"wide\"><table class=\"answer\">\n<tr><th>result</th>");
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string who = names[i].empty() ? "" : names[i] + ": ";
    absl::StrAppend(o, "<th>", HtmlEscape(who), "median MiB/s</th><th>spread</th>");
    if (i > 0) absl::StrAppend(o, "<th>change</th><th>significance</th>");
  }
  // Several runs of one plan: also the median over all of them (seed 004's
  // "median of 3 runs").
  const bool pooled = runs.size() > 1 && std::all_of(runs.begin(), runs.end(), [&](const auto& r) {
    return r.name() == runs[0].name();
  });
  if (pooled) absl::StrAppend(o, "<th>all ", runs.size(), " runs: median</th><th>min–max</th>");
  absl::StrAppend(o, "</tr>\n");
  for (const ResultLine& l : lines) {
    absl::StrAppend(o, "<tr><td>", HtmlEscape(l.name), "</td>");
    const std::vector<double> first = l.rows[0] ? RepValues(*l.rows[0]) : std::vector<double>{};
    for (size_t i = 0; i < runs.size(); ++i) {
      if (l.rows[i] == nullptr) {
        absl::StrAppend(o, "<td class=\"n\">-</td><td></td>", i > 0 ? "<td></td><td></td>" : "");
        continue;
      }
      const std::vector<double> v = RepValues(*l.rows[i]);
      absl::StrAppend(o, "<td class=\"n\">", F2(Median(v)), "</td><td class=\"n\">",
                      HtmlEscape(SpreadText(v)), "</td>");
      if (i == 0) continue;
      if (first.empty()) {
        absl::StrAppend(o, "<td></td><td></td>");
        continue;
      }
      ResultComparison c;
      c.reps_a = first;
      c.reps_b = v;
      c.welch = WelchTTest(first, v);
      const double a = Median(first);
      const bool sig = c.welch.available && c.welch.p_two_sided < 0.05;
      absl::StrAppend(o, "<td class=\"n\">",
                      a == 0 ? std::string("-") : absl::StrFormat("%+.1f%%", (Median(v) - a) / a * 100),
                      "</td><td class=\"n", sig ? " sig" : "", "\">", HtmlEscape(c.SignificanceText()),
                      "</td>");
    }
    if (pooled) {
      std::vector<double> all;
      for (const v1::SummaryRow* row : l.rows) {
        if (row == nullptr) continue;
        const std::vector<double> v = RepValues(*row);
        all.insert(all.end(), v.begin(), v.end());
      }
      absl::StrAppend(o, "<td class=\"n\">", F2(Median(all)), "</td><td class=\"n\">",
                      absl::StrFormat("%.1f–%.1f", *std::min_element(all.begin(), all.end()),
                                      *std::max_element(all.begin(), all.end())),
                      "</td>");
    }
    absl::StrAppend(o, "</tr>\n");
  }
  absl::StrAppend(o, "</table></div>\n<p class=\"note\">Median and spread over the repetitions of "
                     "each run",
                  runs.size() < 2 ? std::string(".")
                                  : absl::StrCat("; change of the medians against the first run; "
                                                 "significance: ",
                                                 HtmlEscape(kSignificanceMethod), "."),
                  "</p>\n");
}

// ---- 4. details -------------------------------------------------------------------

void AppendRunsTable(const std::vector<v1::RunRecord>& runs, std::string* o) {
  absl::StrAppend(o, "<details><summary>Runs</summary>\n<div class=\"wide\"><table>\n");
  Header(o, {"#", "run id", "name", "plan sha256", "plan file", "started", "finished", "status",
             "controller", "lockstep", "agents", "tests"});
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    Row(o, {absl::StrCat(i + 1), r.run_id(), r.name(), r.plan_sha256().substr(0, 16),
            r.plan_file(), r.started_at(), r.finished_at(), r.status(), r.controller_host(),
            r.lockstep_version(), absl::StrCat(r.agents_size()), absl::StrCat(r.tests_size())});
  }
  absl::StrAppend(o, "</table></div>\n");
  for (const auto& r : runs) {
    if (!r.command_line().empty()) {
      absl::StrAppend(o, "<p class=\"note\">", HtmlEscape(r.run_id()), ": <code>",
                      HtmlEscape(r.command_line()), "</code></p>\n");
    }
  }
  absl::StrAppend(o, "</details>\n");
}

void AppendAgents(const std::vector<v1::RunRecord>& runs, std::string* o) {
  int agents = 0;
  for (const auto& r : runs) agents += r.agents_size();
  absl::StrAppend(o, "<details><summary>Agents (", agents, ")</summary>\n");
  for (const auto& r : runs) {
    absl::StrAppend(o, "<h3>", HtmlEscape(r.run_id()), "</h3>\n<div class=\"wide\"><table>\n");
    Header(o, {"address", "role", "host", "kernel", "os", "cores", "memory", "agent", "lustre",
               "fs types", "clock offset", "± uncertainty", "status"});
    for (const auto& a : r.agents()) {
      const auto& f = a.facts();
      std::set<std::string> fs;
      for (const auto& root : f.roots()) fs.insert(root.fs_type() + " " + root.path());
      Row(o,
          {a.address(), v1::Role_Name(a.role()), f.hostname(), f.kernel(), f.os(),
           absl::StrCat(f.cores()), HumanBytes(f.memory_bytes()), f.agent_version(),
           f.lustre_version(), absl::StrJoin(fs, "; "),
           absl::StrFormat("%.3f ms", a.clock().offset_ns() / 1e6),
           absl::StrFormat("%.3f ms", a.clock().uncertainty_ns() / 1e6),
           a.error().empty() ? a.status() : absl::StrCat(a.status(), ": ", a.error())},
          {false, false, false, false, false, true, true, false, false, false, true, true, false});
    }
    absl::StrAppend(o, "</table></div>\n");
  }
  absl::StrAppend(o, "</details>\n");
}

// Per plan given by several runs: each result's median, min and max over
// every repetition of every run ("median of several runs").
void AppendMediansOverRuns(const std::vector<v1::RunRecord>& runs, std::string* o) {
  std::vector<std::pair<std::string, std::vector<v1::RunRecord>>> plans;
  for (const v1::RunRecord& r : runs) {
    auto it = std::find_if(plans.begin(), plans.end(), [&](const auto& p) { return p.first == r.name(); });
    if (it == plans.end()) it = plans.insert(plans.end(), {r.name(), {}});
    it->second.push_back(r);
  }
  for (const auto& [plan, group] : plans) {
    if (group.size() < 2) continue;
    absl::StrAppend(o, "<h3>", HtmlEscape(plan), ": median of ", group.size(),
                    " runs (every repetition of each)</h3>\n<div class=\"wide\"><table>\n");
    Header(o, {"result", "runs", "values", "median MiB/s", "min", "max"});
    for (const PooledResult& p : PoolResults(group)) {
      Row(o,
          {p.key.ToString(), absl::StrCat(p.runs), absl::StrCat(p.values.size()),
           F2(Median(p.values)), F2(*std::min_element(p.values.begin(), p.values.end())),
           F2(*std::max_element(p.values.begin(), p.values.end()))},
          {false, true, true, true, true, true});
    }
    absl::StrAppend(o, "</table></div>\n");
  }
}

void AppendEveryResult(const std::vector<v1::RunRecord>& runs, std::string* o) {
  absl::StrAppend(o, "<details><summary>Every result and repetition</summary>\n");
  for (const auto& r : runs) {
    absl::StrAppend(o, "<h3>", HtmlEscape(r.run_id()), "</h3>\n<div class=\"wide\"><table>\n");
    Header(o, {"test", "sweep (as run)", "phase", "operation", "api", "tasks", "tasks/node",
               "transfer", "block", "segments", "fpp", "reps", "median MiB/s", "mean MiB/s", "std",
               "min", "max", "ops/s mean", "mean time s", "per repetition MiB/s"});
    for (const auto& t : r.tests()) {
      for (const auto& s : t.summary()) {
        std::vector<std::string> reps;
        for (double v : s.bw_mib_per_rep()) reps.push_back(F2(v));
        Row(o,
            {absl::StrCat(t.test_id()), RanLabel(t), s.phase(), s.operation(), s.api(),
             absl::StrCat(s.num_tasks()), absl::StrCat(s.tasks_per_node()),
             HumanBytes(s.transfer_bytes()), HumanBytes(s.block_bytes()),
             absl::StrCat(s.segments()), s.file_per_process() ? "yes" : "no",
             absl::StrCat(s.repetitions()), F2(Median(RepValues(s))), F2(s.bw_mean_mib()),
             F2(s.bw_std_mib()), F2(s.bw_min_mib()), F2(s.bw_max_mib()), F2(s.ops_mean()),
             absl::StrFormat("%.4f", s.mean_time_s()), absl::StrJoin(reps, ", ")},
            {true, false, false, false, false, true, true, true, true, true, false, true, true,
             true, true, true, true, true, true, false});
      }
    }
    absl::StrAppend(o, "</table></div>\n");
  }
  AppendMediansOverRuns(runs, o);
  absl::StrAppend(o, "</details>\n");
}

std::string SpreadPlot(const std::vector<v1::RunRecord>& runs, const std::vector<std::string>& names) {
  std::vector<StripCategory> cats;
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& t : runs[i].tests()) {
      for (const auto& r : t.summary()) {
        StripCategory c;
        c.label = absl::StrFormat("%st%u %s %u", runs.size() > 1 ? absl::StrCat("[", i + 1, "] ") : "",
                                  t.test_id(), r.operation(), r.num_tasks());
        c.full = absl::StrCat(names[i].empty() ? "" : names[i] + " ", "test ", t.test_id(), " ",
                              OperationName(r), " ", TestName(runs[i], t));
        c.values = RepValues(r);
        c.color = static_cast<int>(i);
        cats.push_back(std::move(c));
      }
    }
  }
  return StripPlot("Per-repetition bandwidth (dots) and mean (bar)", cats);
}

void AppendSeriesAndLatency(const std::vector<v1::RunRecord>& runs,
                            const std::vector<std::string>& names, const HtmlOptions& options,
                            std::string* o) {
  const TimeSeriesPlots ts = TimeSeriesFigures(
      runs, names, {.max_plots = options.max_time_series_plots, .min_samples = 3});
  absl::StrAppend(o, "<details><summary>Throughput over time (", ts.plots.size(),
                  " phases)</summary>\n");
  if (ts.plots.empty() && ts.too_short == 0) {
    absl::StrAppend(o, "<p class=\"note\">No throughput series recorded.</p>\n");
  }
  if (ts.too_short > 0) {
    absl::StrAppend(o, absl::StrFormat(
                           "<p class=\"note\">%d phases ran for fewer than 3 sampling intervals: "
                           "no series is drawn for them; their rate is their result above.</p>\n",
                           ts.too_short));
  }
  for (const auto& p : ts.plots) absl::StrAppend(o, p);
  if (ts.omitted > 0) {
    absl::StrAppend(o, absl::StrFormat("<p class=\"note\">%d more phases with series are not "
                                       "plotted (limit %d).</p>\n",
                                       ts.omitted, options.max_time_series_plots));
  }
  absl::StrAppend(o, "</details>\n");
  const std::vector<std::string> lat = LatencyPlots(runs, names);
  absl::StrAppend(o, "<details><summary>Latency percentiles (", lat.size(), " phases)</summary>\n");
  if (lat.empty()) {
    absl::StrAppend(o, "<p class=\"note\">No latency histograms recorded.</p>\n");
  } else {
    absl::StrAppend(o, "<p class=\"note\">Percentiles of the tasks' latency histograms merged "
                       "over every task, agent and repetition of a test (not averages of "
                       "percentiles).</p>\n");
  }
  for (const auto& p : lat) absl::StrAppend(o, p);
  absl::StrAppend(o, "</details>\n");
}

void AppendAuOverTime(const std::vector<v1::RunRecord>& runs, const std::vector<std::string>& names,
                      std::string* o) {
  const AuOverTime au = AuOverTimeFigures(runs, names);
  if (au.plots.empty() && au.single_epoch == 0) return;  // no train phase
  absl::StrAppend(o, "<details><summary>AU per host over time (", au.plots.size(),
                  " train phases)</summary>\n");
  if (au.single_epoch > 0) {
    absl::StrAppend(o, absl::StrFormat("<p class=\"note\">%d train phases ran one epoch: AU is "
                                       "recorded per epoch, so their AU is their result above."
                                       "</p>\n",
                                       au.single_epoch));
  }
  for (const auto& p : au.plots) absl::StrAppend(o, p);
  absl::StrAppend(o, "</details>\n");
}

}  // namespace

std::string RenderHtml(const std::vector<v1::RunRecord>& runs, const HtmlOptions& options) {
  std::vector<std::string> plans;
  for (const auto& r : runs) {
    if (std::find(plans.begin(), plans.end(), r.name()) == plans.end()) plans.push_back(r.name());
  }
  const std::string title =
      !options.title.empty() ? options.title
                             : absl::StrCat(absl::StrJoin(plans, ", "), runs.size() > 1
                                                ? absl::StrCat(": ", runs.size(), " runs")
                                                : std::string());
  const std::vector<std::string> names = RunNames(runs, options.run_tags);
  std::string o = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
      HtmlEscape(title), "</title>\n<style>", kCss, "</style>\n</head>\n<body>\n<h1>",
      HtmlEscape(title), "</h1>\n");
  AppendRunLegend(runs, names, &o);
  for (const std::string& f : PlanFigures(runs, names)) absl::StrAppend(&o, f);
  for (const std::string& f : AiScalingFigures(runs)) absl::StrAppend(&o, f);
  if (const std::vector<std::string> layers = LayersFigures(runs, names); !layers.empty()) {
    absl::StrAppend(&o, "<h2>Layers</h2>\n<p class=\"note\">Each write and read beside the "
                        "network (net phase) and the servers' back end (backend phase) of its "
                        "test; efficiency = end to end / min(network, back end).</p>\n");
    for (const std::string& f : layers) absl::StrAppend(&o, f);
  }
  AppendResultsTable(runs, names, &o);
  absl::StrAppend(&o, "<h2>Details</h2>\n");
  AppendRunsTable(runs, &o);
  AppendAgents(runs, &o);
  AppendEveryResult(runs, &o);
  absl::StrAppend(&o, "<details><summary>Per-repetition spread</summary>\n", SpreadPlot(runs, names),
                  "</details>\n");
  AppendSeriesAndLatency(runs, names, options, &o);
  AppendAuOverTime(runs, names, &o);
  absl::StrAppend(&o, "<p class=\"note\">Generated by lockstep ", HtmlEscape(LOCKSTEP_VERSION),
                  " at ", HtmlEscape(FormatRfc3339(RealtimeNs())),
                  ". Bandwidths are MiB/s (2^20 bytes per second).</p>\n</body>\n</html>\n");
  return o;
}

}  // namespace lockstep
