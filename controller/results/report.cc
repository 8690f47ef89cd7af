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
#include "controller/results/compare.h"

namespace lockstep {
namespace {

// ---- escaping ------------------------------------------------------------------

std::string Html(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

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

// ---- SVG plots -------------------------------------------------------------------

const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr int kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

const char* const kDashes[] = {"", "6 3", "2 3", "8 3 2 3"};

std::string TickText(double v) {
  double a = std::fabs(v);
  if (a >= 1e6 || (a > 0 && a < 1e-3)) return absl::StrFormat("%.2g", v);
  if (a >= 100 || v == std::floor(v)) return absl::StrFormat("%.0f", v);
  return absl::StrFormat("%.3g", v);
}

struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double base = 10;
  std::vector<std::pair<double, std::string>> ticks;

  double Frac(double v) const {
    if (log) {
      double l = std::log(std::max(v, lo)) , a = std::log(lo), b = std::log(hi);
      return b > a ? (l - a) / (b - a) : 0.5;
    }
    return hi > lo ? (v - lo) / (hi - lo) : 0.5;
  }
};

Axis MakeAxis(const std::vector<double>& values_in, bool log, double base, bool include_zero,
              const std::vector<std::pair<double, std::string>>& custom) {
  Axis ax;
  std::vector<double> values;
  for (double v : values_in) {
    if (std::isfinite(v) && (!log || v > 0)) values.push_back(v);
  }
  if (values.empty()) values = {log ? 1.0 : 0.0, log ? base : 1.0};
  double mn = *std::min_element(values.begin(), values.end());
  double mx = *std::max_element(values.begin(), values.end());
  if (!custom.empty()) {
    for (const auto& [v, label] : custom) {
      mn = std::min(mn, v);
      mx = std::max(mx, v);
    }
  }
  ax.log = log;
  ax.base = base;
  if (log) {
    double a = std::floor(std::log(mn) / std::log(base) + 1e-9);
    double b = std::ceil(std::log(mx) / std::log(base) - 1e-9);
    if (b <= a) b = a + 1;
    ax.lo = std::pow(base, a);
    ax.hi = std::pow(base, b);
    int n = static_cast<int>(b - a);
    int every = std::max(1, n / 8 + (n % 8 ? 1 : 0));
    for (int i = 0; i <= n; i += every) {
      double v = std::pow(base, a + i);
      ax.ticks.push_back({v, TickText(v)});
    }
  } else {
    if (include_zero) mn = std::min(mn, 0.0);
    if (mx <= mn) mx = mn + (mn == 0 ? 1 : std::fabs(mn) * 0.1);
    double raw = (mx - mn) / 5;
    double mag = std::pow(10, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
      if (mag * m >= raw) {
        step = mag * m;
        break;
      }
    }
    ax.lo = std::floor(mn / step) * step;
    ax.hi = std::ceil(mx / step) * step;
    for (double v = ax.lo; v <= ax.hi + step * 1e-6; v += step) ax.ticks.push_back({v, TickText(v)});
  }
  if (!custom.empty()) ax.ticks = custom;
  return ax;
}

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;
  int style = 0;  // dash index, for runs overlaid
};

struct PlotSpec {
  std::string title, x_label, y_label;
  bool log_x = false, log_y = false;
  double log_x_base = 2;
  bool y_from_zero = true;
  std::vector<std::pair<double, std::string>> x_ticks;  // categorical x
  std::string kind;  // data-plot attribute: "scaling", "timeseries", "latency"
};

constexpr int kW = 760, kH = 380, kLeft = 72, kRight = 230, kTop = 34, kBottom = 52;

std::string LinePlot(const PlotSpec& spec, const std::vector<Series>& series) {
  std::vector<double> xs, ys;
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points) {
      xs.push_back(x);
      ys.push_back(y);
    }
  }
  Axis ax = MakeAxis(xs, spec.log_x, spec.log_x_base, false, spec.x_ticks);
  Axis ay = MakeAxis(ys, spec.log_y, 10, spec.y_from_zero && !spec.log_y, {});
  const double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  auto px = [&](double x) { return kLeft + ax.Frac(x) * pw; };
  auto py = [&](double y) { return kTop + (1 - ay.Frac(y)) * ph; };
  std::string o = absl::StrFormat(
      "<svg class=\"plot\" data-plot=\"%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
      "role=\"img\" aria-label=\"%s\">\n<title>%s</title>\n",
      Html(spec.kind), kW, kH, kW, kH, Html(spec.title), Html(spec.title));
  absl::StrAppend(&o, absl::StrFormat(
                          "<text x=\"%d\" y=\"20\" class=\"ptitle\">%s</text>\n"
                          "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" class=\"frame\"/>\n",
                          kLeft, Html(spec.title), kLeft, kTop, pw, ph));
  for (const auto& [v, label] : ay.ticks) {
    double y = py(v);
    absl::StrAppend(&o, absl::StrFormat("<line x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                                        "class=\"grid\"/><text x=\"%d\" y=\"%.1f\" "
                                        "class=\"ytick\">%s</text>\n",
                                        kLeft, kLeft + pw, y, y, kLeft - 6, y + 4, Html(label)));
  }
  for (const auto& [v, label] : ax.ticks) {
    double x = px(v);
    absl::StrAppend(&o, absl::StrFormat("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%.1f\" "
                                        "class=\"grid\"/><text x=\"%.1f\" y=\"%.1f\" "
                                        "class=\"xtick\">%s</text>\n",
                                        x, x, kTop, kTop + ph, x, kTop + ph + 16, Html(label)));
  }
  absl::StrAppend(&o, absl::StrFormat("<text x=\"%.1f\" y=\"%d\" class=\"xlabel\">%s</text>\n",
                                      kLeft + pw / 2, kH - 10, Html(spec.x_label)));
  absl::StrAppend(&o, absl::StrFormat("<text x=\"16\" y=\"%.1f\" class=\"ylabel\" "
                                      "transform=\"rotate(-90 16 %.1f)\">%s</text>\n",
                                      kTop + ph / 2, kTop + ph / 2, Html(spec.y_label)));
  if (series.empty() || xs.empty()) {
    absl::StrAppend(&o, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"nodata\">no data"
                                        "</text>\n",
                                        kLeft + pw / 2, kTop + ph / 2));
  }
  for (size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i];
    const char* color = kPalette[i % kPaletteSize];
    const char* dash = kDashes[s.style % 4];
    std::vector<std::string> pts;
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(y) || (spec.log_y && y <= 0) || (spec.log_x && x <= 0)) continue;
      pts.push_back(absl::StrFormat("%.1f,%.1f", px(x), py(y)));
    }
    absl::StrAppend(&o, absl::StrFormat("<g class=\"series\" data-series=\"%s\">\n", Html(s.name)));
    absl::StrAppend(&o, absl::StrFormat("<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" "
                                        "stroke-width=\"2\"%s/>\n",
                                        absl::StrJoin(pts, " "), color,
                                        *dash ? absl::StrCat(" stroke-dasharray=\"", dash, "\"") : ""));
    if (s.points.size() <= 64) {
      for (const auto& [x, y] : s.points) {
        if (!std::isfinite(y) || (spec.log_y && y <= 0) || (spec.log_x && x <= 0)) continue;
        absl::StrAppend(&o, absl::StrFormat("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\">"
                                            "<title>%s: %s, %s</title></circle>\n",
                                            px(x), py(y), color, Html(s.name), TickText(x),
                                            absl::StrFormat("%.2f", y)));
      }
    }
    absl::StrAppend(&o, "</g>\n");
    double ly = kTop + 8 + 16.0 * static_cast<double>(i);
    if (ly < kH - 10) {
      absl::StrAppend(&o, absl::StrFormat(
                              "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                              "stroke-width=\"2\"%s/><text x=\"%.1f\" y=\"%.1f\" class=\"legend\">"
                              "%s</text>\n",
                              kLeft + pw + 10, kLeft + pw + 30, ly, ly, color,
                              *dash ? absl::StrCat(" stroke-dasharray=\"", dash, "\"") : "",
                              kLeft + pw + 34, ly + 4, Html(s.name)));
    }
  }
  absl::StrAppend(&o, "</svg>\n");
  return o;
}

struct StripCategory {
  std::string label;      // short, under the axis
  std::string full;       // tooltip
  std::vector<double> values;
  int color = 0;
};

std::string StripPlot(const std::string& title, const std::vector<StripCategory>& cats) {
  std::vector<double> ys;
  for (const auto& c : cats) ys.insert(ys.end(), c.values.begin(), c.values.end());
  Axis ay = MakeAxis(ys, false, 10, true, {});
  const int per = 44;
  const int w = std::max(kW - kRight + 40, kLeft + 20 + per * static_cast<int>(cats.size()));
  const int h = kH + 60;
  const double pw = w - kLeft - 20, ph = h - kTop - kBottom - 60;
  auto py = [&](double y) { return kTop + (1 - ay.Frac(y)) * ph; };
  std::string o = absl::StrFormat(
      "<svg class=\"plot\" data-plot=\"spread\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
      "role=\"img\" aria-label=\"%s\">\n<title>%s</title>\n"
      "<text x=\"%d\" y=\"20\" class=\"ptitle\">%s</text>\n"
      "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" class=\"frame\"/>\n",
      w, h, w, h, Html(title), Html(title), kLeft, Html(title), kLeft, kTop, pw, ph);
  for (const auto& [v, label] : ay.ticks) {
    double y = py(v);
    absl::StrAppend(&o, absl::StrFormat("<line x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                                        "class=\"grid\"/><text x=\"%d\" y=\"%.1f\" "
                                        "class=\"ytick\">%s</text>\n",
                                        kLeft, kLeft + pw, y, y, kLeft - 6, y + 4, Html(label)));
  }
  absl::StrAppend(&o, absl::StrFormat("<text x=\"16\" y=\"%.1f\" class=\"ylabel\" "
                                      "transform=\"rotate(-90 16 %.1f)\">MiB/s</text>\n",
                                      kTop + ph / 2, kTop + ph / 2));
  double slot = cats.empty() ? pw : pw / static_cast<double>(cats.size());
  for (size_t i = 0; i < cats.size(); ++i) {
    const auto& c = cats[i];
    const char* color = kPalette[c.color % kPaletteSize];
    double cx = kLeft + slot * (static_cast<double>(i) + 0.5);
    absl::StrAppend(&o, absl::StrFormat("<g class=\"series\" data-series=\"%s\">\n", Html(c.full)));
    for (size_t k = 0; k < c.values.size(); ++k) {
      double jitter = c.values.size() > 1
                          ? (static_cast<double>(k) / static_cast<double>(c.values.size() - 1) - 0.5) * 10
                          : 0;
      absl::StrAppend(&o, absl::StrFormat("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\" "
                                          "fill-opacity=\"0.7\"><title>%s rep %u: %.2f MiB/s"
                                          "</title></circle>\n",
                                          cx + jitter, py(c.values[k]), color, Html(c.full),
                                          static_cast<unsigned>(k), c.values[k]));
    }
    if (!c.values.empty()) {
      double m = Mean(c.values);
      absl::StrAppend(&o, absl::StrFormat("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                                          "stroke=\"%s\" stroke-width=\"2\"><title>%s mean: %.2f "
                                          "MiB/s</title></line>\n",
                                          cx - 12, cx + 12, py(m), py(m), color, Html(c.full), m));
    }
    double ty = kTop + ph + 12;
    absl::StrAppend(&o, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"cat\" "
                                        "transform=\"rotate(-40 %.1f %.1f)\">%s</text>\n",
                                        cx, ty, cx, ty, Html(c.label)));
    absl::StrAppend(&o, "</g>\n");
  }
  absl::StrAppend(&o, "</svg>\n");
  return o;
}

// ---- what to plot ----------------------------------------------------------------

std::string RunLabel(const std::vector<v1::RunRecord>& runs, size_t i) {
  return runs.size() > 1 ? absl::StrCat(runs[i].run_id(), " ") : std::string();
}

// The scaling curve: for each run and each result shape except the task
// count, mean bandwidth against total tasks.
std::string ScalingPlot(const std::vector<v1::RunRecord>& runs) {
  // Group key: phase, operation, transfer, block, segments, fpp.
  using Shape = std::tuple<std::string, std::string, uint64_t, uint64_t, uint64_t, bool>;
  std::set<Shape> all_shapes;
  std::map<std::string, std::set<Shape>> shapes_by_op;
  for (const auto& run : runs) {
    for (const auto& t : run.tests()) {
      for (const auto& r : t.summary()) {
        Shape s{r.phase(), r.operation(), r.transfer_bytes(), r.block_bytes(), r.segments(),
                r.file_per_process()};
        all_shapes.insert(s);
        shapes_by_op[r.phase() + "/" + r.operation()].insert(s);
      }
    }
  }
  std::vector<Series> series;
  for (size_t i = 0; i < runs.size(); ++i) {
    std::map<Shape, std::map<uint32_t, double>> pts;
    for (const auto& t : runs[i].tests()) {
      for (const auto& r : t.summary()) {
        Shape s{r.phase(), r.operation(), r.transfer_bytes(), r.block_bytes(), r.segments(),
                r.file_per_process()};
        pts[s].emplace(r.num_tasks(), Mean(RepValues(r)));
      }
    }
    for (const auto& [s, by_tasks] : pts) {
      const auto& [phase, op, xfer, block, segs, fpp] = s;
      std::string name = phase == op ? op : absl::StrCat(phase, "/", op);
      if (shapes_by_op[phase + "/" + op].size() > 1) {
        absl::StrAppend(&name, " xfer=", HumanBytes(xfer), " block=", HumanBytes(block),
                        fpp ? " fpp" : "");
      }
      Series se;
      se.name = RunLabel(runs, i) + name;
      se.style = static_cast<int>(i);
      for (const auto& [tasks, bw] : by_tasks) se.points.push_back({tasks, bw});
      series.push_back(std::move(se));
    }
  }
  std::vector<double> xs;
  for (const auto& s : series) {
    for (const auto& p : s.points) xs.push_back(p.first);
  }
  bool log_x = false;
  if (!xs.empty()) {
    double mn = *std::min_element(xs.begin(), xs.end());
    double mx = *std::max_element(xs.begin(), xs.end());
    log_x = mn > 0 && mx / mn >= 8;
  }
  PlotSpec spec;
  spec.title = "Bandwidth vs total tasks (mean over repetitions)";
  spec.x_label = log_x ? "total tasks (log2)" : "total tasks";
  spec.y_label = "MiB/s";
  spec.log_x = log_x;
  spec.kind = "scaling";
  return LinePlot(spec, series);
}

std::string SpreadPlot(const std::vector<v1::RunRecord>& runs) {
  std::vector<StripCategory> cats;
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& t : runs[i].tests()) {
      for (const auto& r : t.summary()) {
        StripCategory c;
        c.label = absl::StrFormat("%st%u %s %u", runs.size() > 1 ? absl::StrCat("[", i + 1, "] ") : "",
                                  t.test_id(), r.operation(), r.num_tasks());
        c.full = absl::StrCat(RunLabel(runs, i), "test ", t.test_id(), " ", KeyOf(r).ToString());
        c.values = RepValues(r);
        c.color = static_cast<int>(i);
        cats.push_back(std::move(c));
      }
    }
  }
  return StripPlot("Per-repetition bandwidth (dots) and mean (bar)", cats);
}

// One plot per (run, test, phase) — the first repetition that has series.
std::vector<std::string> TimeSeriesPlots(const std::vector<v1::RunRecord>& runs, int max_plots,
                                         int* omitted) {
  std::vector<std::string> out;
  *omitted = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& t : runs[i].tests()) {
      std::set<std::string> done;
      for (const auto& ph : t.phases()) {
        if (done.count(ph.phase())) continue;
        std::vector<Series> series;
        for (const auto& a : ph.agents()) {
          if (a.series_bytes_size() == 0 || a.series_interval_ms() == 0) continue;
          Series s;
          s.name = a.address();
          double dt = a.series_interval_ms() / 1000.0;
          for (int k = 0; k < a.series_bytes_size(); ++k) {
            s.points.push_back({dt * (k + 1), static_cast<double>(a.series_bytes(k)) / dt / 1048576.0});
          }
          series.push_back(std::move(s));
        }
        if (series.empty()) continue;
        done.insert(ph.phase());
        if (static_cast<int>(out.size()) >= max_plots) {
          ++*omitted;
          continue;
        }
        PlotSpec spec;
        spec.title = absl::StrFormat("%sTest %u, %s, repetition %u: throughput per agent",
                                     RunLabel(runs, i), t.test_id(), ph.phase(), ph.repetition());
        spec.x_label = "seconds since start";
        spec.y_label = "MiB/s";
        spec.kind = "timeseries";
        out.push_back(LinePlot(spec, series));
      }
    }
  }
  return out;
}

// One plot per phase name: percentile -> latency, a line per (run, test).
std::vector<std::string> LatencyPlots(const std::vector<v1::RunRecord>& runs) {
  std::map<std::string, std::vector<Series>> by_phase;
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& t : runs[i].tests()) {
      std::map<std::string, std::vector<const v1::LatencySummary*>> lat;
      for (const auto& ph : t.phases()) {
        if (ph.latency().ops() > 0) lat[ph.phase()].push_back(&ph.latency());
      }
      for (const auto& [phase, list] : lat) {
        double p[5] = {0, 0, 0, 0, 0};
        for (const auto* l : list) {
          p[0] += l->p50_us();
          p[1] += l->p90_us();
          p[2] += l->p99_us();
          p[3] += l->p999_us();
          p[4] += l->max_us();
        }
        Series s;
        s.name = absl::StrFormat("%stest %u (%u tasks)", RunLabel(runs, i), t.test_id(),
                                 t.total_tasks());
        s.style = static_cast<int>(i);
        for (int k = 0; k < 5; ++k) s.points.push_back({k + 1.0, p[k] / static_cast<double>(list.size())});
        by_phase[phase].push_back(std::move(s));
      }
    }
  }
  std::vector<std::string> out;
  for (const auto& [phase, series] : by_phase) {
    PlotSpec spec;
    spec.title = absl::StrFormat("Latency percentiles of one transfer: %s (mean over repetitions)",
                                 phase);
    spec.x_label = "percentile";
    spec.y_label = "microseconds (log)";
    spec.log_y = true;
    spec.x_ticks = {{1, "p50"}, {2, "p90"}, {3, "p99"}, {4, "p99.9"}, {5, "max"}};
    spec.kind = "latency";
    out.push_back(LinePlot(spec, series));
  }
  return out;
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
)css";

void Row(std::string* o, const std::vector<std::string>& cells, const std::vector<bool>& numeric = {}) {
  absl::StrAppend(o, "<tr>");
  for (size_t i = 0; i < cells.size(); ++i) {
    bool n = i < numeric.size() && numeric[i];
    absl::StrAppend(o, n ? "<td class=\"n\">" : "<td>", Html(cells[i]), "</td>");
  }
  absl::StrAppend(o, "</tr>\n");
}

void Header(std::string* o, const std::vector<std::string>& cells) {
  absl::StrAppend(o, "<tr>");
  for (const auto& c : cells) absl::StrAppend(o, "<th>", Html(c), "</th>");
  absl::StrAppend(o, "</tr>\n");
}

std::string F2(double v) { return absl::StrFormat("%.2f", v); }

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
      Html(title), "</title>\n<style>", kCss, "</style>\n</head>\n<body>\n<h1>", Html(title),
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
      absl::StrAppend(&o, "<p class=\"err\">", Html(r.run_id()), ": ", Html(r.error()), "</p>\n");
    }
    if (!r.command_line().empty()) {
      absl::StrAppend(&o, "<p class=\"note\">", Html(r.run_id()), ": <code>",
                      Html(r.command_line()), "</code></p>\n");
    }
  }

  // Agents.
  absl::StrAppend(&o, "<h2>Agents</h2>\n");
  for (const auto& r : runs) {
    absl::StrAppend(&o, "<h3>", Html(r.run_id()), "</h3>\n<table>\n");
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
    absl::StrAppend(&o, "<h3>", Html(r.run_id()), "</h3>\n<table>\n");
    Header(&o, {"test", "phase", "operation", "api", "tasks", "tasks/node", "transfer", "block",
                "segments", "fpp", "reps", "mean MiB/s", "std", "min", "max", "ops/s mean",
                "mean time s", "per repetition MiB/s"});
    for (const auto& t : r.tests()) {
      for (const auto& s : t.summary()) {
        Row(&o,
            {absl::StrCat(t.test_id()), s.phase(), s.operation(), s.api(),
             absl::StrCat(s.num_tasks()), absl::StrCat(s.tasks_per_node()),
             HumanBytes(s.transfer_bytes()), HumanBytes(s.block_bytes()),
             absl::StrCat(s.segments()), s.file_per_process() ? "yes" : "no",
             absl::StrCat(s.repetitions()), F2(s.bw_mean_mib()), F2(s.bw_std_mib()),
             F2(s.bw_min_mib()), F2(s.bw_max_mib()), F2(s.ops_mean()),
             absl::StrFormat("%.4f", s.mean_time_s()), RepsText(s, ", ")},
            {true, false, false, false, true, true, true, true, true, false, true, true, true,
             true, true, true, true, false});
      }
    }
    absl::StrAppend(&o, "</table>\n");
  }

  absl::StrAppend(&o, "<h2>Scaling</h2>\n", ScalingPlot(runs));
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
  if (lat.empty()) absl::StrAppend(&o, "<p class=\"note\">No latency recorded.</p>\n");
  for (const auto& p : lat) absl::StrAppend(&o, p);
  absl::StrAppend(&o, "<p class=\"note\">Generated by lockstep ", Html(LOCKSTEP_VERSION), " at ",
                  Html(FormatRfc3339(RealtimeNs())),
                  ". Bandwidths are MiB/s (2^20 bytes per second).</p>\n</body>\n</html>\n");
  return o;
}

std::string RenderCsv(const std::vector<v1::RunRecord>& runs) {
  std::string o =
      "run_id,name,plan_sha256,started_at,status,test_id,phase,operation,api,num_tasks,"
      "tasks_per_node,transfer_bytes,block_bytes,segments,file_per_process,repetitions,"
      "bw_mean_mib,bw_std_mib,bw_min_mib,bw_max_mib,ops_mean,ops_std,mean_time_s,"
      "aggregate_mib,bw_mib_per_rep\n";
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
            G(s.mean_time_s()), G(s.aggregate_mib()), Csv(RepsText(s, ";"))};
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
