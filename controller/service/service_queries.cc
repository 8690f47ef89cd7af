#include "controller/service/service_queries.h"

#include <optional>
#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"

namespace lockstep {
namespace {

constexpr char kRunColumns[] =
    "r.run_id, r.site, r.name, r.workload_hash, r.workload_class, r.system_name, "
    "coalesce(to_char(r.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
    "r.started_text), r.status, r.visibility, "
    "coalesce(to_char(r.embargo_until AT TIME ZONE 'UTC', 'YYYY-MM-DD'), ''), "
    "r.content_sha256, r.client_agents, r.bundle_bytes";

// The columns of kRunColumns, from column `at` on.
RunRow RunOf(const pqxx::row& row, int at = 0) {
  RunRow r;
  r.run_id = row[at + 0].as<std::string>();
  r.site = row[at + 1].as<std::string>();
  r.name = row[at + 2].as<std::string>();
  r.workload_hash = row[at + 3].as<std::string>();
  r.workload_class = row[at + 4].as<std::string>();
  r.system_name = row[at + 5].as<std::string>();
  r.started_at = row[at + 6].as<std::string>();
  r.status = row[at + 7].as<std::string>();
  r.visibility = row[at + 8].as<std::string>();
  r.embargo_until = row[at + 9].as<std::string>();
  r.content_sha256 = row[at + 10].as<std::string>();
  r.client_agents = row[at + 11].as<int>();
  r.bundle_bytes = row[at + 12].as<int64_t>();
  return r;
}

}  // namespace

absl::StatusOr<std::vector<SitePlanRow>> QuerySitePlans(ServiceDb& db, const Viewer& v) {
  std::vector<SitePlanRow> out;
  absl::Status s = db.With([&](pqxx::connection& c) {
    pqxx::read_transaction w(c);
    pqxx::result res = w.exec_params(
        absl::StrCat("SELECT r.site, r.name, max(r.system_name), "
                     "coalesce(to_char(max(r.started_at) AT TIME ZONE 'UTC', "
                     "'YYYY-MM-DD HH24:MI'), ''), max(r.workload_hash), count(*) "
                     "FROM runs r WHERE ", kVisibleSql,
                     " GROUP BY r.site, r.name ORDER BY r.site, r.name"),
        v.OwnSite());
    for (const pqxx::row& row : res) {
      out.push_back({.site = row[0].as<std::string>(), .plan = row[1].as<std::string>(),
                     .system_name = row[2].as<std::string>(),
                     .last_started_at = row[3].as<std::string>(),
                     .workload_hash = row[4].as<std::string>(), .runs = row[5].as<int64_t>()});
    }
  });
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<TrendData> QueryTrend(ServiceDb& db, const Viewer& v, const std::string& site,
                                     const std::string& plan, int limit) {
  TrendData out;
  absl::Status s = db.With([&](pqxx::connection& c) {
    pqxx::read_transaction w(c);
    const std::string selected = absl::StrCat(
        "SELECT r.id, ", kRunColumns, " FROM runs r WHERE r.site = $2 AND r.name = $3 AND ",
        kVisibleSql, " ORDER BY r.started_at DESC NULLS LAST, r.run_id DESC LIMIT $4");
    pqxx::result runs = w.exec_params(selected, v.OwnSite(), site, plan, limit);
    for (const pqxx::row& row : runs) out.runs.push_back(RunOf(row, 1));
    pqxx::result results = w.exec_params(
        absl::StrCat("WITH sel AS (", selected, ") SELECT r.run_id, x.result_key, x.operation, "
                     "x.median_mib_s, x.min_mib_s, x.max_mib_s, x.repetitions, x.num_tasks "
                     "FROM sel JOIN results x ON x.run = sel.id JOIN runs r ON r.id = sel.id "
                     "ORDER BY x.result_key, r.started_at"),
        v.OwnSite(), site, plan, limit);
    for (const pqxx::row& row : results) {
      out.results.push_back({.run_id = row[0].as<std::string>(),
                             .result_key = row[1].as<std::string>(),
                             .operation = row[2].as<std::string>(),
                             .median_mib_s = row[3].as<double>(),
                             .min_mib_s = row[4].as<double>(),
                             .max_mib_s = row[5].as<double>(),
                             .repetitions = row[6].as<int>(), .num_tasks = row[7].as<int>()});
    }
  });
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<RunRow> QueryRun(ServiceDb& db, const Viewer& v, const std::string& run_id,
                                std::string* bundle_bytes) {
  std::optional<RunRow> out;
  absl::Status s = db.With([&](pqxx::connection& c) {
    pqxx::read_transaction w(c);
    pqxx::result res = w.exec_params(
        absl::StrCat("SELECT ", kRunColumns, ", r.bundle FROM runs r WHERE r.run_id = $2 AND ",
                     kVisibleSql),
        v.OwnSite(), run_id);
    if (res.empty()) return;
    out = RunOf(res[0]);
    if (bundle_bytes != nullptr) *bundle_bytes = pqxx::binarystring(res[0][13]).str();
  });
  if (!s.ok()) return s;
  if (!out) return absl::NotFoundError(absl::StrCat("no run ", run_id, " that you may read"));
  return *out;
}

absl::StatusOr<ClassData> QueryClass(ServiceDb& db, const Viewer& v,
                                     const std::string& workload_hash) {
  ClassData out;
  out.workload_hash = workload_hash;
  // Per site, its newest runs of the class the viewer may see: an index walk
  // of runs_workload (workload_hash, site, started_at DESC) per admitted
  // site, not an aggregate over every run the class ever had.
  const std::string newest = absl::StrCat(
      "SELECT q.* FROM principals p CROSS JOIN LATERAL (SELECT r.id, r.site, r.client_agents, "
      "r.system_pb, r.workload_class, r.started_at FROM runs r WHERE r.workload_hash = $2 AND "
      "r.site = p.name AND ", kVisibleSql, " ORDER BY r.started_at DESC LIMIT $3) q "
      "WHERE p.role = 'site'");
  absl::Status s = db.With([&](pqxx::connection& c) {
    pqxx::read_transaction w(c);
    pqxx::result res = w.exec_params(
        absl::StrCat("WITH recent AS (", newest, ") SELECT recent.site, x.result_key, "
                     "percentile_cont(0.5) WITHIN GROUP (ORDER BY x.median_mib_s), "
                     "min(x.median_mib_s), max(x.median_mib_s), count(*), "
                     "max(recent.client_agents), max(x.num_tasks), "
                     "percentile_cont(0.5) WITHIN GROUP (ORDER BY x.efficiency) FROM recent "
                     "JOIN results x ON x.run = recent.id "
                     "GROUP BY x.result_key, recent.site ORDER BY x.result_key, recent.site"),
        v.OwnSite(), workload_hash, kClassRunsPerSite);
    for (const pqxx::row& row : res) {
      out.rows.push_back({.site = row[0].as<std::string>(),
                          .result_key = row[1].as<std::string>(),
                          .median_mib_s = row[2].as<double>(), .min_mib_s = row[3].as<double>(),
                          .max_mib_s = row[4].as<double>(), .runs = row[5].as<int64_t>(),
                          .client_agents = row[6].as<int>(), .num_tasks = row[7].as<int>(),
                          .efficiency = row[8].is_null() ? std::nullopt
                                                         : std::optional(row[8].as<double>())});
    }
    pqxx::result systems = w.exec_params(
        absl::StrCat("WITH recent AS (", newest, ") SELECT DISTINCT ON (site) site, system_pb, "
                     "workload_class FROM recent ORDER BY site, started_at DESC"),
        v.OwnSite(), workload_hash, 1);
    for (const pqxx::row& row : systems) {
      out.sites.push_back(row[0].as<std::string>());
      v1::SystemDescription d;
      d.ParseFromString(pqxx::binarystring(row[1]).str());
      out.systems.push_back(std::move(d));
      out.workload_class = row[2].as<std::string>();
    }
  });
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<std::vector<RunRow>> QueryRuns(ServiceDb& db, const Viewer& v,
                                              const std::string& site, const std::string& plan,
                                              const std::string& workload_hash, int limit) {
  std::vector<RunRow> out;
  absl::Status s = db.With([&](pqxx::connection& c) {
    pqxx::read_transaction w(c);
    pqxx::result res = w.exec_params(
        absl::StrCat("SELECT ", kRunColumns, " FROM runs r WHERE ($2 = '' OR r.site = $2) AND "
                     "($3 = '' OR r.name = $3) AND ($4 = '' OR r.workload_hash = $4) AND ",
                     kVisibleSql, " ORDER BY r.started_at DESC NULLS LAST LIMIT $5"),
        v.OwnSite(), site, plan, workload_hash, limit);
    for (const pqxx::row& row : res) out.push_back(RunOf(row));
  });
  if (!s.ok()) return s;
  return out;
}

}  // namespace lockstep
