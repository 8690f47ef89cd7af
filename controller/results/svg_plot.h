// SVG plots for the HTML report (report.cc): a line plot (bandwidth against
// tasks, throughput against time, latency percentiles) and a strip plot
// (per-repetition values with their mean). Each returns one <svg> element
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

// Series i is drawn in colour i (of 10) with dash pattern `style`; points
// that a log axis cannot show (<= 0) and non-finite values are left out.
// An empty plot says "no data".
std::string LinePlot(const PlotSpec& spec, const std::vector<PlotSeries>& series);

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
