// The history db's schema (PRAGMA user_version 3, history.h), the
// migrations that bring an older db up to it, and opening the store:
// HistoryStore::Open, Init and the destructor.
#include "controller/results/history.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "controller/results/history_parts.h"
#include "controller/results/run_json.h"
#include "controller/results/sqlite_db.h"
#include "controller/results/workload.h"

namespace lockstep {

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
    RETURN_IF_ERROR(Annotate(history_parts::InsertAiMetrics(db, path, *run),
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

absl::StatusOr<int64_t> SchemaVersion(sqlite3* db, const std::string& path) {
  Stmt version(db, path);
  RETURN_IF_ERROR(version.Prepare("PRAGMA user_version"));
  ASSIGN_OR_RETURN(bool row, version.Step("cannot read the schema version"));
  return row ? version.Int(0) : 0;
}  // finalized: no read transaction stays open

}  // namespace

// ---- opening the store -----------------------------------------------------------

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

}  // namespace lockstep
