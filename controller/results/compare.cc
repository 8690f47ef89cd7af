#include "controller/results/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/sizes.h"
#include "controller/plan/sweep.h"
#include "controller/results/ai_metrics.h"

namespace lockstep {

const char kSignificanceMethod[] =
    "Welch's two-sample t-test on per-repetition bandwidth (two-sided p; * = p < 0.05; "
    "n/a when a side has fewer than 2 repetitions)";

std::string ResultKey::ToString() const {
  return absl::StrFormat("%s/%s tasks=%u tpn=%u xfer=%s block=%s seg=%u %s%s", phase, operation,
                         num_tasks, tasks_per_node, HumanBytes(transfer_bytes),
                         HumanBytes(block_bytes), segments, file_per_process ? "fpp" : "shared",
                         sweep.empty() ? "" : " [" + sweep + "]");
}

ResultKey KeyOf(const v1::SummaryRow& row) {
  ResultKey k;
  k.phase = row.phase();
  k.operation = row.operation();
  k.num_tasks = row.num_tasks();
  k.tasks_per_node = row.tasks_per_node();
  k.transfer_bytes = row.transfer_bytes();
  k.block_bytes = row.block_bytes();
  k.segments = row.segments();
  k.file_per_process = row.file_per_process();
  return k;
}

ResultKey KeyOf(const v1::SummaryRow& row, const v1::TestRecord& test) {
  ResultKey k = KeyOf(row);
  k.sweep = SweepLabel(test.sweep());
  return k;
}

std::vector<double> RepValues(const v1::SummaryRow& row) {
  if (row.bw_mib_per_rep_size() > 0) {
    return std::vector<double>(row.bw_mib_per_rep().begin(), row.bw_mib_per_rep().end());
  }
  return {row.bw_mean_mib()};
}

// ---- statistics --------------------------------------------------------------

namespace {

// Continued fraction for I_x(a, b) (modified Lentz), valid for x < (a+1)/(a+b+2).
double BetaContinuedFraction(double a, double b, double x) {
  constexpr int kMaxIter = 300;
  constexpr double kEps = 1e-15;
  constexpr double kTiny = 1e-300;
  double qab = a + b, qap = a + 1.0, qam = a - 1.0;
  double c = 1.0;
  double d = 1.0 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= kMaxIter; ++m) {
    int m2 = 2 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    double del = d * c;
    h *= del;
    if (std::fabs(del - 1.0) < kEps) break;
  }
  return h;
}

}  // namespace

double RegularizedIncompleteBeta(double a, double b, double x) {
  if (!(a > 0) || !(b > 0) || std::isnan(x)) return std::numeric_limits<double>::quiet_NaN();
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  double ln_front = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) +
                    b * std::log1p(-x);
  double front = std::exp(ln_front);
  if (x < (a + 1.0) / (a + b + 2.0)) return front * BetaContinuedFraction(a, b, x) / a;
  return 1.0 - front * BetaContinuedFraction(b, a, 1.0 - x) / b;
}

double StudentTCdf(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  double x = df / (df + t * t);
  double tail = 0.5 * RegularizedIncompleteBeta(df / 2.0, 0.5, x);  // P(T > |t|)
  return t > 0 ? 1.0 - tail : tail;
}

double Mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double SampleStdDev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double m = Mean(v), ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

WelchResult WelchTTest(const std::vector<double>& a, const std::vector<double>& b) {
  WelchResult r;
  if (a.size() < 2 || b.size() < 2) return r;
  r.available = true;
  double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  double ma = Mean(a), mb = Mean(b);
  double sa = SampleStdDev(a), sb = SampleStdDev(b);
  double va = sa * sa / na, vb = sb * sb / nb;
  double se2 = va + vb;
  double diff = mb - ma;
  if (se2 <= 0) {
    // No spread at all: the difference is exact (or there is none).
    r.df = na + nb - 2;
    if (diff == 0) {
      r.t = 0;
      r.p_two_sided = 1;
      r.p_b_lower = r.p_b_higher = 0.5;
    } else {
      r.t = diff > 0 ? std::numeric_limits<double>::infinity()
                     : -std::numeric_limits<double>::infinity();
      r.p_two_sided = 0;
      r.p_b_lower = diff < 0 ? 0 : 1;
      r.p_b_higher = diff > 0 ? 0 : 1;
    }
    return r;
  }
  r.t = diff / std::sqrt(se2);
  r.df = se2 * se2 / (va * va / (na - 1) + vb * vb / (nb - 1));
  double cdf = StudentTCdf(r.t, r.df);
  r.p_b_lower = cdf;
  r.p_b_higher = 1.0 - cdf;
  r.p_two_sided = std::min(1.0, 2.0 * std::min(cdf, 1.0 - cdf));
  return r;
}

std::string ResultComparison::SignificanceText() const {
  if (!welch.available) {
    size_t n = std::min(reps_a.size(), reps_b.size());
    return absl::StrFormat("n/a (%u rep)", static_cast<unsigned>(n));
  }
  std::string p = welch.p_two_sided < 0.001 ? "p<0.001" : absl::StrFormat("p=%.3f", welch.p_two_sided);
  if (welch.p_two_sided < 0.05) p += " *";
  return p;
}

// ---- comparing runs ----------------------------------------------------------

namespace {

double ChangePct(double a, double b) { return a == 0 ? 0 : (b - a) / a * 100.0; }

using Pooled = PooledResult;

std::map<ResultKey, Pooled> ResultsOf(const std::vector<v1::RunRecord>& group) {
  std::map<ResultKey, Pooled> out;
  for (const v1::RunRecord& run : group) {
    std::set<ResultKey> seen;
    for (const auto& test : run.tests()) {
      for (const auto& row : test.summary()) {
        // The first occurrence in a run wins; a plan that repeats the exact
        // same test shape twice is compared on its first instance.
        const ResultKey key = KeyOf(row, test);
        if (!seen.insert(key).second) continue;
        Pooled& p = out[key];
        p.key = key;
        if (p.runs++ == 0) p.test_id = test.test_id();
        for (double v : RepValues(row)) p.values.push_back(v);
      }
    }
  }
  return out;
}

std::string RunIds(const std::vector<v1::RunRecord>& group) {
  std::vector<std::string> ids;
  for (const v1::RunRecord& r : group) ids.push_back(r.run_id());
  return absl::StrJoin(ids, ", ");
}

std::string JoinSet(const std::set<std::string>& s) {
  if (s.empty()) return "(none)";
  return absl::StrJoin(s, ", ");
}

// Name -> sorted distinct values, the facts a run is described by.
std::map<std::string, std::set<std::string>> RunFacts(const v1::RunRecord& run) {
  std::map<std::string, std::set<std::string>> f;
  f["plan name"].insert(run.name());
  f["plan_sha256"].insert(run.plan_sha256());
  f["lockstep_version"].insert(run.lockstep_version());
  f["status"].insert(run.status());
  int clients = 0;
  for (const auto& agent : run.agents()) {
    const auto& h = agent.facts();
    if (agent.role() == v1::CLIENT || h.role() == v1::CLIENT) ++clients;
    f["kernel"].insert(h.kernel());
    f["agent_version"].insert(h.agent_version());
    f["lustre_version"].insert(h.lustre_version().empty() ? "(none)" : h.lustre_version());
    f["cores"].insert(absl::StrCat(h.cores()));
    f["memory"].insert(HumanBytes(h.memory_bytes()));
    f["os"].insert(h.os());
    for (const auto& root : h.roots()) f["fs types"].insert(root.fs_type());
  }
  f["agents"].insert(absl::StrCat(run.agents_size()));
  f["client agents"].insert(absl::StrCat(clients));
  for (const auto& test : run.tests()) {
    f["total tasks"].insert(absl::StrCat(test.total_tasks()));
    for (const auto& ph : test.phases()) {
      const auto& s = ph.spec();
      std::string p = "phase " + ph.phase() + ": ";
      f[p + "transfer"].insert(HumanBytes(s.transfer_bytes()));
      f[p + "block"].insert(HumanBytes(s.block_bytes()));
      f[p + "segments"].insert(absl::StrCat(s.segments()));
      f[p + "file_per_process"].insert(s.file_per_process() ? "true" : "false");
      f[p + "fsync_at_end"].insert(s.fsync_at_end() ? "true" : "false");
      f[p + "fsync_per_transfer"].insert(s.fsync_per_transfer() ? "true" : "false");
      f[p + "direct"].insert(s.direct() ? "true" : "false");
      f[p + "verify"].insert(s.verify() ? "true" : "false");
      f[p + "reorder_shift"].insert(absl::StrCat(s.reorder_shift()));
      f[p + "dir"].insert(s.dir());
    }
    for (const auto& row : test.summary()) f["api"].insert(row.api());
  }
  for (auto& [k, v] : f) v.erase("");
  return f;
}

}  // namespace

std::vector<PooledResult> PoolResults(const std::vector<v1::RunRecord>& group) {
  std::vector<PooledResult> out;
  for (auto& [key, pooled] : ResultsOf(group)) out.push_back(std::move(pooled));
  return out;
}

std::vector<RunDifference> DiffRuns(const v1::RunRecord& a, const v1::RunRecord& b) {
  auto fa = RunFacts(a), fb = RunFacts(b);
  std::set<std::string> names;
  for (const auto& [k, v] : fa) names.insert(k);
  for (const auto& [k, v] : fb) names.insert(k);
  std::vector<RunDifference> out;
  // Identity first, then the rest alphabetically.
  const std::vector<std::string> first = {"plan name", "plan_sha256", "status", "lockstep_version"};
  auto add = [&](const std::string& n) {
    const auto& va = fa[n];
    const auto& vb = fb[n];
    if (va != vb) out.push_back({n, JoinSet(va), JoinSet(vb)});
  };
  for (const auto& n : first) add(n);
  for (const auto& n : names) {
    if (std::find(first.begin(), first.end(), n) == first.end()) add(n);
  }
  return out;
}

Comparison CompareRuns(const v1::RunRecord& a, const v1::RunRecord& b) {
  return CompareGroups({a}, {b});
}

Comparison CompareGroups(const std::vector<v1::RunRecord>& a,
                         const std::vector<v1::RunRecord>& b) {
  Comparison c;
  c.run_a = RunIds(a);
  c.run_b = RunIds(b);
  c.runs_in_a = static_cast<uint32_t>(a.size());
  c.runs_in_b = static_cast<uint32_t>(b.size());
  auto ra = ResultsOf(a), rb = ResultsOf(b);
  for (const auto& [key, pa] : ra) {
    auto it = rb.find(key);
    if (it == rb.end()) {
      c.only_a.push_back(key);
      continue;
    }
    const Pooled& pb = it->second;
    ResultComparison rc;
    rc.key = key;
    rc.test_a = pa.test_id;
    rc.test_b = pb.test_id;
    rc.runs_a = pa.runs;
    rc.runs_b = pb.runs;
    rc.reps_a = pa.values;
    rc.reps_b = pb.values;
    rc.mean_a = Mean(rc.reps_a);
    rc.mean_b = Mean(rc.reps_b);
    rc.median_a = Median(rc.reps_a);
    rc.median_b = Median(rc.reps_b);
    rc.min_a = *std::min_element(rc.reps_a.begin(), rc.reps_a.end());
    rc.max_a = *std::max_element(rc.reps_a.begin(), rc.reps_a.end());
    rc.min_b = *std::min_element(rc.reps_b.begin(), rc.reps_b.end());
    rc.max_b = *std::max_element(rc.reps_b.begin(), rc.reps_b.end());
    rc.change_pct = ChangePct(rc.mean_a, rc.mean_b);
    rc.median_change_pct = ChangePct(rc.median_a, rc.median_b);
    rc.welch = WelchTTest(rc.reps_a, rc.reps_b);
    c.matched.push_back(std::move(rc));
  }
  for (const auto& [key, pb] : rb) {
    if (!ra.count(key)) c.only_b.push_back(key);
  }
  c.metrics = CompareAiMetrics(a, b);
  if (!a.empty() && !b.empty()) c.differences = DiffRuns(a.front(), b.front());
  return c;
}

namespace {

std::string Pad(const std::string& s, size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}

void AppendDifferences(const std::vector<RunDifference>& diffs, const std::string& la,
                       const std::string& lb, std::string* out) {
  if (diffs.empty()) {
    absl::StrAppend(out, "No differences in plan parameters, agent facts or fs types.\n");
    return;
  }
  absl::StrAppend(out, "What differs (", la, " -> ", lb, "):\n");
  size_t w = 0;
  for (const auto& d : diffs) w = std::max(w, d.what.size());
  for (const auto& d : diffs) {
    absl::StrAppend(out, "  ", Pad(d.what, w), "  ", d.a, "  ->  ", d.b, "\n");
  }
}

}  // namespace

namespace {

// "A = id" or "A = id1, id2, id3 (3 runs: every repetition of each)".
std::string SideLine(const char* side, const std::string& ids, uint32_t runs) {
  if (runs <= 1) return absl::StrFormat("%s = %s\n", side, ids);
  return absl::StrFormat("%s = %s (%u runs: median, min and max over every repetition of each)\n",
                         side, ids, runs);
}

std::string Range(double lo, double hi) { return absl::StrFormat("%.2f..%.2f", lo, hi); }

void AppendKeys(const char* title, const std::vector<ResultKey>& keys, std::string* out) {
  absl::StrAppend(out, title);
  for (const auto& k : keys) absl::StrAppend(out, "  ", k.ToString(), "\n");
}

}  // namespace

std::string FormatComparison(const Comparison& c) {
  std::string out = SideLine("A", c.run_a, c.runs_in_a) + SideLine("B", c.run_b, c.runs_in_b) + "\n";
  if (c.matched.empty()) {
    absl::StrAppend(&out, "No results match between the runs (matched on phase, operation, tasks, "
                          "tasks per node, transfer, block, segments, file per process, sweep "
                          "point).\n");
    AppendKeys("Results only in A:\n", c.only_a, &out);
    AppendKeys("Results only in B:\n", c.only_b, &out);
    AppendDifferences(c.differences, "A", "B", &out);
    return out;
  }
  size_t w = 6, rw = 10;
  for (const auto& m : c.matched) {
    w = std::max(w, m.key.ToString().size());
    rw = std::max({rw, Range(m.min_a, m.max_a).size(), Range(m.min_b, m.max_b).size()});
  }
  absl::StrAppend(&out, Pad("result", w),
                  absl::StrFormat("  %12s  %s  %12s  %s  %9s  %s\n", "A median", Pad("A min..max", rw),
                                  "B median", Pad("B min..max", rw), "change", "significance"));
  for (const auto& m : c.matched) {
    absl::StrAppend(&out, Pad(m.key.ToString(), w),
                    absl::StrFormat("  %12.2f  %s  %12.2f  %s  %+8.1f%%  %s\n", m.median_a,
                                    Pad(Range(m.min_a, m.max_a), rw), m.median_b,
                                    Pad(Range(m.min_b, m.max_b), rw), m.median_change_pct,
                                    m.SignificanceText()));
  }
  absl::StrAppend(&out, "MiB/s over the repetitions of each side; change: of the medians.\n");
  absl::StrAppend(&out, "Significance: ", kSignificanceMethod, ".\n");
  absl::StrAppend(&out, FormatAiMetrics(c.metrics));
  if (!c.only_a.empty()) AppendKeys("\nOnly in A:\n", c.only_a, &out);
  if (!c.only_b.empty()) AppendKeys("\nOnly in B:\n", c.only_b, &out);
  absl::StrAppend(&out, "\n");
  AppendDifferences(c.differences, "A", "B", &out);
  return out;
}

std::string FormatMatrix(const std::vector<v1::RunRecord>& runs) {
  std::vector<std::vector<v1::RunRecord>> groups;
  for (const v1::RunRecord& r : runs) groups.push_back({r});
  return FormatMatrix(groups);
}

std::string FormatMatrix(const std::vector<std::vector<v1::RunRecord>>& groups) {
  std::string out;
  if (groups.empty()) return out;
  std::vector<std::map<ResultKey, Pooled>> results;
  std::set<ResultKey> keys;
  for (size_t i = 0; i < groups.size(); ++i) {
    const v1::RunRecord& first = groups[i].front();
    absl::StrAppend(&out, "[", i + 1, "] ", RunIds(groups[i]), "  ", first.name(), "  ",
                    first.started_at(),
                    groups[i].size() > 1 ? absl::StrCat("  (", groups[i].size(), " runs)") : "",
                    "\n");
    results.push_back(ResultsOf(groups[i]));
    for (const auto& [k, v] : results.back()) keys.insert(k);
  }
  absl::StrAppend(&out, "\nMedian bandwidth over the repetitions, MiB/s (change of the median vs "
                        "[1]; * significant vs [1]: ",
                  kSignificanceMethod, ")\n");
  size_t w = 6;
  for (const auto& k : keys) w = std::max(w, k.ToString().size());
  std::string header = Pad("result", w);
  for (size_t i = 0; i < groups.size(); ++i) {
    absl::StrAppend(&header, "  ", Pad(absl::StrCat("[", i + 1, "]"), 24));
  }
  absl::StrAppend(&out, header, "\n");
  for (const auto& k : keys) {
    std::string line = Pad(k.ToString(), w);
    auto it0 = results[0].find(k);
    const Pooled* base = it0 != results[0].end() ? &it0->second : nullptr;
    for (size_t i = 0; i < groups.size(); ++i) {
      auto it = results[i].find(k);
      std::string cell = "-";
      if (it != results[i].end()) {
        const double median = Median(it->second.values);
        cell = absl::StrFormat("%.2f", median);
        if (i > 0 && base != nullptr) {
          const double change = ChangePct(Median(base->values), median);
          auto welch = WelchTTest(base->values, it->second.values);
          absl::StrAppend(&cell, absl::StrFormat(" (%+.1f%%%s)", change,
                                                 welch.available && welch.p_two_sided < 0.05 ? "*"
                                                                                             : ""));
        }
      }
      absl::StrAppend(&line, "  ", Pad(cell, 24));
    }
    absl::StrAppend(&out, line, "\n");
  }
  for (size_t i = 1; i < groups.size(); ++i) {
    absl::StrAppend(&out, "\n");
    AppendDifferences(DiffRuns(groups[0].front(), groups[i].front()), "[1]",
                      absl::StrCat("[", i + 1, "]"), &out);
  }
  return out;
}

}  // namespace lockstep
