// `lockstep compare --sites A,B,C --plan NAME`: one plan's results across
// sites, from the history db (runs come in with `lockstep import --site`, or
// from the results service). Per site, its newest `runs_per_site` complete
// runs of the plan are pooled; their workloads must be one class (the same
// workload hash, controller/results/workload.h) unless forced, and the
// refusal says which runs differ and how.
#ifndef LOCKSTEP_CONTROLLER_RESULTS_SITE_COMPARE_H_
#define LOCKSTEP_CONTROLLER_RESULTS_SITE_COMPARE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/results/compare.h"
#include "controller/results/history.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

struct SiteCompareOptions {
  std::vector<std::string> sites;  // at least one; in the order given
  std::string plan;                // name or sha256 prefix (RunFilter::plan)
  int runs_per_site = 1;           // the newest N complete runs, pooled
  bool force = false;              // compare runs of different workload classes
};

// One site's side: its runs (newest first).
struct SiteRuns {
  std::string site;
  std::vector<v1::RunRecord> runs;
};

// The runs of each site. NotFound names a site without a complete run of the
// plan (and the db); FailedPrecondition, without `force`, when the runs'
// workload hashes differ: names each site's run, hash prefix and class, what
// differs (WorkloadDifference) and --force.
absl::StatusOr<std::vector<SiteRuns>> LoadSiteRuns(const HistoryStore& db,
                                                   const SiteCompareOptions& options);

// One result of one site.
struct SiteFigure {
  std::string site;
  uint32_t runs = 0;
  uint32_t repetitions = 0;        // values pooled
  double median_mib = 0, min_mib = 0, max_mib = 0;
  double cv_pct = 0;               // sample stddev / mean
  uint32_t client_nodes = 0;       // client agents of the result's test
  uint32_t server_nodes = 0;       // OSS/MDS agents of the run (0: none reported)
  bool present = false;            // the site has this result
};

struct SiteResultTable {
  ResultKey key;
  std::vector<SiteFigure> sites;   // one per site, in order
};

// One table per result key (key order), each with every site.
std::vector<SiteResultTable> CompareSites(const std::vector<SiteRuns>& sides);

// The text: the workload (hash and class, or each site's when forced), one
// table per result (site, runs, reps, median, min..max, cv, clients, per
// client, servers, per server), then the systems side by side, differences
// first (system_description.h, from the agents' facts of each site's newest
// run).
std::string FormatSiteComparison(const std::vector<SiteRuns>& sides,
                                 const std::vector<SiteResultTable>& tables);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_SITE_COMPARE_H_
