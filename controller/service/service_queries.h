// What the results service's pages and API read (issue 40): SQL queries
// over runs and results, each filtered by the viewer's visibility rule
// (service_db.h, kVisibleSql): a site sees its own runs and every site's
// shared runs not under embargo; a reader sees the shared ones. A private or
// embargoed run never leaves these functions for another viewer.
#ifndef LOCKSTEP_CONTROLLER_SERVICE_SERVICE_QUERIES_H_
#define LOCKSTEP_CONTROLLER_SERVICE_SERVICE_QUERIES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/service/service_db.h"
#include "lockstep/v1/bundle.pb.h"

namespace lockstep {

// Who is asking: a site (its own runs too) or a reader.
struct Viewer {
  std::string name;
  bool is_site = false;
  std::string OwnSite() const { return is_site ? name : ""; }
};

struct RunRow {
  std::string run_id, site, name, workload_hash, workload_class, system_name;
  std::string started_at, status, visibility, embargo_until, content_sha256;
  int client_agents = 0;
  int64_t bundle_bytes = 0;
};

struct ResultRow {
  std::string run_id, result_key, operation;
  double median_mib_s = 0, min_mib_s = 0, max_mib_s = 0;
  int repetitions = 0, num_tasks = 0;
};

// One line of the index page: a site's plan.
struct SitePlanRow {
  std::string site, plan, system_name, last_started_at, workload_hash;
  int64_t runs = 0;
};

// A site's figures of one result within one workload class.
struct SiteResultRow {
  std::string site, result_key;
  double median_mib_s = 0, min_mib_s = 0, max_mib_s = 0;
  int64_t runs = 0;
  int client_agents = 0, num_tasks = 0;
  // The median over the runs of their efficiency (issue 42), when they
  // measured the layers below: the figure that compares sites of different
  // sizes fairly.
  std::optional<double> efficiency;
};

struct TrendData {
  std::vector<RunRow> runs;          // newest first
  std::vector<ResultRow> results;    // of those runs
};

struct ClassData {
  std::string workload_hash, workload_class;
  std::vector<SiteResultRow> rows;   // by result key, then site
  std::vector<std::string> sites;    // sorted
  std::vector<v1::SystemDescription> systems;  // one per site: its newest run's
};

absl::StatusOr<std::vector<SitePlanRow>> QuerySitePlans(ServiceDb& db, const Viewer& v);
absl::StatusOr<TrendData> QueryTrend(ServiceDb& db, const Viewer& v, const std::string& site,
                                     const std::string& plan, int limit);
// NotFound (naming the run) when absent or not visible to the viewer: the
// two are not told apart.
absl::StatusOr<RunRow> QueryRun(ServiceDb& db, const Viewer& v, const std::string& run_id,
                                std::string* bundle_bytes);
// The cross-site figures of one workload class: per site, the median, spread
// and count over its newest kClassRunsPerSite runs of the class (the system
// as it is now, and a page that costs the same at 10^5 runs as at 10).
inline constexpr int kClassRunsPerSite = 30;
absl::StatusOr<ClassData> QueryClass(ServiceDb& db, const Viewer& v,
                                     const std::string& workload_hash);
// Runs for the API (history against the service): by site, plan, class.
absl::StatusOr<std::vector<RunRow>> QueryRuns(ServiceDb& db, const Viewer& v,
                                              const std::string& site, const std::string& plan,
                                              const std::string& workload_hash, int limit);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_SERVICE_SERVICE_QUERIES_H_
