#include "controller/results/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "controller/results/compare.h"

namespace lockstep {
namespace {

const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr int kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

const char* const kDashes[] = {"", "6 3", "2 3", "8 3 2 3"};

// Plot size and margins (the right one holds the legend), pixels.
constexpr int kW = 900, kH = 380, kLeft = 72, kRight = 300, kTop = 34, kBottom = 52;

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

// A line at most `max_chars` long: the middle cut out (both ends name things).
std::string Shorten(const std::string& s, size_t max_chars) {
  if (s.size() <= max_chars) return s;
  const size_t head = (max_chars - 3) / 3;
  return s.substr(0, head) + "..." + s.substr(s.size() - (max_chars - 3 - head));
}

constexpr size_t kLegendChars = 40;  // per line, in the legend's 300 px at 11 px
constexpr int kLegendLines = 3;      // per entry

// `text` broken at spaces into lines of at most `max_chars`, at most
// `max_lines` of them (the last shortened).
std::vector<std::string> Wrap(const std::string& text, size_t max_chars, int max_lines) {
  std::vector<std::string> lines;
  std::string line;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!line.empty() && line.size() + 1 + word.size() > max_chars &&
        static_cast<int>(lines.size()) < max_lines - 1) {
      lines.push_back(line);
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  for (std::string& l : lines) l = Shorten(l, max_chars);
  return lines;
}

// <text> lines at x, the first at y, `step` apart; `anchor` a CSS class.
std::string TextLines(const std::vector<std::string>& lines, double x, double y, double step,
                      const char* cls, const std::string& tooltip) {
  std::string o = absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"%s\"><title>%s</title>", x,
                                  y, cls, HtmlEscape(tooltip));
  for (size_t i = 0; i < lines.size(); ++i) {
    absl::StrAppend(&o, absl::StrFormat("<tspan x=\"%.1f\" dy=\"%.1f\">%s</tspan>", x,
                                        i == 0 ? 0.0 : step, HtmlEscape(lines[i])));
  }
  return o + "</text>\n";
}

// One legend entry: a swatch (line or box) and its name.
struct LegendEntry {
  std::string name;
  const char* color;
  const char* dash;  // "" solid; nullptr: a box (bars)
};

// The legend in the column right of the plot, from y `top` down to
// `bottom`; the entries that do not fit are counted.
void AppendLegend(const std::vector<LegendEntry>& entries, double x, double top, double bottom,
                  std::string* o) {
  double y = top + 8;
  for (size_t i = 0; i < entries.size(); ++i) {
    const LegendEntry& e = entries[i];
    const std::vector<std::string> lines = Wrap(e.name, kLegendChars, kLegendLines);
    const double height = 13.0 * static_cast<double>(lines.size()) + 4;
    if (y + height > bottom) {
      absl::StrAppend(o, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"legend\">... %u "
                                         "more</text>\n",
                                         x, y + 4, static_cast<unsigned>(entries.size() - i)));
      return;
    }
    if (e.dash == nullptr) {
      absl::StrAppend(o, absl::StrFormat("<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" "
                                         "fill=\"%s\"/>\n",
                                         x, y - 5, e.color));
    } else {
      absl::StrAppend(o, absl::StrFormat("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                                         "stroke=\"%s\" stroke-width=\"2\"%s/>\n",
                                         x, x + 20, y, y, e.color,
                                         *e.dash ? absl::StrCat(" stroke-dasharray=\"", e.dash, "\"")
                                                 : ""));
    }
    absl::StrAppend(o, TextLines(lines, x + 24, y + 4, 13, "legend", e.name));
    y += height;
  }
}

// The <svg> element's start: its title (a subtitle under it when given)
// and the frame of the plot area.
std::string PlotStart(const std::string& kind, int w, int h, const std::string& title,
                      const std::string& subtitle, int top, double pw, double ph) {
  std::string o = absl::StrFormat(
      "<svg class=\"plot\" data-plot=\"%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
      "role=\"img\" aria-label=\"%s\">\n<title>%s</title>\n"
      "<text x=\"%d\" y=\"20\" class=\"ptitle\">%s</text>\n",
      HtmlEscape(kind), w, h, w, h, HtmlEscape(title), HtmlEscape(title), kLeft,
      HtmlEscape(title));
  if (!subtitle.empty()) {
    absl::StrAppend(&o, absl::StrFormat("<text x=\"%d\" y=\"36\" class=\"psub\">%s</text>\n",
                                        kLeft, HtmlEscape(subtitle)));
  }
  absl::StrAppend(&o, absl::StrFormat("<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" "
                                      "class=\"frame\"/>\n",
                                      kLeft, top, pw, ph));
  return o;
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
  Axis ax = MakeAxis(xs, spec.log_x, spec.log_x_base, spec.x_from_zero && !spec.log_x,
                     spec.x_ticks);
  Axis ay = MakeAxis(ys, spec.log_y, 10, spec.y_from_zero && !spec.log_y, {});
  if (spec.y_unit == "us") {
    for (auto& [v, label] : ay.ticks) label = DurationTick(v);
  }
  const int top = spec.subtitle.empty() ? kTop : kTop + 14;
  const double pw = kW - kLeft - kRight, ph = kH - top - kBottom;
  auto px = [&](double x) { return kLeft + ax.Frac(x) * pw; };
  auto py = [&](double y) { return top + (1 - ay.Frac(y)) * ph; };
  std::string o = PlotStart(spec.kind, kW, kH, spec.title, spec.subtitle, top, pw, ph);
  AppendYGrid(ay, pw, py, &o);
  for (const auto& [v, label] : ax.ticks) {
    double x = px(v);
    absl::StrAppend(&o, absl::StrFormat("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%.1f\" "
                                        "class=\"grid\"/><text x=\"%.1f\" y=\"%.1f\" "
                                        "class=\"xtick\">%s</text>\n",
                                        x, x, top, top + ph, x, top + ph + 16, HtmlEscape(label)));
  }
  absl::StrAppend(&o, absl::StrFormat("<text x=\"%.1f\" y=\"%d\" class=\"xlabel\">%s</text>\n",
                                      kLeft + pw / 2, kH - 10, HtmlEscape(spec.x_label)));
  absl::StrAppend(&o, absl::StrFormat("<text x=\"16\" y=\"%.1f\" class=\"ylabel\" "
                                      "transform=\"rotate(-90 16 %.1f)\">%s</text>\n",
                                      top + ph / 2, top + ph / 2, HtmlEscape(spec.y_label)));
  if (series.empty() || xs.empty()) {
    absl::StrAppend(&o, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"nodata\">no data"
                                        "</text>\n",
                                        kLeft + pw / 2, top + ph / 2));
  }
  auto drawn = [&](double x, double y) {
    return std::isfinite(y) && !(spec.log_y && y <= 0) && !(spec.log_x && x <= 0);
  };
  std::vector<LegendEntry> legend;
  for (size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i];
    const char* color = kPalette[i % kPaletteSize];
    const char* dash = kDashes[s.style % 4];
    legend.push_back({s.name, color, dash});
    std::vector<std::string> pts;
    for (const auto& [x, y] : s.points) {
      if (drawn(x, y)) pts.push_back(absl::StrFormat("%.1f,%.1f", px(x), py(y)));
    }
    absl::StrAppend(&o, absl::StrFormat("<g class=\"series\" data-series=\"%s\">\n", HtmlEscape(s.name)));
    absl::StrAppend(&o, absl::StrFormat("<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" "
                                        "stroke-width=\"2\"%s/>\n",
                                        absl::StrJoin(pts, " "), color,
                                        *dash ? absl::StrCat(" stroke-dasharray=\"", dash, "\"") : ""));
    for (size_t k = 0; k < s.ranges.size() && k < s.points.size(); ++k) {
      const double x = s.points[k].first;
      const auto [lo, hi] = s.ranges[k];
      if (!drawn(x, lo) || !drawn(x, hi)) continue;
      absl::StrAppend(&o, absl::StrFormat(
                              "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fh8M%.1f %.1fh8\" stroke=\"%s\" "
                              "fill=\"none\" class=\"whisker\"><title>%s: %s, min %.2f, max "
                              "%.2f</title></path>\n",
                              px(x), py(lo), py(hi), px(x) - 4, py(lo), px(x) - 4, py(hi), color,
                              HtmlEscape(s.name), TickText(x), lo, hi));
    }
    if (s.points.size() <= 64) {
      for (const auto& [x, y] : s.points) {
        if (!drawn(x, y)) continue;
        absl::StrAppend(&o, absl::StrFormat("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\">"
                                            "<title>%s: %s, %.2f</title></circle>\n",
                                            px(x), py(y), color, HtmlEscape(s.name), TickText(x), y));
      }
    }
    absl::StrAppend(&o, "</g>\n");
  }
  AppendLegend(legend, kLeft + pw + 10, top, kH - 6, &o);
  absl::StrAppend(&o, "</svg>\n");
  return o;
}

std::string BarPlot(const BarPlotSpec& spec, const std::vector<BarGroup>& groups) {
  std::vector<double> ys;
  size_t most_bars = 1, longest_word = 0, most_lines = 1;
  for (const auto& g : groups) {
    most_bars = std::max(most_bars, g.bars.size());
    for (const auto& b : g.bars) ys.insert(ys.end(), {b.value, b.low, b.high});
    for (absl::string_view word : absl::StrSplit(g.label, ' ')) {
      longest_word = std::max(longest_word, word.size());
    }
    most_lines = std::max(most_lines, Wrap(g.label, 24, 4).size());
  }
  Axis ay = MakeAxis(ys, false, 10, true, {});
  const int bar_w = 16;
  // Each group as wide as its bars and its label's lines (6.5 px a character).
  const int group_w = std::max(bar_w * static_cast<int>(most_bars),
                               static_cast<int>(std::min<size_t>(longest_word, 24) * 6.5)) + 24;
  const int w = std::max(kW, kLeft + group_w * std::max<int>(1, static_cast<int>(groups.size())) + kRight);
  const int label_h = 14 * static_cast<int>(most_lines) + 8;
  const int h = kH - kBottom + label_h + 10;
  const double pw = w - kLeft - kRight, ph = kH - kTop - kBottom;
  auto py = [&](double y) { return kTop + (1 - ay.Frac(y)) * ph; };
  std::string o = PlotStart(spec.kind, w, h, spec.title, "", kTop, pw, ph);
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
      const double x = x0 + bar_w * static_cast<double>(k), mid = x + bar_w / 2.0;
      absl::StrAppend(&o, absl::StrFormat(
                              "<g class=\"series\" data-series=\"%s\"><rect x=\"%.1f\" "
                              "y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\" "
                              "fill-opacity=\"0.85\"><title>%s, %s: median %.2f, min %.2f, max "
                              "%.2f</title></rect>",
                              HtmlEscape(name), x + 1, py(b.value), bar_w - 2,
                              std::max(0.0, py(ay.lo) - py(b.value)),
                              kPalette[b.series % kPaletteSize], HtmlEscape(name),
                              HtmlEscape(g.label), b.value, b.low, b.high));
      absl::StrAppend(&o, absl::StrFormat("<path d=\"M%.1f %.1fV%.1fM%.1f %.1fh6M%.1f %.1fh6\" "
                                          "stroke=\"#222\" class=\"whisker\"/></g>\n",
                                          mid, py(b.low), py(b.high), mid - 3, py(b.low), mid - 3,
                                          py(b.high)));
    }
    absl::StrAppend(&o, TextLines(Wrap(g.label, 24, 4), cx, kTop + ph + 16, 14, "gcat", g.label),
                    "</g>\n");
  }
  std::vector<LegendEntry> legend;
  for (size_t i = 0; i < spec.series.size(); ++i) {
    legend.push_back({spec.series[i], kPalette[i % kPaletteSize], nullptr});
  }
  AppendLegend(legend, kLeft + pw + 10, kTop, h - 6, &o);
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
