#include "controller/results/gate.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "controller/results/ai_metrics.h"

namespace lockstep {

double MaxDrop::For(const ResultKey& key, const std::string& metric) const {
  if (!metric.empty()) {
    if (auto it = by_metric.find(metric); it != by_metric.end()) return it->second;
  }
  if (auto it = by_metric.find(key.phase); it != by_metric.end()) return it->second;
  if (auto it = by_metric.find(key.operation); it != by_metric.end()) return it->second;
  return default_pct;
}

absl::Status ParseMaxDrop(std::string_view text_in, MaxDrop* into) {
  absl::string_view text(text_in.data(), text_in.size());
  text = absl::StripAsciiWhitespace(text);
  std::string metric;
  absl::string_view value = text;
  if (auto eq = text.find('='); eq != absl::string_view::npos) {
    metric = std::string(absl::StripAsciiWhitespace(text.substr(0, eq)));
    value = absl::StripAsciiWhitespace(text.substr(eq + 1));
    if (metric.empty()) value = "";  // "=5%" is malformed
  }
  absl::ConsumeSuffix(&value, "%");
  double pct = 0;
  if (value.empty() || !absl::SimpleAtod(value, &pct) || !std::isfinite(pct) || pct < 0 ||
      pct >= 100) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--max-drop \"%s\": expected a percentage in [0, 100) as \"5%%\" or \"5\", or a "
        "per-metric override as \"write=10%%\" (metric = operation, phase name or AI figure: "
        "%s)",
        std::string(text), AiMetricNames()));
  }
  if (metric.empty()) {
    into->default_pct = pct;
  } else {
    into->by_metric[metric] = pct;
  }
  return absl::OkStatus();
}

absl::Status CheckMaxDropMetrics(const MaxDrop& max_drop, const v1::RunRecord& baseline,
                                 const v1::RunRecord& run) {
  std::set<std::string> operations, phases;
  for (const v1::RunRecord* r : {&baseline, &run}) {
    for (const auto& test : r->tests()) {
      for (const auto& row : test.summary()) {
        operations.insert(row.operation());
        phases.insert(row.phase());
      }
    }
  }
  for (const auto& [metric, pct] : max_drop.by_metric) {
    if (operations.count(metric) || phases.count(metric) || FindAiMetric(metric)) continue;
    return absl::InvalidArgumentError(absl::StrFormat(
        "--max-drop %s=%g%%: \"%s\" is no metric of runs %s and %s; give an operation (%s), a "
        "phase name (%s) or an AI figure (%s)",
        metric, pct, metric, baseline.run_id(), run.run_id(), absl::StrJoin(operations, ", "),
        absl::StrJoin(phases, ", "), AiMetricNames()));
  }
  return absl::OkStatus();
}

std::string GateCase::Name() const {
  return metric.empty() ? key.ToString() : absl::StrCat(key.ToString(), " ", metric);
}

absl::StatusOr<int> ParseNoiseWindow(std::string_view text_in) {
  absl::string_view text =
      absl::StripAsciiWhitespace(absl::string_view(text_in.data(), text_in.size()));
  int n = 0;
  if (!absl::SimpleAtoi(text, &n) || n < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--noise-window \"%s\": expected a whole number of runs >= 1 (the runs of the "
        "baseline's plan recorded just before the baseline); leave the flag out to take the "
        "noise from the baseline's repetitions alone",
        std::string(text_in)));
  }
  return n;
}

absl::StatusOr<NoiseWindow> LoadNoiseWindow(const HistoryStore& store,
                                            const v1::RunRecord& baseline, int n,
                                            const std::string& run_id,
                                            const std::optional<std::string>& site) {
  const std::string flag = absl::StrFormat("--noise-window %d", n);
  if (n < 1) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": a window needs at least one run"));
  }
  NoiseWindow w;
  w.baseline_id = baseline.run_id();
  w.requested = n;
  auto ids = store.CompleteRunsBefore(baseline, n, run_id, site);
  if (!ids.ok()) return Annotate(ids.status(), flag);
  for (const std::string& id : *ids) {
    auto run = store.Load(id);
    if (!run.ok()) return Annotate(run.status(), flag);
    for (const auto& test : run->tests()) {
      for (const auto& row : test.summary()) {
        w.means[KeyOf(row, test).ToString()].push_back(Mean(RepValues(row)));
      }
    }
  }
  w.run_ids = std::move(*ids);
  return w;
}

namespace {

std::string Num(double v) { return absl::StrFormat("%.2f", v); }

std::string PText(double p) {
  return p < 0.0001 ? std::string("p<0.0001") : absl::StrFormat("p=%.4f", p);
}

std::string NoiseSourceText(const std::string& baseline_id, const GateOptions& options) {
  std::string out = absl::StrFormat("noise: baseline %s's repetitions (Welch t-test, alpha %.2f)",
                                    baseline_id, options.alpha);
  if (!options.noise_window) return absl::StrCat(out, "; no --noise-window");
  const NoiseWindow& w = *options.noise_window;
  const int got = static_cast<int>(w.run_ids.size());
  if (got == 0) {
    return absl::StrCat(
        out, absl::StrFormat("; --noise-window %d: no complete run of the plan recorded before "
                             "%s, so no run-to-run spread",
                             w.requested, w.baseline_id));
  }
  return absl::StrCat(
      out,
      absl::StrFormat(" and the run-to-run spread of --noise-window %d, %s of the plan recorded "
                      "before %s: %s (a drop with p < %.2f fails whatever the spread)",
                      w.requested,
                      got == w.requested
                          ? absl::StrFormat("the %d complete run%s", got, got == 1 ? "" : "s")
                          : absl::StrFormat("%d of %d requested complete runs (no more in the "
                                            "history)",
                                            got, w.requested),
                      w.baseline_id, absl::StrJoin(w.run_ids, ", "), options.decisive_alpha));
}

}  // namespace

namespace {

// The verdict of one compared case whose drop, threshold, test and spread
// are set: `run_text` and `baseline_text` are the values with their unit,
// `p_worse` the one-sided p of "the run is worse".
void Decide(const GateOptions& options, const std::string& run_text,
            const std::string& baseline_text, double p_worse, GateCase* g) {
  std::string numbers = absl::StrFormat("%s vs baseline %s (%+.1f%%; max drop %.1f%%)", run_text,
                                        baseline_text, -g->drop_pct, g->max_drop_pct);
  std::string stats =
      g->welch.available
          ? absl::StrFormat("one-sided Welch t-test %s, t=%.2f, df=%.1f, %u vs %u reps",
                            PText(p_worse), g->welch.t, g->welch.df,
                            static_cast<unsigned>(g->reps_baseline),
                            static_cast<unsigned>(g->reps_run))
          : absl::StrFormat("no significance test: %u vs %u reps, threshold only",
                            static_cast<unsigned>(g->reps_baseline),
                            static_cast<unsigned>(g->reps_run));
  if (g->spread_pct >= 0) {
    absl::StrAppend(&stats, absl::StrFormat("; run-to-run spread %.1f%% over %u window runs",
                                            g->spread_pct, static_cast<unsigned>(g->spread_runs)));
  } else if (options.noise_window && g->metric.empty()) {
    absl::StrAppend(&stats, absl::StrFormat("; no run-to-run spread (%u window runs have it)",
                                            static_cast<unsigned>(g->spread_runs)));
  }
  const bool decisive = g->welch.available && p_worse < options.decisive_alpha;
  const bool within_spread = g->spread_pct >= 0 && g->drop_pct <= g->spread_pct;
  if (g->drop_pct <= g->max_drop_pct) {
    g->message = absl::StrCat("ok: ", numbers, g->drop_pct > 0 ? " within max drop" : "", "; ",
                              stats);
  } else if (g->welch.available && !(p_worse < options.alpha)) {
    g->message = absl::StrCat("ok: ", numbers, ", but not significant (alpha ",
                              absl::StrFormat("%.2f", options.alpha), "): ", stats);
  } else if (within_spread && !decisive) {
    g->message = absl::StrCat("ok: ", numbers, ", within the run-to-run spread; ", stats);
  } else {
    g->outcome = GateCase::Outcome::kFail;
    g->message = absl::StrCat("REGRESSION: ", numbers, "; ", stats);
    if (within_spread) {
      absl::StrAppend(&g->message,
                      absl::StrFormat(" (within the spread, but p < %.2f fails regardless)",
                                      options.decisive_alpha));
    }
  }
}

// The case of one AI figure: a drop as for bandwidth (a rise for a
// duration), and for AU also the run failing its threshold where the
// baseline passed.
GateCase MetricCase(const MetricComparison& m, const GateOptions& options) {
  GateCase g;
  g.key = m.key;
  g.metric = m.metric;
  g.baseline_mean = m.mean_a;
  g.run_mean = m.mean_b;
  const double worse = m.lower_is_better ? m.mean_b - m.mean_a : m.mean_a - m.mean_b;
  g.drop_pct = m.mean_a == 0 ? 0 : worse / m.mean_a * 100.0;
  g.max_drop_pct = options.max_drop.For(m.key, m.metric);
  g.reps_baseline = m.values_a.size();
  g.reps_run = m.values_b.size();
  g.welch = m.welch;
  Decide(options, FormatAiValue(m.metric, m.mean_b), FormatAiValue(m.metric, m.mean_a),
         m.lower_is_better ? m.welch.p_b_higher : m.welch.p_b_lower, &g);
  if (m.passed_b == 0 && m.passed_a == 1) {
    g.outcome = GateCase::Outcome::kFail;
    const size_t verdict_end = g.message.find(": ");  // "ok: " or "REGRESSION: "
    g.message = absl::StrFormat(
        "REGRESSION: AU %s is below the phase's threshold %.0f%% (baseline %s passed); %s",
        FormatAiValue(m.metric, m.mean_b), m.threshold_b * 100, FormatAiValue(m.metric, m.mean_a),
        g.message.substr(verdict_end == std::string::npos ? 0 : verdict_end + 2));
  }
  return g;
}

}  // namespace

GateReport EvaluateGate(const v1::RunRecord& baseline, const v1::RunRecord& run,
                        const GateOptions& options) {
  GateReport report;
  report.run_id = run.run_id();
  report.baseline_id = baseline.run_id();
  report.plan = run.name();
  report.alpha = options.alpha;
  report.decisive_alpha = options.decisive_alpha;
  report.noise_source = NoiseSourceText(baseline.run_id(), options);
  Comparison c = CompareRuns(baseline, run);
  for (const auto& m : c.matched) {
    GateCase g;
    g.key = m.key;
    g.baseline_mean = m.mean_a;
    g.run_mean = m.mean_b;
    g.drop_pct = m.mean_a == 0 ? 0 : (m.mean_a - m.mean_b) / m.mean_a * 100.0;
    g.max_drop_pct = options.max_drop.For(m.key);
    g.reps_baseline = m.reps_a.size();
    g.reps_run = m.reps_b.size();
    g.welch = m.welch;
    if (options.noise_window) {
      const auto& means = options.noise_window->means;
      if (auto it = means.find(m.key.ToString()); it != means.end()) {
        g.spread_runs = it->second.size();
        auto [lo, hi] = std::minmax_element(it->second.begin(), it->second.end());
        double mean = Mean(it->second);
        if (g.spread_runs >= 2 && mean > 0) g.spread_pct = (*hi - *lo) / mean * 100.0;
      }
    }
    Decide(options, absl::StrCat(Num(g.run_mean), " MiB/s"),
           absl::StrCat(Num(g.baseline_mean), " MiB/s"), g.welch.p_b_lower, &g);
    report.cases.push_back(std::move(g));
  }
  for (const MetricComparison& m : c.metrics) report.cases.push_back(MetricCase(m, options));
  for (const auto& key : c.only_a) {
    GateCase g;
    g.key = key;
    g.outcome = GateCase::Outcome::kFail;
    g.missing_in_run = true;
    g.max_drop_pct = options.max_drop.For(key);
    for (const auto& test : baseline.tests()) {
      for (const auto& row : test.summary()) {
        if (KeyOf(row, test) == key) {
          g.baseline_mean = Mean(RepValues(row));
          g.reps_baseline = RepValues(row).size();
        }
      }
    }
    g.drop_pct = 100;
    g.message = absl::StrFormat(
        "REGRESSION: result missing from run %s (baseline %s has %s MiB/s); the run lost it "
        "(status \"%s\")",
        run.run_id(), baseline.run_id(), Num(g.baseline_mean), run.status());
    report.cases.push_back(std::move(g));
  }
  for (const auto& key : c.only_b) {
    GateCase g;
    g.key = key;
    g.outcome = GateCase::Outcome::kNoBaseline;
    g.max_drop_pct = options.max_drop.For(key);
    g.message = absl::StrFormat("skipped: baseline %s has no such result", baseline.run_id());
    report.cases.push_back(std::move(g));
  }
  return report;
}

int GateReport::failures() const {
  return static_cast<int>(std::count_if(cases.begin(), cases.end(), [](const GateCase& g) {
    return g.outcome == GateCase::Outcome::kFail;
  }));
}

int GateReport::compared() const {
  return static_cast<int>(std::count_if(cases.begin(), cases.end(), [](const GateCase& g) {
    return g.outcome != GateCase::Outcome::kNoBaseline;
  }));
}

GateVerdict GateReport::verdict() const {
  if (compared() == 0) return GateVerdict::kNoBaseline;
  return failures() > 0 ? GateVerdict::kRegression : GateVerdict::kPass;
}

std::string GateReport::Text() const {
  std::string out = absl::StrFormat("gate: run %s against baseline %s\n", run_id, baseline_id);
  if (!noise_source.empty()) absl::StrAppend(&out, noise_source, "\n");
  for (const auto& g : cases) absl::StrAppend(&out, "  ", g.Name(), ": ", g.message, "\n");
  int f = failures();
  switch (verdict()) {
    case GateVerdict::kPass:
      absl::StrAppend(&out, absl::StrFormat("PASS: %d results compared, none significantly worse\n",
                                            compared()));
      break;
    case GateVerdict::kRegression:
      absl::StrAppend(&out, absl::StrFormat("FAIL: %d of %d results regressed\n", f, compared()));
      break;
    case GateVerdict::kNoBaseline:
      absl::StrAppend(&out, "NO BASELINE: no result of the run matches a result of the baseline\n");
      break;
  }
  return out;
}

namespace {

std::string XmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters.
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') {
          out += '?';
        } else {
          out += ch;
        }
    }
  }
  return out;
}

// A case's value with its unit.
std::string ValueText(const GateCase& g, double v) {
  return g.metric.empty() ? absl::StrFormat("%.2f MiB/s", v) : FormatAiValue(g.metric, v);
}

}  // namespace

std::string GateJunitXml(const GateReport& report) {
  int tests = static_cast<int>(report.cases.size());
  int failures = report.failures();
  int skipped = tests - report.compared();
  std::string suite = absl::StrFormat("lockstep gate %s vs %s", report.run_id, report.baseline_id);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  absl::StrAppend(&out,
                  absl::StrFormat("<testsuites name=\"lockstep gate\" tests=\"%d\" failures=\"%d\" "
                                  "errors=\"0\" skipped=\"%d\">\n",
                                  tests, failures, skipped));
  absl::StrAppend(&out, absl::StrFormat("  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" "
                                        "errors=\"0\" skipped=\"%d\">\n",
                                        XmlEscape(suite), tests, failures, skipped));
  absl::StrAppend(&out, "    <properties>\n");
  auto prop = [&](const std::string& n, const std::string& v) {
    absl::StrAppend(&out, absl::StrFormat("      <property name=\"%s\" value=\"%s\"/>\n",
                                          XmlEscape(n), XmlEscape(v)));
  };
  prop("run", report.run_id);
  prop("baseline", report.baseline_id);
  prop("plan", report.plan);
  prop("method", absl::StrFormat("fail when drop > max-drop AND one-sided Welch t-test p < %.2f "
                                 "(threshold only with < 2 reps) AND, with a noise window, "
                                 "(drop > the window's run-to-run spread OR p < %.2f)",
                                 report.alpha, report.decisive_alpha));
  prop("noise", report.noise_source);
  absl::StrAppend(&out, "    </properties>\n");
  std::string classname = XmlEscape(absl::StrCat("lockstep.", report.plan.empty() ? "run" : report.plan));
  for (const auto& g : report.cases) {
    absl::StrAppend(&out, absl::StrFormat("    <testcase classname=\"%s\" name=\"%s\" time=\"0\">",
                                          classname, XmlEscape(g.Name())));
    switch (g.outcome) {
      case GateCase::Outcome::kFail:
        absl::StrAppend(&out, absl::StrFormat(
                                  "\n      <failure type=\"%s\" message=\"%s\">%s</failure>\n    ",
                                  g.missing_in_run ? "missing" : "regression", XmlEscape(g.message),
                                  XmlEscape(absl::StrFormat(
                                      "baseline %s: %s (%u reps); run %s: %s "
                                      "(%u reps); drop %.2f%%, max drop %.2f%%",
                                      report.baseline_id, ValueText(g, g.baseline_mean),
                                      static_cast<unsigned>(g.reps_baseline), report.run_id,
                                      ValueText(g, g.run_mean), static_cast<unsigned>(g.reps_run),
                                      g.drop_pct, g.max_drop_pct))));
        break;
      case GateCase::Outcome::kNoBaseline:
        absl::StrAppend(&out, absl::StrFormat("\n      <skipped message=\"%s\"/>\n    ",
                                              XmlEscape(g.message)));
        break;
      case GateCase::Outcome::kPass:
        absl::StrAppend(&out, absl::StrFormat("\n      <system-out>%s</system-out>\n    ",
                                              XmlEscape(g.message)));
        break;
    }
    absl::StrAppend(&out, "</testcase>\n");
  }
  absl::StrAppend(&out, "  </testsuite>\n</testsuites>\n");
  return out;
}

}  // namespace lockstep
