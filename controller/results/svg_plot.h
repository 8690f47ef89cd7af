// SVG plots for the HTML report (report.cc, report_figures.cc): a line plot
// (throughput against tasks, throughput against time, latency percentiles),
// a bar plot (a bar per configuration and series, with whiskers) and a strip
// plot (per-repetition values with their mean). Each returns one <svg> element
// with its title, axes, grid and legend; data-plot and data-series
// attributes name what it shows. No JavaScript, no external resources.
#ifndef LOCKSTEP_CONTROLLER_RESULTS_SVG_PLOT_H_
#define LOCKSTEP_CONTROLLER_RESULTS_SVG_PLOT_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lockstep {

struct PlotSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;
  // Empty, or one (low, high) per point: drawn as a whisker at its x.
  std::vector<std::pair<double, double>> ranges;
  int style = 0;  // dash index, for runs overlaid
};

struct PlotSpec {
  std::string title, x_label, y_label;
  std::string subtitle;  // a second, smaller line under the title ("" none)
  bool x_from_zero = false;
  bool log_x = false, log_y = false;
  double log_x_base = 2;
  bool y_from_zero = true;
  std::vector<std::pair<double, std::string>> x_ticks;  // categorical x
  std::string kind;  // data-plot attribute: "scaling", "timeseries", "latency"
  // "us": y ticks as durations ("500 us", "2 ms", "1 s"); "": plain numbers.
  std::string y_unit;
};

// Series i is drawn in colour i (of 10) with dash pattern `style`; points
// that a log axis cannot show (<= 0) and non-finite values are left out.
// An empty plot says "no data". Legend names are wrapped at spaces (up to
// 3 lines of 40 characters, the middle of a longer line cut out; the full
// name is the tooltip); entries that do not fit are counted.
std::string LinePlot(const PlotSpec& spec, const std::vector<PlotSeries>& series);

// A bar plot: one group per configuration (a sweep point), in it one bar
// per series (a run and operation) at `value` with a whisker from `low` to
// `high`. Series i is drawn in colour i and named in the legend.
struct Bar {
  size_t series = 0;          // index into BarPlotSpec::series
  double value = 0, low = 0, high = 0;
};
struct BarGroup {
  std::string label;          // under the axis ("stripe_size=64k")
  std::vector<Bar> bars;
};
struct BarPlotSpec {
  std::string title, y_label;
  std::vector<std::string> series;  // legend names
  std::string kind = "bars";        // data-plot attribute
};
std::string BarPlot(const BarPlotSpec& spec, const std::vector<BarGroup>& groups);

struct StripCategory {
  std::string label;      // short, under the axis
  std::string full;       // tooltip
  std::vector<double> values;
  int color = 0;
};

// One column of dots per category (values in MiB/s) and a bar at its mean.
std::string StripPlot(const std::string& title, const std::vector<StripCategory>& cats);

// Text escaped for HTML and SVG (& < > " ').
std::string HtmlEscape(std::string_view s);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_SVG_PLOT_H_
