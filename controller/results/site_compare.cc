#include "controller/results/site_compare.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "controller/results/system_description.h"
#include "controller/results/workload.h"

namespace lockstep {

absl::StatusOr<std::vector<SiteRuns>> LoadSiteRuns(const HistoryStore& db,
                                                   const SiteCompareOptions& options) {
  if (options.sites.empty()) return absl::InvalidArgumentError("--sites: name at least one site");
  if (options.plan.empty()) {
    return absl::InvalidArgumentError("--sites needs --plan NAME (the plan to compare)");
  }
  std::vector<SiteRuns> sides;
  for (const std::string& site : options.sites) {
    RunFilter filter;
    filter.plan = options.plan;
    filter.site = site;
    filter.status = "complete";
    filter.limit = std::max(1, options.runs_per_site);
    ASSIGN_OR_RETURN(std::vector<RunSummary> found, db.List(filter));
    if (found.empty()) {
      return absl::NotFoundError(absl::StrFormat(
          "site %s has no complete run of plan %s in the history db %s; see `lockstep history "
          "--db %s --site %s`, or import its runs with `lockstep import --site %s RUN.json`",
          site, options.plan, db.path(), db.path(), site, site));
    }
    SiteRuns& side = sides.emplace_back();
    side.site = site;
    for (const RunSummary& s : found) {
      ASSIGN_OR_RETURN(v1::RunRecord run, db.Load(s.run_id));
      side.runs.push_back(std::move(run));
    }
  }
  if (options.force) return sides;
  // One class: every run's workload hash equals the first run's.
  const v1::RunRecord& first = sides[0].runs[0];
  const WorkloadIdentity w0 = WorkloadOf(first);
  for (const SiteRuns& side : sides) {
    for (const v1::RunRecord& run : side.runs) {
      const WorkloadIdentity w = WorkloadOf(run);
      if (w.hash == w0.hash) continue;
      return absl::FailedPreconditionError(absl::StrFormat(
          "not comparable: site %s run %s has workload %.12s (%s) but site %s run %s has "
          "%.12s (%s); they differ in what determines the I/O:\n%s\n(%s.) Compare them anyway "
          "with --force, or pick runs of one workload (`lockstep history --site S --plan %s`)",
          sides[0].site, first.run_id(), w0.hash, w0.workload_class, side.site, run.run_id(),
          w.hash, w.workload_class, WorkloadDifference(w0, w), kWorkloadHashCovers,
          options.plan));
    }
  }
  return sides;
}

namespace {

uint32_t ServerNodes(const v1::RunRecord& run) {
  uint32_t n = 0;
  for (const auto& a : run.agents()) n += (a.role() == v1::OSS || a.role() == v1::MDS) ? 1 : 0;
  return n;
}

// The client agents of the test that holds `key` in `run` (0: not there).
uint32_t ClientNodes(const v1::RunRecord& run, const ResultKey& key) {
  for (const auto& test : run.tests()) {
    for (const auto& row : test.summary()) {
      if (KeyOf(row, test) == key) return test.client_agents();
    }
  }
  return 0;
}

std::string Figure(double v) { return absl::StrFormat("%.1f", v); }

}  // namespace

std::vector<SiteResultTable> CompareSites(const std::vector<SiteRuns>& sides) {
  std::map<ResultKey, SiteResultTable> tables;
  for (size_t i = 0; i < sides.size(); ++i) {
    for (const PooledResult& p : PoolResults(sides[i].runs)) {
      SiteResultTable& t = tables[p.key];
      t.key = p.key;
      t.sites.resize(sides.size());
      SiteFigure& f = t.sites[i];
      f.present = true;
      f.runs = p.runs;
      f.repetitions = static_cast<uint32_t>(p.values.size());
      f.median_mib = Median(p.values);
      if (!p.values.empty()) {
        f.min_mib = *std::min_element(p.values.begin(), p.values.end());
        f.max_mib = *std::max_element(p.values.begin(), p.values.end());
      }
      const double mean = Mean(p.values);
      f.cv_pct = mean > 0 ? 100 * SampleStdDev(p.values) / mean : 0;
      f.client_nodes = ClientNodes(sides[i].runs[0], p.key);
      f.server_nodes = ServerNodes(sides[i].runs[0]);
    }
  }
  std::vector<SiteResultTable> out;
  for (auto& [key, t] : tables) {
    for (size_t i = 0; i < sides.size(); ++i) t.sites[i].site = sides[i].site;
    out.push_back(std::move(t));
  }
  return out;
}

std::string FormatSiteComparison(const std::vector<SiteRuns>& sides,
                                 const std::vector<SiteResultTable>& tables) {
  std::string out;
  std::set<std::string> hashes;
  for (const auto& side : sides) {
    for (const auto& run : side.runs) hashes.insert(WorkloadOf(run).hash);
  }
  if (hashes.size() == 1) {
    const WorkloadIdentity w = WorkloadOf(sides[0].runs[0]);
    absl::StrAppend(&out, absl::StrFormat("workload %.12s: %s\n", w.hash, w.workload_class));
  } else {
    absl::StrAppend(&out, "workloads differ (compared with --force):\n");
    for (const auto& side : sides) {
      const WorkloadIdentity w = WorkloadOf(side.runs[0]);
      absl::StrAppend(&out, absl::StrFormat("  %s: %.12s %s\n", side.site, w.hash,
                                            w.workload_class));
    }
  }
  const char* kHeader = "  %-12s %4s %5s %12s %23s %6s %8s %12s %8s %12s\n";
  for (const SiteResultTable& t : tables) {
    absl::StrAppend(&out, "\n", t.key.ToString(), " (MiB/s)\n");
    absl::StrAppend(&out, absl::StrFormat(kHeader, "site", "runs", "reps", "median",
                                          "min..max", "cv", "clients", "per client", "servers",
                                          "per server"));
    for (const SiteFigure& f : t.sites) {
      if (!f.present) {
        absl::StrAppend(&out, absl::StrFormat("  %-12s (no such result)\n", f.site));
        continue;
      }
      const std::string per_client =
          f.client_nodes ? Figure(f.median_mib / f.client_nodes) : std::string("-");
      const std::string per_server =
          f.server_nodes ? Figure(f.median_mib / f.server_nodes) : std::string("-");
      absl::StrAppend(
          &out, absl::StrFormat(kHeader, f.site, absl::StrCat(f.runs), absl::StrCat(f.repetitions),
                                Figure(f.median_mib),
                                absl::StrCat(Figure(f.min_mib), "..", Figure(f.max_mib)),
                                absl::StrFormat("%.1f%%", f.cv_pct),
                                absl::StrCat(f.client_nodes), per_client,
                                f.server_nodes ? absl::StrCat(f.server_nodes) : "-", per_server));
    }
  }
  std::vector<std::string> labels;
  std::vector<v1::SystemDescription> systems;
  for (const auto& side : sides) {
    v1::SiteDescription site;
    site.set_site(side.site);
    labels.push_back(side.site);
    systems.push_back(DescribeSystem(side.runs[0], site));
  }
  absl::StrAppend(&out, "\nsystems (from the agents of each site's newest run)\n",
                  FormatSystems(labels, systems));
  return out;
}

}  // namespace lockstep
