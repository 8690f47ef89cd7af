#include "controller/results/report_ai.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/plan/phase_kind.h"
#include "controller/results/compare.h"
#include "controller/results/svg_plot.h"
#include "controller/record/fold.h"

namespace lockstep {
namespace {

// A phase whose kind gives an AU figure (train) and that had accelerators:
// its samples/s and AU are plotted against their number.
bool AcceptedTrain(const v1::PhaseRecord& pr) {
  if (!Counts(pr) || !pr.has_ai() || pr.ai().accelerators() == 0) return false;
  for (const PhaseFigure& f : KindOf(pr.kind()).Figures(pr)) {
    if (f.metric == "au") return true;
  }
  return false;
}

// The values at one accelerator count of one line.
struct Point {
  std::vector<double> samples_per_s, au;
  double threshold = 0;
};

std::pair<double, double> Range(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return {*lo, *hi};
}

}  // namespace

std::vector<std::string> AiScalingFigures(const std::vector<v1::RunRecord>& runs) {
  // "plan: phase" -> accelerators -> values over every run, test and repetition.
  std::map<std::string, std::map<uint32_t, Point>> lines;
  for (const v1::RunRecord& run : runs) {
    for (const v1::TestRecord& test : run.tests()) {
      for (const v1::PhaseRecord& pr : test.phases()) {
        if (!AcceptedTrain(pr)) continue;
        Point& p = lines[absl::StrCat(run.name(), ": ", pr.phase())][pr.ai().accelerators()];
        p.samples_per_s.push_back(pr.ai().samples_per_s());
        p.au.push_back(pr.ai().au_mean() * 100);
        p.threshold = std::max(p.threshold, pr.ai().au_threshold() * 100);
      }
    }
  }
  bool spans = false;
  for (const auto& [name, by_count] : lines) spans = spans || by_count.size() >= 2;
  if (!spans) return {};
  std::vector<PlotSeries> sps, au;
  int style = 0;
  for (const auto& [name, by_count] : lines) {
    PlotSeries s{.name = name, .style = style}, a{.name = name + " AU", .style = style};
    PlotSeries threshold{.name = name + " threshold", .style = style + 1};
    for (const auto& [n, p] : by_count) {
      const double x = static_cast<double>(n);
      s.points.push_back({x, Median(p.samples_per_s)});
      s.ranges.push_back(Range(p.samples_per_s));
      a.points.push_back({x, Median(p.au)});
      a.ranges.push_back(Range(p.au));
      if (p.threshold > 0) threshold.points.push_back({x, p.threshold});
    }
    sps.push_back(std::move(s));
    au.push_back(std::move(a));
    if (!threshold.points.empty()) au.push_back(std::move(threshold));
    ++style;
  }
  PlotSpec spec;
  spec.title = "Training: samples/s vs accelerators (median over repetitions, min..max)";
  spec.x_label = "accelerators (all hosts)";
  spec.y_label = "samples/s";
  spec.x_from_zero = true;
  spec.kind = "ai-samples";
  PlotSpec au_spec = spec;
  au_spec.title = "Training: AU vs accelerators, and the AU threshold";
  au_spec.y_label = "AU (%)";
  au_spec.kind = "ai-au";
  return {LinePlot(spec, sps), LinePlot(au_spec, au)};
}

namespace {

// One line per host of one repetition: its AU at the end of each epoch.
void HostLines(const v1::PhaseRecord& pr, bool name_rep, std::vector<PlotSeries>* out) {
  int64_t start_ns = std::numeric_limits<int64_t>::max();
  for (const v1::AgentPhaseRecord& a : pr.agents()) {
    for (const v1::TaskResult& t : a.tasks()) {
      if (t.train().epochs_size() > 0) {
        start_ns = std::min(start_ns, t.train().epochs(0).start_unix_ns());
      }
    }
  }
  for (const v1::AgentPhaseRecord& a : pr.agents()) {
    std::map<uint32_t, std::pair<double, int>> epoch_au;  // epoch -> (Σ AU, accelerators)
    std::map<uint32_t, int64_t> epoch_stop;
    for (const v1::TaskResult& t : a.tasks()) {
      for (int e = 0; e < t.train().epochs_size(); ++e) {
        const v1::TrainEpoch& ep = t.train().epochs(e);
        if (ep.wall_ns() > 0) {
          epoch_au[e].first += std::min(1.0, static_cast<double>(ep.compute_ns()) /
                                                 static_cast<double>(ep.wall_ns()));
        }
        ++epoch_au[e].second;
        epoch_stop[e] = std::max(epoch_stop[e], ep.stop_unix_ns());
      }
    }
    if (epoch_au.empty()) continue;
    PlotSeries s;
    s.name = name_rep ? absl::StrFormat("rep %u %s", pr.repetition(), a.address()) : a.address();
    s.style = static_cast<int>(pr.repetition());
    for (const auto& [e, sum] : epoch_au) {
      s.points.push_back({static_cast<double>(epoch_stop[e] - start_ns) / 1e9,
                          100.0 * sum.first / sum.second});
    }
    out->push_back(std::move(s));
  }
}

}  // namespace

AuOverTime AuOverTimeFigures(const std::vector<v1::RunRecord>& runs,
                             const std::vector<std::string>& run_names) {
  AuOverTime out;
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const v1::TestRecord& test : runs[i].tests()) {
      std::map<std::string, std::vector<const v1::PhaseRecord*>> by_phase;
      for (const v1::PhaseRecord& pr : test.phases()) {
        if (AcceptedTrain(pr)) by_phase[pr.phase()].push_back(&pr);
      }
      for (const auto& [phase, reps] : by_phase) {
        if (reps.front()->ai().epoch_au_size() < 2) {
          ++out.single_epoch;
          continue;
        }
        std::vector<PlotSeries> series;
        for (const v1::PhaseRecord* pr : reps) HostLines(*pr, reps.size() > 1, &series);
        PlotSpec spec;
        spec.title = absl::StrFormat("AU per host over time, %s (at the end of each epoch)", phase);
        const std::string& name = i < run_names.size() ? run_names[i] : std::string();
        spec.subtitle = absl::StrCat(name.empty() ? "" : name + " ", "test ", test.test_id());
        spec.x_label = "seconds since the phase started";
        spec.x_from_zero = true;
        spec.y_label = "AU (%)";
        spec.kind = "ai-au-time";
        out.plots.push_back(LinePlot(spec, series));
      }
    }
  }
  return out;
}

}  // namespace lockstep
