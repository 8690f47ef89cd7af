#include "controller/results/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/results/compare.h"

namespace lockstep {
namespace {

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

// A duration in microseconds for an axis: "500 us", "2 ms", "1.5 s".
std::string DurationTick(double us) {
  if (us >= 1e6) return TickText(us / 1e6) + " s";
  if (us >= 1e3) return TickText(us / 1e3) + " ms";
  return TickText(us) + " us";
}

// A legend entry at most `max_chars` long (the full name is the tooltip).
std::string Shorten(const std::string& s, size_t max_chars) {
  if (s.size() <= max_chars) return s;
  return s.substr(0, max_chars - 3) + "...";
}

constexpr size_t kLegendChars = 34;

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
  if (!custom.empty()) {
    // Categories: half a slot of room on either side, so that the first and
    // last points (and their whiskers) are not cut by the frame.
    ax.ticks = custom;
    if (!log) {
      const double pad = custom.size() > 1 ? (mx - mn) / (2.0 * static_cast<double>(custom.size() - 1))
                                           : 0.5;
      ax.lo = mn - pad;
      ax.hi = mx + pad;
    }
  }
  return ax;
}

constexpr int kW = 760, kH = 380, kLeft = 72, kRight = 230, kTop = 34, kBottom = 52;

// The horizontal grid lines of `ay`'s ticks across a plot area `pw` wide,
// labelled on the left; `py` maps a value to its y pixel.
template <typename ToPixel>
void AppendYGrid(const Axis& ay, double pw, const ToPixel& py, std::string* o) {
  for (const auto& [v, label] : ay.ticks) {
    double y = py(v);
    absl::StrAppend(o, absl::StrFormat("<line x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                                       "class=\"grid\"/><text x=\"%d\" y=\"%.1f\" "
                                       "class=\"ytick\">%s</text>\n",
                                       kLeft, kLeft + pw, y, y, kLeft - 6, y + 4,
                                       HtmlEscape(label)));
  }
}

}  // namespace

std::string HtmlEscape(std::string_view s) {
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

std::string LinePlot(const PlotSpec& spec, const std::vector<PlotSeries>& series) {
  std::vector<double> xs, ys;
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points) {
      xs.push_back(x);
      ys.push_back(y);
    }
    for (const auto& [lo, hi] : s.ranges) {  // whiskers stay inside the axes
      ys.push_back(lo);
      ys.push_back(hi);
    }
  }
  Axis ax = MakeAxis(xs, spec.log_x, spec.log_x_base, false, spec.x_ticks);
  Axis ay = MakeAxis(ys, spec.log_y, 10, spec.y_from_zero && !spec.log_y, {});
  if (spec.y_unit == "us") {
    for (auto& [v, label] : ay.ticks) label = DurationTick(v);
  }
  const double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  auto px = [&](double x) { return kLeft + ax.Frac(x) * pw; };
  auto py = [&](double y) { return kTop + (1 - ay.Frac(y)) * ph; };
  std::string o = absl::StrFormat(
      "<svg class=\"plot\" data-plot=\"%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
      "role=\"img\" aria-label=\"%s\">\n<title>%s</title>\n",
      HtmlEscape(spec.kind), kW, kH, kW, kH, HtmlEscape(spec.title), HtmlEscape(spec.title));
  absl::StrAppend(&o, absl::StrFormat(
                          "<text x=\"%d\" y=\"20\" class=\"ptitle\">%s</text>\n"
                          "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" class=\"frame\"/>\n",
                          kLeft, HtmlEscape(spec.title), kLeft, kTop, pw, ph));
  AppendYGrid(ay, pw, py, &o);
  for (const auto& [v, label] : ax.ticks) {
    double x = px(v);
    absl::StrAppend(&o, absl::StrFormat("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%.1f\" "
                                        "class=\"grid\"/><text x=\"%.1f\" y=\"%.1f\" "
                                        "class=\"xtick\">%s</text>\n",
                                        x, x, kTop, kTop + ph, x, kTop + ph + 16, HtmlEscape(label)));
  }
  absl::StrAppend(&o, absl::StrFormat("<text x=\"%.1f\" y=\"%d\" class=\"xlabel\">%s</text>\n",
                                      kLeft + pw / 2, kH - 10, HtmlEscape(spec.x_label)));
  absl::StrAppend(&o, absl::StrFormat("<text x=\"16\" y=\"%.1f\" class=\"ylabel\" "
                                      "transform=\"rotate(-90 16 %.1f)\">%s</text>\n",
                                      kTop + ph / 2, kTop + ph / 2, HtmlEscape(spec.y_label)));
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
    absl::StrAppend(&o, absl::StrFormat("<g class=\"series\" data-series=\"%s\">\n", HtmlEscape(s.name)));
    absl::StrAppend(&o, absl::StrFormat("<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" "
                                        "stroke-width=\"2\"%s/>\n",
                                        absl::StrJoin(pts, " "), color,
                                        *dash ? absl::StrCat(" stroke-dasharray=\"", dash, "\"") : ""));
    for (size_t k = 0; k < s.ranges.size() && k < s.points.size(); ++k) {
      const double x = s.points[k].first;
      const auto [lo, hi] = s.ranges[k];
      if (!std::isfinite(lo) || !std::isfinite(hi) || (spec.log_y && lo <= 0)) continue;
      absl::StrAppend(&o, absl::StrFormat(
                              "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fh8M%.1f %.1fh8\" stroke=\"%s\" "
                              "fill=\"none\" class=\"whisker\"><title>%s: %s, min %.2f, max "
                              "%.2f</title></path>\n",
                              px(x), py(lo), py(hi), px(x) - 4, py(lo), px(x) - 4, py(hi), color,
                              HtmlEscape(s.name), TickText(x), lo, hi));
    }
    if (s.points.size() <= 64) {
      for (const auto& [x, y] : s.points) {
        if (!std::isfinite(y) || (spec.log_y && y <= 0) || (spec.log_x && x <= 0)) continue;
        absl::StrAppend(&o, absl::StrFormat("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\">"
                                            "<title>%s: %s, %s</title></circle>\n",
                                            px(x), py(y), color, HtmlEscape(s.name), TickText(x),
                                            absl::StrFormat("%.2f", y)));
      }
    }
    absl::StrAppend(&o, "</g>\n");
    double ly = kTop + 8 + 16.0 * static_cast<double>(i);
    if (ly < kH - 10) {
      absl::StrAppend(&o, absl::StrFormat(
                              "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                              "stroke-width=\"2\"%s/><text x=\"%.1f\" y=\"%.1f\" class=\"legend\">"
                              "<title>%s</title>%s</text>\n",
                              kLeft + pw + 10, kLeft + pw + 30, ly, ly, color,
                              *dash ? absl::StrCat(" stroke-dasharray=\"", dash, "\"") : "",
                              kLeft + pw + 34, ly + 4, HtmlEscape(s.name),
                              HtmlEscape(Shorten(s.name, kLegendChars))));
    } else if (ly - 16 < kH - 10) {
      absl::StrAppend(&o, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"legend\">"
                                          "... %u more</text>\n",
                                          kLeft + pw + 10, ly + 4,
                                          static_cast<unsigned>(series.size() - i)));
    }
  }
  absl::StrAppend(&o, "</svg>\n");
  return o;
}

std::string BarPlot(const BarPlotSpec& spec, const std::vector<BarGroup>& groups) {
  std::vector<double> ys;
  size_t most_bars = 1;
  for (const auto& g : groups) {
    most_bars = std::max(most_bars, g.bars.size());
    for (const auto& b : g.bars) ys.insert(ys.end(), {b.value, b.low, b.high});
  }
  Axis ay = MakeAxis(ys, false, 10, true, {});
  const int bar_w = 16;
  const int group_w = bar_w * static_cast<int>(most_bars) + 24;
  const int pw_needed = group_w * std::max<int>(1, static_cast<int>(groups.size()));
  const int w = std::max(kW, kLeft + pw_needed + kRight);
  const int h = kH + 40;
  const double pw = w - kLeft - kRight, ph = h - kTop - kBottom - 40;
  auto py = [&](double y) { return kTop + (1 - ay.Frac(y)) * ph; };
  std::string o = absl::StrFormat(
      "<svg class=\"plot\" data-plot=\"%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
      "role=\"img\" aria-label=\"%s\">\n<title>%s</title>\n"
      "<text x=\"%d\" y=\"20\" class=\"ptitle\">%s</text>\n"
      "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" class=\"frame\"/>\n",
      HtmlEscape(spec.kind), w, h, w, h, HtmlEscape(spec.title), HtmlEscape(spec.title), kLeft,
      HtmlEscape(spec.title), kLeft, kTop, pw, ph);
  AppendYGrid(ay, pw, py, &o);
  absl::StrAppend(&o, absl::StrFormat("<text x=\"16\" y=\"%.1f\" class=\"ylabel\" "
                                      "transform=\"rotate(-90 16 %.1f)\">%s</text>\n",
                                      kTop + ph / 2, kTop + ph / 2, HtmlEscape(spec.y_label)));
  if (groups.empty()) {
    absl::StrAppend(&o, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"nodata\">no data"
                                        "</text>\n",
                                        kLeft + pw / 2, kTop + ph / 2));
  }
  const double slot = groups.empty() ? pw : pw / static_cast<double>(groups.size());
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const BarGroup& g = groups[gi];
    const double cx = kLeft + slot * (static_cast<double>(gi) + 0.5);
    const double x0 = cx - bar_w * static_cast<double>(g.bars.size()) / 2;
    absl::StrAppend(&o, absl::StrFormat("<g class=\"group\" data-group=\"%s\">\n", HtmlEscape(g.label)));
    for (size_t k = 0; k < g.bars.size(); ++k) {
      const Bar& b = g.bars[k];
      const std::string name = b.series < spec.series.size() ? spec.series[b.series] : "";
      const char* color = kPalette[b.series % kPaletteSize];
      const double x = x0 + bar_w * static_cast<double>(k), mid = x + bar_w / 2.0;
      absl::StrAppend(&o, absl::StrFormat(
                              "<g class=\"series\" data-series=\"%s\"><rect x=\"%.1f\" "
                              "y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\" "
                              "fill-opacity=\"0.85\"><title>%s, %s: median %.2f, min %.2f, max "
                              "%.2f</title></rect>",
                              HtmlEscape(name), x + 1, py(b.value), bar_w - 2,
                              std::max(0.0, py(ay.lo) - py(b.value)), color, HtmlEscape(name),
                              HtmlEscape(g.label), b.value, b.low, b.high));
      absl::StrAppend(&o, absl::StrFormat("<path d=\"M%.1f %.1fV%.1fM%.1f %.1fh6M%.1f %.1fh6\" "
                                          "stroke=\"#222\" class=\"whisker\"/></g>\n",
                                          mid, py(b.low), py(b.high), mid - 3, py(b.low), mid - 3,
                                          py(b.high)));
    }
    const double ty = kTop + ph + 14;
    absl::StrAppend(&o, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"cat\" "
                                        "transform=\"rotate(-25 %.1f %.1f)\">%s</text>\n</g>\n",
                                        cx + 8, ty, cx + 8, ty, HtmlEscape(g.label)));
  }
  for (size_t i = 0; i < spec.series.size(); ++i) {
    const double ly = kTop + 8 + 16.0 * static_cast<double>(i);
    if (ly >= h - 10) break;
    absl::StrAppend(&o, absl::StrFormat("<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" "
                                        "fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" "
                                        "class=\"legend\"><title>%s</title>%s</text>\n",
                                        kLeft + pw + 10, ly - 5, kPalette[i % kPaletteSize],
                                        kLeft + pw + 30, ly + 4, HtmlEscape(spec.series[i]),
                                        HtmlEscape(Shorten(spec.series[i], kLegendChars))));
  }
  absl::StrAppend(&o, "</svg>\n");
  return o;
}

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
      w, h, w, h, HtmlEscape(title), HtmlEscape(title), kLeft, HtmlEscape(title), kLeft, kTop, pw, ph);
  AppendYGrid(ay, pw, py, &o);
  absl::StrAppend(&o, absl::StrFormat("<text x=\"16\" y=\"%.1f\" class=\"ylabel\" "
                                      "transform=\"rotate(-90 16 %.1f)\">MiB/s</text>\n",
                                      kTop + ph / 2, kTop + ph / 2));
  double slot = cats.empty() ? pw : pw / static_cast<double>(cats.size());
  for (size_t i = 0; i < cats.size(); ++i) {
    const auto& c = cats[i];
    const char* color = kPalette[c.color % kPaletteSize];
    double cx = kLeft + slot * (static_cast<double>(i) + 0.5);
    absl::StrAppend(&o, absl::StrFormat("<g class=\"series\" data-series=\"%s\">\n", HtmlEscape(c.full)));
    for (size_t k = 0; k < c.values.size(); ++k) {
      double jitter = c.values.size() > 1
                          ? (static_cast<double>(k) / static_cast<double>(c.values.size() - 1) - 0.5) * 10
                          : 0;
      absl::StrAppend(&o, absl::StrFormat("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\" "
                                          "fill-opacity=\"0.7\"><title>%s rep %u: %.2f MiB/s"
                                          "</title></circle>\n",
                                          cx + jitter, py(c.values[k]), color, HtmlEscape(c.full),
                                          static_cast<unsigned>(k), c.values[k]));
    }
    if (!c.values.empty()) {
      double m = Mean(c.values);
      absl::StrAppend(&o, absl::StrFormat("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                                          "stroke=\"%s\" stroke-width=\"2\"><title>%s mean: %.2f "
                                          "MiB/s</title></line>\n",
                                          cx - 12, cx + 12, py(m), py(m), color, HtmlEscape(c.full), m));
    }
    double ty = kTop + ph + 12;
    absl::StrAppend(&o, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"cat\" "
                                        "transform=\"rotate(-40 %.1f %.1f)\">%s</text>\n",
                                        cx, ty, cx, ty, HtmlEscape(c.label)));
    absl::StrAppend(&o, "</g>\n");
  }
  absl::StrAppend(&o, "</svg>\n");
  return o;
}

}  // namespace lockstep
