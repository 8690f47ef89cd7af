#include "controller/results/report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "controller/plan/sweep.h"
#include "controller/results/compare.h"
#include "controller/results/report_figures.h"
#include "controller/results/svg_plot.h"

namespace lockstep {
namespace {

// ---- escaping ------------------------------------------------------------------

std::string Csv(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string OmLabel(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string InfluxTag(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == ',' || c == '=' || c == ' ') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// Unix ns of started_at, or nullopt-like -1.
int64_t StartedNs(const v1::RunRecord& run) {
  absl::Time t;
  std::string err;
  if (absl::ParseTime(absl::RFC3339_full, run.started_at(), &t, &err)) return absl::ToUnixNanos(t);
  return -1;
}

std::string G(double v) { return absl::StrFormat("%.10g", v); }

std::string RepsText(const v1::SummaryRow& row, const char* sep) {
  std::vector<std::string> parts;
  for (double v : row.bw_mib_per_rep()) parts.push_back(absl::StrFormat("%.2f", v));
  return absl::StrJoin(parts, sep);
}

// ---- what to plot ----------------------------------------------------------------

std::string RunLabel(const std::vector<v1::RunRecord>& runs, size_t i) {
  return runs.size() > 1 ? absl::StrCat(runs[i].run_id(), " ") : std::string();
}

std::string SpreadPlot(const std::vector<v1::RunRecord>& runs) {
  std::vector<StripCategory> cats;
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& t : runs[i].tests()) {
      for (const auto& r : t.summary()) {
        StripCategory c;
        c.label = absl::StrFormat("%st%u %s %u", runs.size() > 1 ? absl::StrCat("[", i + 1, "] ") : "",
                                  t.test_id(), r.operation(), r.num_tasks());
        c.full = absl::StrCat(RunLabel(runs, i), "test ", t.test_id(), " ", KeyOf(r, t).ToString());
        c.values = RepValues(r);
        c.color = static_cast<int>(i);
        cats.push_back(std::move(c));
      }
    }
  }
  return StripPlot("Per-repetition bandwidth (dots) and mean (bar)", cats);
}

constexpr char kCss[] = R"css(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em;color:#222;max-width:1400px}
h1{font-size:1.5em}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ccc}h3{font-size:1.05em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f2f2f2}
.err{color:#b00}.note{color:#555;font-size:.9em}
svg.plot{display:block;margin:.6em 0;background:#fff}
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
                    " runs (every repetition of each)</h3>\n<table>\n");
    Header(o, {"result", "runs", "values", "median MiB/s", "min", "max"});
    for (const PooledResult& p : PoolResults(group)) {
      Row(o,
          {p.key.ToString(), absl::StrCat(p.runs), absl::StrCat(p.values.size()),
           F2(Median(p.values)), F2(*std::min_element(p.values.begin(), p.values.end())),
           F2(*std::max_element(p.values.begin(), p.values.end()))},
          {false, true, true, true, true, true});
    }
    absl::StrAppend(o, "</table>\n");
  }
}

}  // namespace

std::string RenderHtml(const std::vector<v1::RunRecord>& runs, const HtmlOptions& options) {
  std::vector<std::string> ids;
  for (const auto& r : runs) ids.push_back(r.run_id());
  std::string title = options.title.empty()
                          ? absl::StrCat("lockstep report: ", absl::StrJoin(ids, ", "))
                          : options.title;
  std::string o = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
      HtmlEscape(title), "</title>\n<style>", kCss, "</style>\n</head>\n<body>\n<h1>", HtmlEscape(title),
      "</h1>\n");

  // Runs.
  absl::StrAppend(&o, "<h2>Runs</h2>\n<table>\n");
  Header(&o, {"#", "run id", "name", "plan sha256", "plan file", "started", "finished", "status",
              "controller", "lockstep", "agents", "tests"});
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    Row(&o, {absl::StrCat(i + 1), r.run_id(), r.name(), r.plan_sha256().substr(0, 16),
             r.plan_file(), r.started_at(), r.finished_at(), r.status(), r.controller_host(),
             r.lockstep_version(), absl::StrCat(r.agents_size()), absl::StrCat(r.tests_size())});
  }
  absl::StrAppend(&o, "</table>\n");
  for (const auto& r : runs) {
    if (!r.error().empty()) {
      absl::StrAppend(&o, "<p class=\"err\">", HtmlEscape(r.run_id()), ": ", HtmlEscape(r.error()), "</p>\n");
    }
    if (!r.command_line().empty()) {
      absl::StrAppend(&o, "<p class=\"note\">", HtmlEscape(r.run_id()), ": <code>",
                      HtmlEscape(r.command_line()), "</code></p>\n");
    }
  }

  // Agents.
  absl::StrAppend(&o, "<h2>Agents</h2>\n");
  for (const auto& r : runs) {
    absl::StrAppend(&o, "<h3>", HtmlEscape(r.run_id()), "</h3>\n<table>\n");
    Header(&o, {"address", "role", "host", "kernel", "os", "cores", "memory", "agent", "lustre",
                "fs types", "clock offset", "± uncertainty", "status"});
    for (const auto& a : r.agents()) {
      const auto& f = a.facts();
      std::set<std::string> fs;
      for (const auto& root : f.roots()) fs.insert(root.fs_type() + " " + root.path());
      Row(&o,
          {a.address(), v1::Role_Name(a.role()), f.hostname(), f.kernel(), f.os(),
           absl::StrCat(f.cores()), HumanBytes(f.memory_bytes()), f.agent_version(),
           f.lustre_version(), absl::StrJoin(fs, "; "),
           absl::StrFormat("%.3f ms", a.clock().offset_ns() / 1e6),
           absl::StrFormat("%.3f ms", a.clock().uncertainty_ns() / 1e6),
           a.error().empty() ? a.status() : absl::StrCat(a.status(), ": ", a.error())},
          {false, false, false, false, false, true, true, false, false, false, true, true, false});
    }
    absl::StrAppend(&o, "</table>\n");
  }

  // Summary tables.
  absl::StrAppend(&o, "<h2>Results</h2>\n");
  for (const auto& r : runs) {
    absl::StrAppend(&o, "<h3>", HtmlEscape(r.run_id()), "</h3>\n<table>\n");
    Header(&o, {"test", "sweep", "phase", "operation", "api", "tasks", "tasks/node", "transfer",
                "block", "segments", "fpp", "reps", "median MiB/s", "mean MiB/s", "std", "min",
                "max", "ops/s mean", "mean time s", "per repetition MiB/s"});
    for (const auto& t : r.tests()) {
      for (const auto& s : t.summary()) {
        Row(&o,
            {absl::StrCat(t.test_id()), SweepLabel(t.sweep()), s.phase(), s.operation(), s.api(),
             absl::StrCat(s.num_tasks()), absl::StrCat(s.tasks_per_node()),
             HumanBytes(s.transfer_bytes()), HumanBytes(s.block_bytes()),
             absl::StrCat(s.segments()), s.file_per_process() ? "yes" : "no",
             absl::StrCat(s.repetitions()), F2(Median(RepValues(s))), F2(s.bw_mean_mib()),
             F2(s.bw_std_mib()),
             F2(s.bw_min_mib()), F2(s.bw_max_mib()), F2(s.ops_mean()),
             absl::StrFormat("%.4f", s.mean_time_s()), RepsText(s, ", ")},
            {true, false, false, false, false, true, true, true, true, true, false, true, true,
             true, true, true, true, true, true, false});
      }
    }
    absl::StrAppend(&o, "</table>\n");
  }

  AppendMediansOverRuns(runs, &o);
  absl::StrAppend(&o, "<h2>Throughput</h2>\n<p class=\"note\">Per plan: throughput against "
                      "tasks when its tests differ in tasks only, else a bar per configuration "
                      "(sweep point); the median over the repetitions, whiskers from min to "
                      "max.</p>\n");
  for (const std::string& f : PlanFigures(runs)) absl::StrAppend(&o, f);
  absl::StrAppend(&o, "<h2>Per-repetition spread</h2>\n", SpreadPlot(runs));
  absl::StrAppend(&o, "<h2>Throughput over time</h2>\n");
  int omitted = 0;
  auto ts = TimeSeriesPlots(runs, options.max_time_series_plots, &omitted);
  if (ts.empty()) absl::StrAppend(&o, "<p class=\"note\">No throughput series recorded.</p>\n");
  for (const auto& p : ts) absl::StrAppend(&o, p);
  if (omitted > 0) {
    absl::StrAppend(&o, absl::StrFormat("<p class=\"note\">%d more phases with series are not "
                                        "plotted (limit %d).</p>\n",
                                        omitted, options.max_time_series_plots));
  }
  absl::StrAppend(&o, "<h2>Latency percentiles</h2>\n");
  auto lat = LatencyPlots(runs);
  if (lat.empty()) {
    absl::StrAppend(&o, "<p class=\"note\">No latency histograms recorded.</p>\n");
  } else {
    absl::StrAppend(&o, "<p class=\"note\">Percentiles of the tasks' latency histograms merged "
                        "over every task, agent and repetition of a test (not averages of "
                        "percentiles).</p>\n");
  }
  for (const auto& p : lat) absl::StrAppend(&o, p);
  absl::StrAppend(&o, "<p class=\"note\">Generated by lockstep ", HtmlEscape(LOCKSTEP_VERSION), " at ",
                  HtmlEscape(FormatRfc3339(RealtimeNs())),
                  ". Bandwidths are MiB/s (2^20 bytes per second).</p>\n</body>\n</html>\n");
  return o;
}

std::string RenderCsv(const std::vector<v1::RunRecord>& runs) {
  std::string o =
      "run_id,name,plan_sha256,started_at,status,test_id,phase,operation,api,num_tasks,"
      "tasks_per_node,transfer_bytes,block_bytes,segments,file_per_process,repetitions,"
      "bw_mean_mib,bw_std_mib,bw_min_mib,bw_max_mib,ops_mean,ops_std,mean_time_s,"
      "aggregate_mib,bw_mib_per_rep,sweep\n";
  for (const auto& r : runs) {
    for (const auto& t : r.tests()) {
      for (const auto& s : t.summary()) {
        std::vector<std::string> f = {
            Csv(r.run_id()), Csv(r.name()), Csv(r.plan_sha256()), Csv(r.started_at()),
            Csv(r.status()), absl::StrCat(t.test_id()), Csv(s.phase()), Csv(s.operation()),
            Csv(s.api()), absl::StrCat(s.num_tasks()), absl::StrCat(s.tasks_per_node()),
            absl::StrCat(s.transfer_bytes()), absl::StrCat(s.block_bytes()),
            absl::StrCat(s.segments()), s.file_per_process() ? "1" : "0",
            absl::StrCat(s.repetitions()), G(s.bw_mean_mib()), G(s.bw_std_mib()),
            G(s.bw_min_mib()), G(s.bw_max_mib()), G(s.ops_mean()), G(s.ops_std()),
            G(s.mean_time_s()), G(s.aggregate_mib()), Csv(RepsText(s, ";")),
            Csv(SweepLabel(t.sweep()))};
        absl::StrAppend(&o, absl::StrJoin(f, ","), "\n");
      }
    }
  }
  return o;
}

std::string RenderOpenMetrics(const std::vector<v1::RunRecord>& runs) {
  struct Sample {
    std::string labels;
    double value;
    int64_t ts_ns;
  };
  std::map<std::string, std::vector<Sample>> fam;  // family -> samples
  for (const auto& r : runs) {
    int64_t ts = StartedNs(r);
    for (const auto& t : r.tests()) {
      for (const auto& s : t.summary()) {
        std::string labels = absl::StrFormat(
            "run_id=\"%s\",plan=\"%s\",test_id=\"%u\",phase=\"%s\",operation=\"%s\",api=\"%s\","
            "tasks=\"%u\",tasks_per_node=\"%u\",transfer_bytes=\"%u\",block_bytes=\"%u\","
            "segments=\"%u\",file_per_process=\"%s\"",
            OmLabel(r.run_id()), OmLabel(r.name()), t.test_id(), OmLabel(s.phase()),
            OmLabel(s.operation()), OmLabel(s.api()), s.num_tasks(), s.tasks_per_node(),
            s.transfer_bytes(), s.block_bytes(), s.segments(),
            s.file_per_process() ? "true" : "false");
        const double mib = 1048576.0;
        auto add = [&](const std::string& family, const std::string& extra, double v) {
          fam[family].push_back({extra.empty() ? labels : absl::StrCat(labels, ",", extra), v, ts});
        };
        add("lockstep_result_bandwidth_bytes_per_second", "stat=\"mean\"", s.bw_mean_mib() * mib);
        add("lockstep_result_bandwidth_bytes_per_second", "stat=\"min\"", s.bw_min_mib() * mib);
        add("lockstep_result_bandwidth_bytes_per_second", "stat=\"max\"", s.bw_max_mib() * mib);
        add("lockstep_result_bandwidth_bytes_per_second", "stat=\"stddev\"", s.bw_std_mib() * mib);
        add("lockstep_result_operations_per_second", "stat=\"mean\"", s.ops_mean());
        add("lockstep_result_mean_time_seconds", "", s.mean_time_s());
        add("lockstep_result_repetitions", "", s.repetitions());
      }
    }
  }
  const std::map<std::string, std::string> help = {
      {"lockstep_result_bandwidth_bytes_per_second",
       "Bandwidth of one lockstep result over its repetitions (mean, min, max, population stddev)."},
      {"lockstep_result_operations_per_second", "Mean transfers per second of one result."},
      {"lockstep_result_mean_time_seconds", "Mean duration of one repetition of the result."},
      {"lockstep_result_repetitions", "Repetitions measured for the result."},
  };
  std::string o;
  for (const auto& [name, samples] : fam) {
    absl::StrAppend(&o, "# TYPE ", name, " gauge\n");
    if (auto it = help.find(name); it != help.end()) absl::StrAppend(&o, "# HELP ", name, " ", it->second, "\n");
    for (const auto& s : samples) {
      absl::StrAppend(&o, name, "{", s.labels, "} ", G(s.value));
      if (s.ts_ns >= 0) {
        absl::StrAppend(&o, absl::StrFormat(" %d.%09d", s.ts_ns / 1000000000, s.ts_ns % 1000000000));
      }
      absl::StrAppend(&o, "\n");
    }
  }
  absl::StrAppend(&o, "# EOF\n");
  return o;
}

std::string RenderInfluxLines(const std::vector<v1::RunRecord>& runs) {
  std::string o;
  for (const auto& r : runs) {
    int64_t ts = StartedNs(r);
    for (const auto& t : r.tests()) {
      for (const auto& s : t.summary()) {
        // Tags sorted by key, empty values left out (line protocol forbids them).
        std::map<std::string, std::string> tags = {
            {"api", s.api()},
            {"block_bytes", absl::StrCat(s.block_bytes())},
            {"file_per_process", s.file_per_process() ? "true" : "false"},
            {"operation", s.operation()},
            {"phase", s.phase()},
            {"plan", r.name()},
            {"run_id", r.run_id()},
            {"segments", absl::StrCat(s.segments())},
            {"tasks", absl::StrCat(s.num_tasks())},
            {"tasks_per_node", absl::StrCat(s.tasks_per_node())},
            {"test_id", absl::StrCat(t.test_id())},
            {"transfer_bytes", absl::StrCat(s.transfer_bytes())},
        };
        std::string line = "lockstep_result";
        for (const auto& [k, v] : tags) {
          if (!v.empty()) absl::StrAppend(&line, ",", k, "=", InfluxTag(v));
        }
        std::vector<std::string> fields;
        auto field = [&](const char* k, double v) {
          if (std::isfinite(v)) fields.push_back(absl::StrCat(k, "=", G(v)));
        };
        field("bw_mean_mib", s.bw_mean_mib());
        field("bw_std_mib", s.bw_std_mib());
        field("bw_min_mib", s.bw_min_mib());
        field("bw_max_mib", s.bw_max_mib());
        field("ops_mean", s.ops_mean());
        field("mean_time_s", s.mean_time_s());
        fields.push_back(absl::StrCat("repetitions=", s.repetitions(), "i"));
        absl::StrAppend(&line, " ", absl::StrJoin(fields, ","));
        if (ts >= 0) absl::StrAppend(&line, " ", ts);
        absl::StrAppend(&o, line, "\n");
      }
    }
  }
  return o;
}

absl::Status WriteReportFile(const std::string& path, std::string_view content,
                             std::string_view what) {
  return Annotate(WriteFileAtomically(path, content), absl::StrCat("writing the ", std::string(what)));
}

}  // namespace lockstep
