#include "controller/results/history.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "controller/results/ai_metrics.h"
#include "controller/results/compare.h"
#include "controller/results/sqlite_db.h"
#include "controller/results/workload.h"
#include "google/protobuf/util/json_util.h"

namespace lockstep {

absl::StatusOr<int64_t> ParseDateOrTime(std::string_view text) {
  std::string s(absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size())));
  absl::Time t;
  std::string err;
  if (absl::ParseTime(absl::RFC3339_full, s, &t, &err) ||
      absl::ParseTime("%Y-%m-%d", s, absl::UTCTimeZone(), &t, &err)) {
    return absl::ToUnixNanos(t);
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "\"%s\" is not a date: use YYYY-MM-DD or RFC 3339 (2026-01-31T12:00:00Z)", s));
}

// ---- the schema ----------------------------------------------------------------

namespace {

constexpr int kSchemaVersion = 3;

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  run_id           TEXT PRIMARY KEY,
  name             TEXT NOT NULL,
  plan_sha256      TEXT NOT NULL,
  plan_file        TEXT NOT NULL,
  site             TEXT NOT NULL,
  tags             TEXT NOT NULL,          -- comma-joined, for display; run_tags is the index
  started_at       TEXT NOT NULL,
  started_ns       INTEGER NOT NULL,       -- 0 when started_at does not parse
  finished_at      TEXT NOT NULL,
  status           TEXT NOT NULL,
  format_version   INTEGER NOT NULL,
  lockstep_version TEXT NOT NULL,
  controller_host  TEXT NOT NULL,
  n_results        INTEGER NOT NULL,
  n_agents         INTEGER NOT NULL,
  recorded_at      TEXT NOT NULL,
  run_json         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_time   ON runs(started_ns);
CREATE INDEX IF NOT EXISTS runs_by_plan   ON runs(plan_sha256, started_ns);
CREATE INDEX IF NOT EXISTS runs_by_name   ON runs(name, started_ns);
CREATE INDEX IF NOT EXISTS runs_by_site   ON runs(site, started_ns);
CREATE TABLE IF NOT EXISTS run_tags (
  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  tag    TEXT NOT NULL,
  PRIMARY KEY (run_id, tag)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS run_tags_by_tag ON run_tags(tag, run_id);
CREATE TABLE IF NOT EXISTS agents (
  run_id         TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  address        TEXT NOT NULL,
  role           TEXT NOT NULL,
  status         TEXT NOT NULL,
  hostname       TEXT NOT NULL,
  kernel         TEXT NOT NULL,
  os             TEXT NOT NULL,
  agent_version  TEXT NOT NULL,
  lustre_version TEXT NOT NULL,
  cores          INTEGER NOT NULL,
  memory_bytes   INTEGER NOT NULL,
  fs_types       TEXT NOT NULL,            -- comma-joined distinct fs types of the roots
  facts_json     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS agents_by_run ON agents(run_id);
CREATE TABLE IF NOT EXISTS results (
  id               INTEGER PRIMARY KEY,
  run_id           TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  test_id          INTEGER NOT NULL,
  phase            TEXT NOT NULL,
  operation        TEXT NOT NULL,
  api              TEXT NOT NULL,
  num_tasks        INTEGER NOT NULL,
  tasks_per_node   INTEGER NOT NULL,
  transfer_bytes   INTEGER NOT NULL,
  block_bytes      INTEGER NOT NULL,
  segments         INTEGER NOT NULL,
  file_per_process INTEGER NOT NULL,
  reorder          INTEGER NOT NULL,
  result_key       TEXT NOT NULL,          -- ResultKey::ToString(): what compare matches on
  repetitions      INTEGER NOT NULL,
  bw_mean_mib      REAL NOT NULL,
  bw_std_mib       REAL NOT NULL,
  bw_min_mib       REAL NOT NULL,
  bw_max_mib       REAL NOT NULL,
  ops_mean         REAL NOT NULL,
  mean_time_s      REAL NOT NULL,
  bw_per_rep_json  TEXT NOT NULL           -- JSON array of MiB/s, one per repetition
);
CREATE INDEX IF NOT EXISTS results_by_run ON results(run_id);
CREATE INDEX IF NOT EXISTS results_by_key ON results(result_key, run_id);
)sql";

// Version 2: the AI figures of train and checkpoint results
// (controller/results/ai_metrics.h), one row per result and metric.
constexpr char kSchemaV2[] = R"sql(
CREATE TABLE IF NOT EXISTS ai_metrics (
  run_id           TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  test_id          INTEGER NOT NULL,
  result_key       TEXT NOT NULL,          -- as results.result_key
  metric           TEXT NOT NULL,          -- AiMetricDef::name
  repetitions      INTEGER NOT NULL,
  mean             REAL NOT NULL,
  min              REAL NOT NULL,
  max              REAL NOT NULL,
  threshold        REAL NOT NULL,          -- au: the phase's au_threshold, else 0
  passed           INTEGER NOT NULL,       -- au: 1 pass, 0 fail; -1 not judged
  per_rep_json     TEXT NOT NULL           -- JSON array, one value per repetition
);
CREATE INDEX IF NOT EXISTS ai_metrics_by_run ON ai_metrics(run_id);
CREATE INDEX IF NOT EXISTS ai_metrics_by_key ON ai_metrics(result_key, metric, run_id);
)sql";

// Version 3: each run's workload identity (controller/results/workload.h),
// what `compare --sites` groups and checks by.
constexpr char kSchemaV3[] = R"sql(
ALTER TABLE runs ADD COLUMN workload_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN workload_class TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS runs_by_workload ON runs(workload_hash, started_ns);
)sql";

std::string RoleName(v1::Role r) { return v1::Role_Name(r); }

std::string FormatValues(const std::vector<double>& values) {
  std::vector<std::string> parts;
  for (double v : values) parts.push_back(absl::StrFormat("%.10g", v));
  return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
}

std::string FormatReps(const v1::SummaryRow& row) {
  return FormatValues({row.bw_mib_per_rep().begin(), row.bw_mib_per_rep().end()});
}

// The ai_metrics rows of `run` (inside the caller's transaction).
absl::Status InsertAiMetrics(sqlite3* db, const std::string& path, const v1::RunRecord& run) {
  const std::vector<AiMetric> metrics = AiMetricsOf(run);
  if (metrics.empty()) return absl::OkStatus();
  std::map<std::string, uint32_t> test_of;  // result key -> test id
  for (const auto& test : run.tests()) {
    for (const auto& row : test.summary()) {
      test_of.emplace(KeyOf(row, test).ToString(), row.test_id() ? row.test_id() : test.test_id());
    }
  }
  Stmt ins(db, path);
  RETURN_IF_ERROR(ins.Prepare(
      "INSERT INTO ai_metrics (run_id, test_id, result_key, metric, repetitions, mean, min, max, "
      "threshold, passed, per_rep_json) VALUES (?,?,?,?,?,?,?,?,?,?,?)"));
  for (const AiMetric& m : metrics) {
    if (m.values.empty()) continue;
    const std::string key = m.key.ToString();
    const auto [lo, hi] = std::minmax_element(m.values.begin(), m.values.end());
    ins.BindAll({run.run_id(), int64_t{test_of[key]}, key, m.metric,
                 static_cast<int64_t>(m.values.size()), Mean(m.values), *lo, *hi, m.threshold,
                 int64_t{m.passed}, FormatValues(m.values)});
    RETURN_IF_ERROR(ins.Run("cannot insert an AI figure"));
  }
  return absl::OkStatus();
}

// Version 1 -> 2: the ai_metrics table, filled from the stored run.json of
// the runs that have AI phases (inside the caller's transaction).
absl::Status MigrateToV2(sqlite3* db, const std::string& path) {
  RETURN_IF_ERROR(Exec(db, path, kSchemaV2, "cannot add the ai_metrics table (schema 1 -> 2)"));
  Stmt q(db, path);
  RETURN_IF_ERROR(q.Prepare("SELECT run_id, run_json FROM runs WHERE run_json LIKE '%\"ai\"%'"));
  for (;;) {
    ASSIGN_OR_RETURN(bool row, q.Step("cannot read the runs to migrate (schema 1 -> 2)"));
    if (!row) break;
    const std::string run_id = q.Text(0);
    auto run = ParseRunJson(q.Text(1), absl::StrFormat("%s (run %s)", path, run_id));
    if (!run.ok()) continue;  // Load reports it; the migration keeps the run as it is
    RETURN_IF_ERROR(Annotate(InsertAiMetrics(db, path, *run),
                             absl::StrCat("migrating run ", run_id, " (schema 1 -> 2)")));
  }
  return absl::OkStatus();
}

// Version 2 -> 3: the workload columns, filled from the stored run.json of
// every run (inside the caller's transaction). A run whose run.json does not
// parse keeps '' (Load reports it).
absl::Status MigrateToV3(sqlite3* db, const std::string& path) {
  RETURN_IF_ERROR(Exec(db, path, kSchemaV3, "cannot add the workload columns (schema 2 -> 3)"));
  std::vector<std::pair<std::string, WorkloadIdentity>> ids;
  {
    Stmt q(db, path);
    RETURN_IF_ERROR(q.Prepare("SELECT run_id, run_json FROM runs"));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, q.Step("cannot read the runs to migrate (schema 2 -> 3)"));
      if (!row) break;
      auto run = ParseRunJson(q.Text(1), absl::StrFormat("%s (run %s)", path, q.Text(0)));
      if (run.ok()) ids.emplace_back(q.Text(0), WorkloadOf(*run));
    }
  }
  Stmt up(db, path);
  RETURN_IF_ERROR(
      up.Prepare("UPDATE runs SET workload_hash = ?, workload_class = ? WHERE run_id = ?"));
  for (const auto& [run_id, w] : ids) {
    up.BindAll({w.hash, w.workload_class, run_id});
    RETURN_IF_ERROR(up.Run("cannot store a run's workload hash (schema 2 -> 3)"));
  }
  return absl::OkStatus();
}

std::string FactsJson(const v1::HostFacts& f) {
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(f, &out);
  return out;
}

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

}  // namespace

// ---- HistoryStore ----------------------------------------------------------------

absl::StatusOr<std::unique_ptr<HistoryStore>> HistoryStore::Open(const std::string& path,
                                                                 const HistoryOptions& options) {
  struct stat st;
  bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "history db %s is a directory; pass --db with a file path such as %s/history.db", path,
        path));
  }
  if (!exists) {
    if (!options.create_if_missing) {
      return absl::NotFoundError(absl::StrFormat(
          "no history db at %s; record runs with `lockstep import RUN.json` or pass --db", path));
    }
    auto slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      absl::Status made = MakeDirectories(path.substr(0, slash), 0755);
      if (!made.ok()) {
        return absl::Status(made.code(),
                            absl::StrCat(made.message(), " (the history db's directory: create "
                                                         "it, or pass --db to use another file)"));
      }
    }
  }
  ASSIGN_OR_RETURN(sqlite3* db, OpenDb(path, options.create_if_missing, options.busy_timeout_ms));
  std::unique_ptr<HistoryStore> store(new HistoryStore(db, path));
  RETURN_IF_ERROR(store->Init());
  return store;
}

HistoryStore::~HistoryStore() { sqlite3_close(db_); }

namespace {

absl::StatusOr<int64_t> SchemaVersion(sqlite3* db, const std::string& path) {
  Stmt version(db, path);
  RETURN_IF_ERROR(version.Prepare("PRAGMA user_version"));
  ASSIGN_OR_RETURN(bool row, version.Step("cannot read the schema version"));
  return row ? version.Int(0) : 0;
}  // finalized: no read transaction stays open

}  // namespace

absl::Status HistoryStore::Init() {
  ASSIGN_OR_RETURN(int64_t v, SchemaVersion(db_, path_));
  if (v > kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "history db %s has schema version %d but this lockstep knows %d; upgrade lockstep or "
        "pass --db to use another file",
        path_, v, kSchemaVersion));
  }
  RETURN_IF_ERROR(Exec(db_, path_, "PRAGMA foreign_keys = ON", "cannot enable foreign keys"));
  if (v == 0) {
    // Some file systems (NFS without locks) refuse WAL and answer with
    // another mode; the db still works, with readers blocking the writer.
    Stmt wal(db_, path_);
    RETURN_IF_ERROR(wal.Prepare("PRAGMA journal_mode = WAL"));
    RETURN_IF_ERROR(wal.Step("cannot switch to WAL mode").status());
  }
  if (v < kSchemaVersion) {
    Transaction tx(db_, path_);
    RETURN_IF_ERROR(tx.Begin());
    // Another process may have upgraded the db before our write began.
    ASSIGN_OR_RETURN(v, SchemaVersion(db_, path_));
    if (v == 0) {
      RETURN_IF_ERROR(Exec(db_, path_, kSchema, "cannot create the tables"));
      RETURN_IF_ERROR(Exec(db_, path_, kSchemaV2, "cannot create the tables"));
      RETURN_IF_ERROR(Exec(db_, path_, kSchemaV3, "cannot create the tables"));
    } else {
      if (v == 1) RETURN_IF_ERROR(MigrateToV2(db_, path_));
      if (v <= 2) RETURN_IF_ERROR(MigrateToV3(db_, path_));
    }
    RETURN_IF_ERROR(Exec(db_, path_, absl::StrCat("PRAGMA user_version = ", kSchemaVersion).c_str(),
                         "cannot set the schema version"));
    RETURN_IF_ERROR(tx.Commit());
  }
  RETURN_IF_ERROR(Exec(db_, path_, "PRAGMA synchronous = NORMAL", "cannot set synchronous"));
  return absl::OkStatus();
}

absl::Status HistoryStore::Record(const v1::RunRecord& run, const std::string& site,
                                  const std::vector<std::string>& tags,
                                  std::string_view json_text) {
  if (run.run_id().empty()) {
    return absl::InvalidArgumentError("cannot record a run without run_id");
  }
  std::set<std::string> tag_set;
  for (const auto& t : tags) {
    if (t.empty() || t.find(',') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "tag \"%s\": a tag must be non-empty and contain no comma (give --tag once per tag)", t));
    }
    tag_set.insert(t);
  }
  std::string made;  // only when the caller has no run.json text
  if (json_text.empty()) made = RunToJson(run);
  const std::string_view json = json_text.empty() ? std::string_view(made) : json_text;
  int64_t started_ns = 0;
  if (auto t = ParseDateOrTime(run.started_at()); t.ok()) started_ns = *t;
  int n_results = 0;
  for (const auto& test : run.tests()) n_results += test.summary_size();

  Transaction tx(db_, path_);
  RETURN_IF_ERROR(Annotate(tx.Begin(), absl::StrCat("recording run ", run.run_id())));
  {
    Stmt del(db_, path_);
    RETURN_IF_ERROR(del.Prepare("DELETE FROM runs WHERE run_id = ?"));
    del.Bind(1, run.run_id());
    RETURN_IF_ERROR(del.Run("cannot replace the earlier record of the run"));
  }
  {
    Stmt ins(db_, path_);
    RETURN_IF_ERROR(ins.Prepare(
        "INSERT INTO runs (run_id, name, plan_sha256, plan_file, site, tags, started_at, "
        "started_ns, finished_at, status, format_version, lockstep_version, controller_host, "
        "n_results, n_agents, recorded_at, run_json, workload_hash, workload_class) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
    const WorkloadIdentity w = WorkloadOf(run);
    ins.BindAll({run.run_id(), run.name(), run.plan_sha256(), run.plan_file(), site,
                 absl::StrJoin(tag_set, ","), run.started_at(), started_ns, run.finished_at(),
                 run.status(), int64_t{run.format_version()}, run.lockstep_version(),
                 run.controller_host(), int64_t{n_results}, int64_t{run.agents_size()},
                 FormatRfc3339(RealtimeNs())});
    ins.BindUncopied(17, json);
    ins.Bind(18, w.hash);
    ins.Bind(19, w.workload_class);
    RETURN_IF_ERROR(ins.Run("cannot insert the run"));
  }
  {
    Stmt ins(db_, path_);
    RETURN_IF_ERROR(ins.Prepare("INSERT INTO run_tags (run_id, tag) VALUES (?, ?)"));
    for (const auto& t : tag_set) {
      ins.BindAll({run.run_id(), t});
      RETURN_IF_ERROR(ins.Run("cannot insert a tag"));
    }
  }
  {
    Stmt ins(db_, path_);
    RETURN_IF_ERROR(ins.Prepare(
        "INSERT INTO agents (run_id, address, role, status, hostname, kernel, os, agent_version, "
        "lustre_version, cores, memory_bytes, fs_types, facts_json) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"));
    for (const auto& a : run.agents()) {
      const auto& f = a.facts();
      std::set<std::string> fs;
      for (const auto& root : f.roots()) {
        if (!root.fs_type().empty()) fs.insert(root.fs_type());
      }
      ins.BindAll({run.run_id(), a.address(), RoleName(a.role()), a.status(), f.hostname(),
                   f.kernel(), f.os(), f.agent_version(), f.lustre_version(),
                   int64_t{f.cores()}, static_cast<int64_t>(f.memory_bytes()),
                   absl::StrJoin(fs, ","), FactsJson(f)});
      RETURN_IF_ERROR(ins.Run("cannot insert an agent"));
    }
  }
  {
    Stmt ins(db_, path_);
    RETURN_IF_ERROR(ins.Prepare(
        "INSERT INTO results (run_id, test_id, phase, operation, api, num_tasks, tasks_per_node, "
        "transfer_bytes, block_bytes, segments, file_per_process, reorder, result_key, "
        "repetitions, bw_mean_mib, bw_std_mib, bw_min_mib, bw_max_mib, ops_mean, mean_time_s, "
        "bw_per_rep_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
    for (const auto& test : run.tests()) {
      for (const auto& row : test.summary()) {
        ins.BindAll({run.run_id(), int64_t{row.test_id() ? row.test_id() : test.test_id()},
                     row.phase(), row.operation(), row.api(), int64_t{row.num_tasks()},
                     int64_t{row.tasks_per_node()}, static_cast<int64_t>(row.transfer_bytes()),
                     static_cast<int64_t>(row.block_bytes()), static_cast<int64_t>(row.segments()),
                     int64_t{row.file_per_process() ? 1 : 0}, int64_t{row.reorder()},
                     KeyOf(row, test).ToString(), int64_t{row.repetitions()}, row.bw_mean_mib(),
                     row.bw_std_mib(), row.bw_min_mib(), row.bw_max_mib(), row.ops_mean(),
                     row.mean_time_s(), FormatReps(row)});
        RETURN_IF_ERROR(ins.Run("cannot insert a result"));
      }
    }
  }
  RETURN_IF_ERROR(InsertAiMetrics(db_, path_, run));
  return Annotate(tx.Commit(), absl::StrCat("recording run ", run.run_id()));
}

namespace {

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

namespace {

absl::StatusOr<std::string> StoredJson(sqlite3* db, const std::string& path,
                                       const std::string& run_id) {
  Stmt q(db, path);
  RETURN_IF_ERROR(q.Prepare("SELECT run_json FROM runs WHERE run_id = ?"));
  q.Bind(1, run_id);
  ASSIGN_OR_RETURN(bool row, q.Step("cannot read a run"));
  if (!row) {
    return absl::NotFoundError(absl::StrFormat(
        "run %s is not in the history db %s (see `lockstep history --db %s`)", run_id, path,
        path));
  }
  return q.Text(0);
}

}  // namespace

absl::StatusOr<v1::RunRecord> HistoryStore::Load(const std::string& run_id) const {
  ASSIGN_OR_RETURN(std::string json, StoredJson(db_, path_, run_id));
  return ParseRunJson(json, absl::StrFormat("%s (run %s)", path_, run_id));
}

absl::StatusOr<std::vector<std::string>> HistoryStore::Import(
    const std::vector<std::string>& paths, const std::string& site,
    const std::vector<std::string>& tags) {
  if (paths.empty()) return absl::InvalidArgumentError("import: no run.json files given");
  std::vector<std::pair<v1::RunRecord, std::string>> runs;
  for (const auto& p : paths) {
    ASSIGN_OR_RETURN(std::string text, ReadFileToString(p));
    ASSIGN_OR_RETURN(v1::RunRecord run, ParseRunJson(text, p));
    runs.emplace_back(std::move(run), std::move(text));
  }
  std::vector<std::string> ids;
  for (size_t i = 0; i < runs.size(); ++i) {
    RETURN_IF_ERROR(Annotate(Record(runs[i].first, site, tags, runs[i].second), paths[i]));
    ids.push_back(runs[i].first.run_id());
  }
  return ids;
}

absl::StatusOr<std::string> HistoryStore::RunJsonText(const std::string& run_id) const {
  return StoredJson(db_, path_, run_id);
}

absl::Status HistoryStore::Export(const std::string& run_id, const std::string& path) const {
  ASSIGN_OR_RETURN(std::string json, StoredJson(db_, path_, run_id));
  return WriteFileAtomically(path, json);
}

absl::StatusOr<std::vector<std::string>> HistoryStore::CompleteRunsBefore(
    const v1::RunRecord& run, int limit, const std::string& exclude_run_id) const {
  auto started_ns = ParseDateOrTime(run.started_at());
  if (!started_ns.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "run %s: started_at \"%s\" is not a time, so which runs were recorded "
        "before it is unknown; pass --baseline RUN_ID|run.json",
        run.run_id(), run.started_at()));
  }
  const char* sql_hash =
      "SELECT run_id FROM runs WHERE plan_sha256 = ? AND status = 'complete' "
      "AND started_ns > 0 AND started_ns <= ? AND run_id != ? AND run_id != ? "
      "ORDER BY started_ns DESC, run_id DESC LIMIT ?";
  const char* sql_name =
      "SELECT run_id FROM runs WHERE name = ? AND status = 'complete' "
      "AND started_ns > 0 AND started_ns <= ? AND run_id != ? AND run_id != ? "
      "ORDER BY started_ns DESC, run_id DESC LIMIT ?";
  std::vector<std::string> ids;
  for (int pass = 0; pass < 2 && ids.empty(); ++pass) {
    const std::string& what = pass == 0 ? run.plan_sha256() : run.name();
    if (what.empty()) continue;
    Stmt q(db_, path_);
    RETURN_IF_ERROR(q.Prepare(pass == 0 ? sql_hash : sql_name));
    q.BindAll({what, *started_ns, run.run_id(), exclude_run_id, int64_t{limit > 0 ? limit : -1}});
    for (;;) {
      ASSIGN_OR_RETURN(bool row, q.Step("cannot look up the runs before a run"));
      if (!row) break;
      ids.push_back(q.Text(0));
    }
  }
  return ids;
}

absl::StatusOr<std::string> HistoryStore::LastGood(const v1::RunRecord& run) const {
  ASSIGN_OR_RETURN(std::vector<std::string> ids, CompleteRunsBefore(run, 1));
  if (!ids.empty()) return ids[0];
  return absl::NotFoundError(absl::StrFormat(
      "no complete run of plan %s (sha256 %s) recorded at or before run %s (started %s) in the "
      "history db %s; record one with `lockstep import`, or pass --baseline RUN_ID|run.json",
      run.name().empty() ? "(unnamed)" : run.name(),
      run.plan_sha256().empty() ? "(none)" : run.plan_sha256(), run.run_id(), run.started_at(),
      path_));
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
