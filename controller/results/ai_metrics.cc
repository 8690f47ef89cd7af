#include "controller/results/ai_metrics.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/record/layers.h"
#include "controller/plan/phase_kind.h"
#include "controller/record/fold.h"

namespace lockstep {

const std::vector<AiMetricDef>& AiMetricDefs() {
  static const std::vector<AiMetricDef> defs = {
      {"au", "%", false},
      {"au_min", "%", false},
      {"au_host_min", "%", false},
      {"samples_per_s", "samples/s", false},
      {"checkpoint_write_min_mib_per_s", "MiB/s", false},
      {"checkpoint_write_aggregate_mib_per_s", "MiB/s", false},
      {"checkpoint_write_max_duration_s", "s", true},
      {"checkpoint_read_min_mib_per_s", "MiB/s", false},
      {"checkpoint_read_aggregate_mib_per_s", "MiB/s", false},
      {"checkpoint_read_max_duration_s", "s", true},
      {"efficiency", "%", false},
  };
  return defs;
}

const AiMetricDef* FindAiMetric(std::string_view name) {
  for (const AiMetricDef& d : AiMetricDefs()) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

std::string AiMetricNames() {
  std::vector<std::string> names;
  for (const AiMetricDef& d : AiMetricDefs()) names.push_back(d.name);
  return absl::StrJoin(names, ", ");
}

namespace {

bool Accepted(const v1::PhaseRecord& pr) {
  return Counts(pr) && pr.has_ai();
}

}  // namespace

std::vector<AiMetric> AiMetricsOf(const v1::RunRecord& run) {
  std::vector<AiMetric> out;
  for (const v1::TestRecord& test : run.tests()) {
    for (const v1::SummaryRow& row : test.summary()) {
      std::vector<AiMetric> metrics;
      for (const v1::PhaseRecord& pr : test.phases()) {
        if (pr.phase() != row.phase() || !Accepted(pr)) continue;
        const std::vector<PhaseFigure> figures = KindOf(pr.kind()).Figures(pr);
        if (metrics.empty()) {
          for (const PhaseFigure& f : figures) {
            AiMetric& m = metrics.emplace_back();
            m.key = KeyOf(row, test);
            m.metric = f.metric;
          }
        }
        for (size_t i = 0; i < figures.size() && i < metrics.size(); ++i) {
          AiMetric& m = metrics[i];
          m.values.push_back(figures[i].value);
          if (figures[i].threshold > 0) {
            m.threshold = figures[i].threshold;
            m.passed = m.passed == 0 ? 0 : (figures[i].passed ? 1 : 0);
          }
        }
      }
      for (AiMetric& m : metrics) out.push_back(std::move(m));
      // Layered baselines (issue 42): a write or read beside its lower layers.
      if (std::vector<double> eff = EfficienciesOf(test, row.phase()); !eff.empty()) {
        AiMetric& m = out.emplace_back();
        m.key = KeyOf(row, test);
        m.metric = "efficiency";
        m.values = std::move(eff);
      }
    }
  }
  return out;
}

namespace {

struct PooledMetric {
  AiMetric metric;
  bool judged = false;
};

// (key text, metric) -> every value of the group; passed: 0 when any run's
// failed, 1 when every judged run passed.
std::map<std::pair<ResultKey, std::string>, PooledMetric> Pool(
    const std::vector<v1::RunRecord>& group) {
  std::map<std::pair<ResultKey, std::string>, PooledMetric> out;
  for (const v1::RunRecord& run : group) {
    std::set<std::pair<ResultKey, std::string>> seen;
    for (AiMetric& m : AiMetricsOf(run)) {
      auto id = std::make_pair(m.key, m.metric);
      if (!seen.insert(id).second) continue;  // a run's first instance, as CompareGroups
      PooledMetric& p = out[id];
      if (p.metric.metric.empty()) {
        p.metric.key = m.key;
        p.metric.metric = m.metric;
      }
      p.metric.values.insert(p.metric.values.end(), m.values.begin(), m.values.end());
      if (m.passed >= 0) {
        p.metric.threshold = m.threshold;
        p.metric.passed = p.judged ? std::min(p.metric.passed, m.passed) : m.passed;
        p.judged = true;
      }
    }
  }
  return out;
}

}  // namespace

std::vector<MetricComparison> CompareAiMetrics(const std::vector<v1::RunRecord>& a,
                                               const std::vector<v1::RunRecord>& b) {
  auto pa = Pool(a), pb = Pool(b);
  std::vector<MetricComparison> out;
  for (const auto& [id, ma] : pa) {
    auto it = pb.find(id);
    if (it == pb.end() || ma.metric.values.empty() || it->second.metric.values.empty()) continue;
    const AiMetric& mb = it->second.metric;
    MetricComparison c;
    c.key = id.first;
    c.metric = id.second;
    const AiMetricDef* def = FindAiMetric(c.metric);
    c.lower_is_better = def != nullptr && def->lower_is_better;
    c.values_a = ma.metric.values;
    c.values_b = mb.values;
    c.mean_a = Mean(c.values_a);
    c.mean_b = Mean(c.values_b);
    c.median_a = Median(c.values_a);
    c.median_b = Median(c.values_b);
    c.median_change_pct = c.median_a == 0 ? 0 : (c.median_b - c.median_a) / c.median_a * 100.0;
    c.welch = WelchTTest(c.values_a, c.values_b);
    c.threshold_a = ma.metric.threshold;
    c.threshold_b = mb.threshold;
    c.passed_a = ma.metric.passed;
    c.passed_b = mb.passed;
    out.push_back(std::move(c));
  }
  return out;
}

std::string FormatAiValue(const std::string& metric, double value) {
  if (metric.rfind("au", 0) == 0 || metric == "efficiency") return absl::StrFormat("%.2f%%", value * 100);
  return absl::StrFormat("%.2f", value);
}

namespace {

std::string Verdict(int passed, double threshold) {
  if (passed < 0) return "";
  return absl::StrFormat("%s (>= %.0f%%)", passed ? "PASS" : "FAIL", threshold * 100);
}

}  // namespace

std::string FormatAiMetrics(const std::vector<MetricComparison>& metrics) {
  if (metrics.empty()) return "";
  size_t w = 6, mw = 6;
  for (const MetricComparison& m : metrics) {
    w = std::max(w, m.key.ToString().size());
    mw = std::max(mw, m.metric.size());
  }
  auto pad = [](const std::string& s, size_t n) {
    return s.size() >= n ? s : s + std::string(n - s.size(), ' ');
  };
  std::string out = absl::StrCat("\nAI figures (median over the repetitions of each side):\n",
                                 pad("result", w), "  ", pad("metric", mw),
                                 absl::StrFormat("  %12s  %12s  %9s  %-14s  %s\n", "A median",
                                                 "B median", "change", "significance",
                                                 "AU threshold A -> B"));
  for (const MetricComparison& m : metrics) {
    ResultComparison rc;  // for its significance text
    rc.reps_a = m.values_a;
    rc.reps_b = m.values_b;
    rc.welch = m.welch;
    std::string verdict;
    if (m.passed_a >= 0 || m.passed_b >= 0) {
      verdict = absl::StrCat(Verdict(m.passed_a, m.threshold_a), " -> ",
                             Verdict(m.passed_b, m.threshold_b));
    }
    absl::StrAppend(&out, pad(m.key.ToString(), w), "  ", pad(m.metric, mw),
                    absl::StrFormat("  %12s  %12s  %+8.1f%%  %-14s  %s", FormatAiValue(m.metric, m.median_a),
                                    FormatAiValue(m.metric, m.median_b), m.median_change_pct,
                                    rc.SignificanceText(), verdict));
    while (!out.empty() && out.back() == ' ') out.pop_back();
    absl::StrAppend(&out, "\n");
  }
  absl::StrAppend(&out, "AU in percent of wall time; *_duration_s: lower is better.\n");
  return out;
}

}  // namespace lockstep
