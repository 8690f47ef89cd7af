#include "controller/results/report_figures.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/sizes.h"
#include "controller/plan/sweep.h"
#include "controller/results/compare.h"
#include "controller/results/report_labels.h"
#include "controller/results/svg_plot.h"
#include "controller/record/fold.h"

namespace lockstep {
namespace {

// ---- units ---------------------------------------------------------------------

// MiB/s, or GiB/s once the largest value passes 10 GiB/s.
struct Throughput {
  double divisor = 1;
  const char* unit = "MiB/s";
};

Throughput ThroughputFor(double max_mib) {
  if (max_mib >= 10240) return {1024, "GiB/s"};
  return {};
}

// ---- what a result is ------------------------------------------------------------


struct Stats {
  double median = 0, min = 0, max = 0;
};

Stats StatsOf(const v1::SummaryRow& r) {
  std::vector<double> v = RepValues(r);
  Stats s;
  s.median = Median(v);
  s.min = v.empty() ? 0 : *std::min_element(v.begin(), v.end());
  s.max = v.empty() ? 0 : *std::max_element(v.begin(), v.end());
  return s;
}

// The runs of each plan, plans in order of first appearance.
std::vector<std::pair<std::string, std::vector<const v1::RunRecord*>>> ByPlan(
    const std::vector<v1::RunRecord>& runs) {
  std::vector<std::pair<std::string, std::vector<const v1::RunRecord*>>> out;
  for (const v1::RunRecord& r : runs) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == r.name(); });
    if (it == out.end()) it = out.insert(out.end(), {r.name(), {}});
    it->second.push_back(&r);
  }
  return out;
}

// True when the plan's tests differ in tasks only (or not at all) and in
// more than one task count: the throughput-vs-tasks figure.
bool SweepsTasksOnly(const std::vector<const v1::RunRecord*>& runs) {
  std::set<uint32_t> tasks;
  for (const v1::RunRecord* r : runs) {
    for (const auto& t : r->tests()) {
      for (const auto& v : t.sweep()) {
        // The node count and a per-task block that keeps the aggregate (seed
        // 000: 60g on 1 task, 20g on 3) go with the task count.
        if (v.key() != "tasks_per_agent" && v.key() != "client_agents" &&
            v.key() != "block_size") {
          return false;
        }
      }
      for (const auto& row : t.summary()) tasks.insert(row.num_tasks());
    }
  }
  return tasks.size() > 1;
}

double MaxOf(const std::vector<const v1::RunRecord*>& runs) {
  double mx = 0;
  for (const v1::RunRecord* r : runs) {
    for (const auto& t : r->tests()) {
      for (const auto& row : t.summary()) mx = std::max(mx, StatsOf(row).max);
    }
  }
  return mx;
}

// "write", or "<run name> write" when several runs are shown.
std::string SeriesName(const std::string& run_name, const std::string& what) {
  return run_name.empty() ? what : absl::StrCat(run_name, " ", what);
}

// ---- the plan's figure -----------------------------------------------------------

// Throughput against total tasks, the task counts evenly spaced (as the
// seed reports' figures): one line per run and operation shape.
std::string TasksFigure(const std::string& plan, const std::vector<const v1::RunRecord*>& runs,
                        const std::vector<std::string>& names) {
  // op, xfer, block, segs, fpp; the block is left out (0): it may shrink as
  // the tasks grow (total_size, seed 001; a block_size list, seed 000).
  using Shape = std::tuple<std::string, uint64_t, uint64_t, uint64_t, bool>;
  std::set<uint32_t> tasks;
  std::map<std::string, std::set<Shape>> shapes;  // op -> shapes
  for (const v1::RunRecord* r : runs) {
    for (const auto& t : r->tests()) {
      for (const auto& row : t.summary()) {
        tasks.insert(row.num_tasks());
        shapes[OperationName(row)].insert(
            {OperationName(row), row.transfer_bytes(), uint64_t{0}, row.segments(),
             row.file_per_process()});
      }
    }
  }
  std::map<uint32_t, double> x_of;
  PlotSpec spec;
  for (uint32_t n : tasks) {
    const double x = static_cast<double>(x_of.size());
    x_of[n] = x;
    spec.x_ticks.push_back({x, absl::StrCat(n)});
  }
  const Throughput unit = ThroughputFor(MaxOf(runs));
  std::vector<PlotSeries> series;
  for (size_t i = 0; i < runs.size(); ++i) {
    // Shapes in plan order (write before read), each with its points.
    std::vector<std::pair<Shape, std::map<uint32_t, Stats>>> pts;
    for (const auto& t : runs[i]->tests()) {
      for (const auto& row : t.summary()) {
        const Shape shape{OperationName(row), row.transfer_bytes(), uint64_t{0},
                          row.segments(), row.file_per_process()};
        auto it = std::find_if(pts.begin(), pts.end(), [&](const auto& p) { return p.first == shape; });
        if (it == pts.end()) it = pts.insert(pts.end(), {shape, {}});
        it->second.emplace(row.num_tasks(), StatsOf(row));
      }
    }
    for (const auto& [shape, by_tasks] : pts) {
      const auto& [op, xfer, block_unused, segs, fpp] = shape;
      PlotSeries s;
      s.name = SeriesName(names[i], op);
      if (shapes[op].size() > 1) {
        absl::StrAppend(&s.name, " xfer=", HumanBytes(xfer), " segments=", segs,
                        fpp ? " fpp" : "");
      }
      s.style = static_cast<int>(i);
      for (const auto& [n, st] : by_tasks) {
        s.points.push_back({x_of[n], st.median / unit.divisor});
        s.ranges.push_back({st.min / unit.divisor, st.max / unit.divisor});
      }
      series.push_back(std::move(s));
    }
  }
  spec.title = absl::StrFormat("%s: throughput vs tasks (median over repetitions, min..max)", plan);
  spec.x_label = "tasks (all agents)";
  spec.y_label = unit.unit;
  spec.kind = "scaling";
  return LinePlot(spec, series);
}

// A bar per configuration (sweep point), run and operation.
std::string ConfigFigure(const std::string& plan, const std::vector<const v1::RunRecord*>& runs,
                         const std::vector<std::string>& names) {
  const Throughput unit = ThroughputFor(MaxOf(runs));
  BarPlotSpec spec;
  std::vector<BarGroup> groups;
  auto index_of = [](auto& list, const std::string& name, auto make) -> size_t {
    for (size_t i = 0; i < list.size(); ++i) {
      if (make(list[i]) == name) return i;
    }
    return list.size();
  };
  for (size_t i = 0; i < runs.size(); ++i) {
    const v1::RunRecord* r = runs[i];
    for (const auto& t : r->tests()) {
      const std::string label = TestName(*r, t);
      size_t g = index_of(groups, label, [](const BarGroup& b) { return b.label; });
      if (g == groups.size()) groups.push_back({label, {}});
      for (const auto& row : t.summary()) {
        const std::string name = SeriesName(names[i], OperationName(row));
        size_t s = index_of(spec.series, name, [](const std::string& n) { return n; });
        if (s == spec.series.size()) spec.series.push_back(name);
        const Stats st = StatsOf(row);
        groups[g].bars.push_back(
            {s, st.median / unit.divisor, st.min / unit.divisor, st.max / unit.divisor});
      }
    }
  }
  for (BarGroup& g : groups) {
    std::stable_sort(g.bars.begin(), g.bars.end(),
                     [](const Bar& a, const Bar& b) { return a.series < b.series; });
  }
  spec.title = absl::StrFormat("%s: throughput per configuration (median over repetitions, "
                               "whiskers min..max)",
                               plan);
  spec.y_label = unit.unit;
  return BarPlot(spec, groups);
}

// ---- time series -----------------------------------------------------------------

// The accepted attempts of `phase` in `test`, by repetition.
std::vector<const v1::PhaseRecord*> Accepted(const v1::TestRecord& test, const std::string& phase) {
  std::vector<const v1::PhaseRecord*> out;
  for (const auto& ph : test.phases()) {
    if (ph.phase() == phase && Counts(ph)) out.push_back(&ph);
  }
  return out;
}

constexpr int kMaxAgentLines = 4;

// One line per repetition and agent, or per repetition (agents summed).
std::vector<PlotSeries> RepetitionSeries(const std::vector<const v1::PhaseRecord*>& reps,
                                         double divisor) {
  std::vector<PlotSeries> out;
  for (const v1::PhaseRecord* ph : reps) {
    std::vector<const v1::AgentPhaseRecord*> agents;
    for (const auto& a : ph->agents()) {
      if (a.series_bytes_size() > 0 && a.series_interval_ms() > 0) agents.push_back(&a);
    }
    if (agents.empty()) continue;
    const bool per_agent = agents.size() <= kMaxAgentLines;
    std::map<int, double> summed;  // interval -> bytes
    for (const v1::AgentPhaseRecord* a : agents) {
      const double dt = a->series_interval_ms() / 1000.0;
      PlotSeries s;
      s.name = absl::StrFormat("rep %u %s", ph->repetition(), a->address());
      s.style = static_cast<int>(ph->repetition());
      for (int k = 0; k < a->series_bytes_size(); ++k) {
        const double mib_s = static_cast<double>(a->series_bytes(k)) / dt / 1048576.0;
        s.points.push_back({dt * (k + 1), mib_s / divisor});
        summed[k] += mib_s / divisor;
      }
      if (per_agent) out.push_back(std::move(s));
    }
    if (!per_agent) {
      const double dt = agents.front()->series_interval_ms() / 1000.0;
      PlotSeries s;
      s.name = absl::StrFormat("rep %u (%u agents)", ph->repetition(), agents.size());
      s.style = static_cast<int>(ph->repetition());
      for (const auto& [k, v] : summed) s.points.push_back({dt * (k + 1), v});
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::string TestLabel(const v1::TestRecord& t) {
  std::string ran = RanLabel(t);
  return absl::StrFormat("test %u (%u tasks%s)", t.test_id(), t.total_tasks(),
                         ran.empty() ? "" : ", " + ran);
}

// The most samples any agent recorded for one repetition of `phase`.
int MostSamples(const std::vector<const v1::PhaseRecord*>& reps) {
  int most = 0;
  for (const v1::PhaseRecord* ph : reps) {
    for (const auto& a : ph->agents()) {
      if (a.series_interval_ms() > 0) most = std::max(most, a.series_bytes_size());
    }
  }
  return most;
}

}  // namespace

std::vector<std::string> PlanFigures(const std::vector<v1::RunRecord>& runs,
                                     const std::vector<std::string>& run_names) {
  std::vector<std::string> out;
  for (const auto& [plan, list] : ByPlan(runs)) {
    std::vector<std::string> names;
    for (const v1::RunRecord* r : list) {
      const size_t i = static_cast<size_t>(r - runs.data());
      names.push_back(i < run_names.size() ? run_names[i] : std::string());
    }
    out.push_back(SweepsTasksOnly(list) ? TasksFigure(plan, list, names)
                                        : ConfigFigure(plan, list, names));
  }
  return out;
}

TimeSeriesPlots TimeSeriesFigures(const std::vector<v1::RunRecord>& runs,
                                  const std::vector<std::string>& run_names,
                                  const TimeSeriesOptions& options) {
  TimeSeriesPlots out;
  for (size_t i = 0; i < runs.size(); ++i) {
    const v1::RunRecord& run = runs[i];
    for (const auto& t : run.tests()) {
      std::vector<std::string> phases;  // in order, once each
      for (const auto& ph : t.phases()) {
        if (std::find(phases.begin(), phases.end(), ph.phase()) == phases.end()) {
          phases.push_back(ph.phase());
        }
      }
      for (const std::string& phase : phases) {
        const auto reps = Accepted(t, phase);
        const int samples = MostSamples(reps);
        if (samples == 0) continue;
        if (samples < options.min_samples) {
          ++out.too_short;
          continue;
        }
        double mx = 0;
        for (const v1::PhaseRecord* ph : reps) {
          for (const auto& a : ph->agents()) {
            const double dt = a.series_interval_ms() / 1000.0;
            for (uint64_t b : a.series_bytes()) {
              if (dt > 0) mx = std::max(mx, static_cast<double>(b) / dt / 1048576.0);
            }
          }
        }
        const Throughput unit = ThroughputFor(mx);
        std::vector<PlotSeries> series = RepetitionSeries(reps, unit.divisor);
        if (series.empty()) continue;
        if (static_cast<int>(out.plots.size()) >= options.max_plots) {
          ++out.omitted;
          continue;
        }
        PlotSpec spec;
        spec.title = absl::StrFormat("Throughput over time, %s: every repetition", phase);
        const std::string& name = i < run_names.size() ? run_names[i] : std::string();
        spec.subtitle = SeriesName(name, TestLabel(t));
        spec.x_label = "seconds since the phase started";
        spec.x_from_zero = true;
        spec.y_label = unit.unit;
        spec.kind = "timeseries";
        out.plots.push_back(LinePlot(spec, series));
      }
    }
  }
  return out;
}

LatencyHistogram MergedLatency(const v1::TestRecord& test, const std::string& phase) {
  LatencyHistogram h;
  for (const v1::PhaseRecord* ph : Accepted(test, phase)) {
    for (const auto& a : ph->agents()) {
      for (const auto& task : a.tasks()) {
        if (task.has_latency()) h.MergeProto(task.latency());
      }
    }
  }
  return h;
}

std::vector<std::string> LatencyPlots(const std::vector<v1::RunRecord>& runs,
                                      const std::vector<std::string>& run_names) {
  std::map<std::string, std::vector<PlotSeries>> by_phase;
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& t : runs[i].tests()) {
      std::set<std::string> phases;
      for (const auto& ph : t.phases()) phases.insert(ph.phase());
      for (const std::string& phase : phases) {
        const LatencyHistogram h = MergedLatency(t, phase);
        if (h.count() == 0) continue;
        PlotSeries s;
        s.name = SeriesName(i < run_names.size() ? run_names[i] : std::string(), TestLabel(t));
        s.style = static_cast<int>(i);
        const double q[] = {0.5, 0.9, 0.99, 0.999};
        for (int k = 0; k < 4; ++k) {
          s.points.push_back({k + 1.0, static_cast<double>(h.Quantile(q[k])) / 1e3});
        }
        s.points.push_back({5.0, static_cast<double>(h.max()) / 1e3});
        by_phase[phase].push_back(std::move(s));
      }
    }
  }
  std::vector<std::string> out;
  for (const auto& [phase, series] : by_phase) {
    PlotSpec spec;
    spec.title = absl::StrFormat("Latency of one operation, %s (merged over tasks, agents and "
                                 "repetitions)",
                                 phase);
    spec.x_label = "percentile";
    spec.y_label = "latency (log)";
    spec.log_y = true;
    spec.y_unit = "us";
    spec.x_ticks = {{1, "p50"}, {2, "p90"}, {3, "p99"}, {4, "p99.9"}, {5, "max"}};
    spec.kind = "latency";
    out.push_back(LinePlot(spec, series));
  }
  return out;
}

std::vector<std::string> LayersFigures(const std::vector<v1::RunRecord>& runs,
                                       const std::vector<std::string>& run_names) {
  std::vector<std::string> out;
  for (size_t i = 0; i < runs.size(); ++i) {
    // By end-to-end phase: its rows, one per test (client count, sweep point).
    std::map<std::string, std::vector<const v1::LayerRow*>> by_phase;
    for (const v1::TestRecord& t : runs[i].tests()) {
      for (const v1::LayerRow& row : t.layers()) by_phase[row.phase()].push_back(&row);
    }
    const std::string run = i < run_names.size() ? run_names[i] : runs[i].run_id();
    for (const auto& [phase, rows] : by_phase) {
      BarPlotSpec bars;
      bars.title = absl::StrFormat("Layers of %s \"%s\" (%s): end to end beside the network and "
                                   "the back end",
                                   rows[0]->access(), phase, run);
      bars.y_label = "MiB/s";
      bars.series = {"end to end", "network", "back end"};
      bars.kind = "layers";
      PlotSeries efficiency;
      efficiency.name = absl::StrFormat("efficiency of %s \"%s\"", rows[0]->access(), phase);
      std::vector<BarGroup> groups;
      for (const v1::LayerRow* r : rows) {
        BarGroup g;
        g.label = absl::StrFormat("%u clients", r->client_agents());
        const std::pair<double, double> figures[] = {
            {r->end_to_end_mib(), r->end_to_end_spread_mib()},
            {r->net_mib(), r->net_spread_mib()},
            {r->backend_mib(), r->backend_spread_mib()}};
        for (size_t k = 0; k < 3; ++k) {
          if (figures[k].first <= 0) continue;  // a layer not measured: no bar
          g.bars.push_back({.series = k, .value = figures[k].first,
                            .low = figures[k].first - figures[k].second / 2,
                            .high = figures[k].first + figures[k].second / 2});
        }
        groups.push_back(std::move(g));
        if (r->efficiency() > 0) {
          efficiency.points.push_back({static_cast<double>(r->client_agents()), 100 * r->efficiency()});
          efficiency.ranges.push_back({100 * (r->efficiency() - r->efficiency_spread() / 2),
                                       100 * (r->efficiency() + r->efficiency_spread() / 2)});
        }
      }
      out.push_back(BarPlot(bars, groups));
      if (efficiency.points.empty()) continue;
      PlotSpec line;
      line.title = absl::StrFormat("Efficiency of %s \"%s\" (%s): end to end / min(network, back "
                                   "end)",
                                   rows[0]->access(), phase, run);
      line.x_label = "client agents";
      line.y_label = "efficiency (%)";
      line.kind = "efficiency";
      line.x_from_zero = true;
      out.push_back(LinePlot(line, {efficiency}));
    }
  }
  return out;
}

}  // namespace lockstep
