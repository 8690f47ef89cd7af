// The history store's listings and lookups across runs: List and Summary
// (with RunFilter's WHERE clause), the complete runs before a run and the
// last good one (gate's baselines), and the trends of a result or an AI
// figure across runs.
#include "controller/results/history.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "controller/results/ai_metrics.h"
#include "controller/results/sqlite_db.h"

namespace lockstep {
namespace {


// WHERE clause (starting with " WHERE" or empty) and its values for a filter
// on the runs table aliased as r.
absl::Status BuildWhere(const RunFilter& f, std::string* where, std::vector<DbValue>* values) {
  std::vector<std::string> conds;
  if (!f.plan.empty()) {
    bool hex = f.plan.size() >= 6 && f.plan.size() <= 64 &&
               f.plan.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (hex) {
      conds.push_back("(r.name = ? OR r.plan_sha256 GLOB ?)");
      values->push_back(f.plan);
      values->push_back(f.plan + "*");
    } else {
      conds.push_back("r.name = ?");
      values->push_back(f.plan);
    }
  }
  // The filters that compare one column with their value, when given.
  const std::pair<const char*, const std::string*> by_value[] = {
      {"r.site = ?", &f.site},
      {"r.run_id IN (SELECT run_id FROM run_tags WHERE tag = ?)", &f.tag},
      {"r.status = ?", &f.status},
      {"r.run_id != ?", &f.exclude_run_id},
  };
  for (const auto& [cond, value] : by_value) {
    if (value->empty()) continue;
    conds.push_back(cond);
    values->push_back(*value);
  }
  if (!f.since.empty()) {
    auto t = ParseDateOrTime(f.since);
    if (!t.ok()) return Annotate(t.status(), "--since");
    conds.push_back("r.started_ns >= ?");
    values->push_back(*t);
  }
  if (!f.until.empty()) {
    auto t = ParseDateOrTime(f.until);
    if (!t.ok()) return Annotate(t.status(), "--until");
    int64_t end = *t;
    // A bare date includes its whole day.
    if (f.until.find('T') == std::string::npos && f.until.find('t') == std::string::npos) {
      end += int64_t{86400} * 1000000000 - 1;
    }
    conds.push_back("r.started_ns <= ?");
    values->push_back(end);
  }
  if (!conds.empty()) *where = " WHERE " + absl::StrJoin(conds, " AND ");
  return absl::OkStatus();
}

// Prepares `select_from` (columns and "FROM table x") joined with the runs
// `filter` keeps, for the rows `match` selects (its values in order), newest
// first, at most filter.limit rows.
absl::Status PrepareTrend(const std::string& select_from, const std::string& match,
                          const std::vector<DbValue>& match_values, const RunFilter& filter,
                          Stmt* q) {
  std::string where;
  std::vector<DbValue> values;
  RETURN_IF_ERROR(BuildWhere(filter, &where, &values));
  std::string sql = absl::StrCat(select_from, " JOIN runs r ON r.run_id = x.run_id",
                                 where.empty() ? " WHERE " : where + " AND ", match,
                                 " ORDER BY r.started_ns DESC, r.run_id DESC");
  values.insert(values.end(), match_values.begin(), match_values.end());
  if (filter.limit > 0) {
    absl::StrAppend(&sql, " LIMIT ?");
    // Built in place: GCC 12 -O2 falsely warns (-Wmaybe-uninitialized) on
    // moving a temporary variant here.
    values.emplace_back(std::in_place_type<int64_t>, filter.limit);
  }
  RETURN_IF_ERROR(q->Prepare(sql));
  q->BindAll(values);
  return absl::OkStatus();
}

// The columns of a RunSummary, of `runs r`, in SummaryOfRow's order.
constexpr absl::string_view kSummaryColumns =
    "r.run_id, r.name, r.plan_sha256, r.site, r.tags, r.started_at, r.status, r.n_results, "
    "r.n_agents, r.workload_hash, r.workload_class";

// A row of kSummaryColumns.
RunSummary SummaryOfRow(const Stmt& q) {
  RunSummary s;
  s.run_id = q.Text(0);
  s.name = q.Text(1);
  s.plan_sha256 = q.Text(2);
  s.site = q.Text(3);
  std::string tags = q.Text(4);
  if (!tags.empty()) s.tags = absl::StrSplit(tags, ',');
  s.started_at = q.Text(5);
  s.status = q.Text(6);
  s.results = static_cast<int>(q.Int(7));
  s.agents = static_cast<int>(q.Int(8));
  s.workload_hash = q.Text(9);
  s.workload_class = q.Text(10);
  return s;
}

}  // namespace

absl::StatusOr<std::vector<RunSummary>> HistoryStore::List(const RunFilter& filter) const {
  std::string where;
  std::vector<DbValue> values;
  RETURN_IF_ERROR(BuildWhere(filter, &where, &values));
  std::string sql = absl::StrCat("SELECT ", kSummaryColumns, " FROM runs r", where,
                                 " ORDER BY r.started_ns DESC, r.run_id DESC");
  if (filter.limit > 0) {
    absl::StrAppend(&sql, " LIMIT ?");
    values.push_back(int64_t{filter.limit});
  }
  Stmt q(db_, path_);
  RETURN_IF_ERROR(q.Prepare(sql));
  q.BindAll(values);
  std::vector<RunSummary> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, q.Step("cannot list runs"));
    if (!row) break;
    out.push_back(SummaryOfRow(q));
  }
  return out;
}

absl::StatusOr<RunSummary> HistoryStore::Summary(const std::string& run_id) const {
  Stmt q(db_, path_);
  RETURN_IF_ERROR(
      q.Prepare(absl::StrCat("SELECT ", kSummaryColumns, " FROM runs r WHERE r.run_id = ?")));
  q.Bind(1, run_id);
  ASSIGN_OR_RETURN(bool row, q.Step("cannot read a run"));
  if (!row) {
    return absl::NotFoundError(absl::StrFormat(
        "run %s is not in the history db %s (see `lockstep history --db %s`)", run_id, path_,
        path_));
  }
  return SummaryOfRow(q);
}

absl::StatusOr<std::vector<std::string>> HistoryStore::CompleteRunsBefore(
    const v1::RunRecord& run, int limit, const std::string& exclude_run_id,
    const std::optional<std::string>& site) const {
  auto started_ns = ParseDateOrTime(run.started_at());
  if (!started_ns.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "run %s: started_at \"%s\" is not a time, so which runs were recorded "
        "before it is unknown; pass --baseline RUN_ID|run.json",
        run.run_id(), run.started_at()));
  }
  // ?6 = 1: any site; else the site ?7.
  const char* sql_hash =
      "SELECT run_id FROM runs WHERE plan_sha256 = ?1 AND status = 'complete' "
      "AND started_ns > 0 AND started_ns <= ?2 AND run_id != ?3 AND run_id != ?4 "
      "AND (?6 = 1 OR site = ?7) ORDER BY started_ns DESC, run_id DESC LIMIT ?5";
  const char* sql_name =
      "SELECT run_id FROM runs WHERE name = ?1 AND status = 'complete' "
      "AND started_ns > 0 AND started_ns <= ?2 AND run_id != ?3 AND run_id != ?4 "
      "AND (?6 = 1 OR site = ?7) ORDER BY started_ns DESC, run_id DESC LIMIT ?5";
  std::vector<std::string> ids;
  for (int pass = 0; pass < 2 && ids.empty(); ++pass) {
    const std::string& what = pass == 0 ? run.plan_sha256() : run.name();
    if (what.empty()) continue;
    Stmt q(db_, path_);
    RETURN_IF_ERROR(q.Prepare(pass == 0 ? sql_hash : sql_name));
    q.BindAll({what, *started_ns, run.run_id(), exclude_run_id, int64_t{limit > 0 ? limit : -1},
               int64_t{site.has_value() ? 0 : 1}, site.value_or("")});
    for (;;) {
      ASSIGN_OR_RETURN(bool row, q.Step("cannot look up the runs before a run"));
      if (!row) break;
      ids.push_back(q.Text(0));
    }
  }
  return ids;
}

absl::StatusOr<std::string> HistoryStore::LastGood(const v1::RunRecord& run,
                                                   const std::optional<std::string>& site) const {
  ASSIGN_OR_RETURN(std::vector<std::string> ids, CompleteRunsBefore(run, 1, "", site));
  if (!ids.empty()) return ids[0];
  return absl::NotFoundError(absl::StrFormat(
      "no complete run of plan %s (sha256 %s)%s recorded at or before run %s (started %s) in "
      "the history db %s; record one with `lockstep import`, or pass --baseline RUN_ID|run.json",
      run.name().empty() ? "(unnamed)" : run.name(),
      run.plan_sha256().empty() ? "(none)" : run.plan_sha256(),
      site.has_value() ? absl::StrCat(" of site \"", *site, "\"") : "", run.run_id(),
      run.started_at(), path_));
}

absl::StatusOr<std::string> HistoryStore::SiteOf(const std::string& run_id) const {
  Stmt q(db_, path_);
  RETURN_IF_ERROR(q.Prepare("SELECT site FROM runs WHERE run_id = ?"));
  q.BindAll({run_id});
  ASSIGN_OR_RETURN(bool row, q.Step("cannot look up a run's site"));
  if (!row) return absl::NotFoundError(absl::StrCat("run ", run_id, " is not recorded"));
  return q.Text(0);
}

absl::StatusOr<std::vector<ResultPoint>> HistoryStore::ResultTrend(const std::string& result_key,
                                                                   const RunFilter& filter) const {
  Stmt q(db_, path_);
  RETURN_IF_ERROR(PrepareTrend(
      "SELECT r.run_id, r.started_at, x.bw_mean_mib, x.repetitions FROM results x",
      "x.result_key = ?", {result_key}, filter, &q));
  std::vector<ResultPoint> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, q.Step("cannot read a result trend"));
    if (!row) break;
    out.push_back({q.Text(0), q.Text(1), q.Real(2), static_cast<uint32_t>(q.Int(3))});
  }
  return out;
}

absl::StatusOr<std::vector<AiMetricPoint>> HistoryStore::AiMetricTrend(
    const std::string& result_key, const std::string& metric, const RunFilter& filter) const {
  if (FindAiMetric(metric) == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "\"%s\" is not an AI figure; the figures are %s", metric, AiMetricNames()));
  }
  Stmt q(db_, path_);
  RETURN_IF_ERROR(PrepareTrend(
      "SELECT r.run_id, r.started_at, x.mean, x.repetitions, x.passed FROM ai_metrics x",
      "x.result_key = ? AND x.metric = ?", {result_key, metric}, filter, &q));
  std::vector<AiMetricPoint> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, q.Step("cannot read an AI figure's trend"));
    if (!row) break;
    out.push_back({q.Text(0), q.Text(1), q.Real(2), static_cast<uint32_t>(q.Int(3)),
                   static_cast<int>(q.Int(4))});
  }
  return out;
}

}  // namespace lockstep
