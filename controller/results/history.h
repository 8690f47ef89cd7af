// The history of runs: an SQLite database (default
// ./lockstep-results/history.db) that keeps every recorded run.json whole,
// plus indexed rows for listing and comparing without parsing blobs:
//
//   runs      run id, name, plan sha256, site, tags, started_at, status,
//             the whole run.json text, the workload hash and class
//   run_tags  (run id, tag)
//   agents    one row per agent of a run: kernel, agent_version,
//             lustre_version, cores, memory, fs types, the HostFacts as JSON
//   results   one row per SummaryRow: test id, phase, operation, tasks,
//             transfer/block/segments/fpp, the ResultKey text, bandwidth
//             statistics, per-repetition bandwidths as a JSON array
//   ai_metrics one row per AI figure of a train or checkpoint result
//             (controller/results/ai_metrics.h): result key, metric, mean,
//             min, max, AU threshold and pass, per-repetition values
//
// Schema versions (PRAGMA user_version): 1 without ai_metrics; 2 with it;
// 3 with runs.workload_hash and workload_class (controller/results/
// workload.h). Opening an older db adds what it lacks and fills it from the
// stored run.json of its runs, in one transaction; the other tables stay as they
// were, so every run recorded before still lists, loads and compares. The
// SQLite calls themselves are controller/results/sqlite_db.h.
//
// WAL mode and a busy timeout let a reader and one writer share the file; a
// database still locked after the timeout, or one that cannot be written,
// gives an error that names the file and the way out.
#ifndef LOCKSTEP_CONTROLLER_RESULTS_HISTORY_H_
#define LOCKSTEP_CONTROLLER_RESULTS_HISTORY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "controller/results/run_json.h"  // the store keeps each run as its run.json
#include "lockstep/v1/results.pb.h"

struct sqlite3;

namespace lockstep {

inline constexpr char kDefaultHistoryPath[] = "lockstep-results/history.db";

// Parses "2026-01-31" (a whole UTC day starts) or RFC 3339 (surrounding
// whitespace ignored). InvalidArgument naming the text when it is neither, or
// when it is before 0001-01-01 or after 9999-12-31 (absl parses "99999-01-01"
// as a year, which no one meant).
absl::StatusOr<absl::Time> ParseInstant(std::string_view text);
// ParseInstant in unix ns; an instant after 2262-04-11 (the end of int64 ns)
// is that day.
absl::StatusOr<int64_t> ParseDateOrTime(std::string_view text);

// ---- the store ---------------------------------------------------------------

struct HistoryOptions {
  // Create the file (and its directory) when missing. When false, a missing
  // file is NotFound naming the path.
  bool create_if_missing = true;
  int busy_timeout_ms = 5000;
};

struct RunFilter {
  std::string plan;            // plan name, or plan sha256 (a prefix of >= 6 hex digits)
  std::string site;
  std::string tag;
  std::string since;           // date or RFC 3339, inclusive
  std::string until;           // date (the whole day is included) or RFC 3339, inclusive
  std::string status;          // e.g. "complete"
  std::string exclude_run_id;  // skip this run (gate: never its own baseline)
  int limit = 50;              // <= 0: no limit
};

struct RunSummary {
  std::string run_id;
  std::string name;
  std::string plan_sha256;
  std::string site;
  std::vector<std::string> tags;
  std::string started_at;
  std::string status;
  int results = 0;             // SummaryRows recorded
  int agents = 0;
  std::string workload_hash;   // WorkloadOf(run).hash ("" when run.json did not parse)
  std::string workload_class;
};

// One result of one run, for trends across runs.
struct ResultPoint {
  std::string run_id;
  std::string started_at;
  double bw_mean_mib = 0;
  uint32_t repetitions = 0;
};

// One AI figure of one result of one run, for trends across runs.
struct AiMetricPoint {
  std::string run_id;
  std::string started_at;
  double mean = 0;             // over the repetitions; AU as a fraction
  uint32_t repetitions = 0;
  int passed = -1;             // au: 1 pass, 0 fail, -1 not judged
};

class HistoryStore {
 public:
  static absl::StatusOr<std::unique_ptr<HistoryStore>> Open(const std::string& path,
                                                            const HistoryOptions& options = {});
  ~HistoryStore();
  HistoryStore(const HistoryStore&) = delete;
  HistoryStore& operator=(const HistoryStore&) = delete;

  const std::string& path() const { return path_; }

  // Records a run (one transaction). A run id already present is replaced
  // (re-importing the same file is harmless). `json_text`, when given, is
  // stored as is (Import keeps the file byte for byte); otherwise RunToJson.
  absl::Status Record(const v1::RunRecord& run, const std::string& site,
                      const std::vector<std::string>& tags, std::string_view json_text = {});

  // Newest first.
  absl::StatusOr<std::vector<RunSummary>> List(const RunFilter& filter) const;
  // NotFound names the run id and the db.
  absl::StatusOr<v1::RunRecord> Load(const std::string& run_id) const;
  absl::StatusOr<RunSummary> Summary(const std::string& run_id) const;

  // Reads, validates and records each file; all files are checked before any
  // is recorded, so a bad file leaves the db unchanged. Returns the run ids.
  absl::StatusOr<std::vector<std::string>> Import(const std::vector<std::string>& paths,
                                                  const std::string& site,
                                                  const std::vector<std::string>& tags);
  // The stored run.json text of `run_id`, byte for byte (NotFound as Load).
  absl::StatusOr<std::string> RunJsonText(const std::string& run_id) const;
  // Writes the stored run.json of `run_id` to `path` atomically.
  absl::Status Export(const std::string& run_id, const std::string& path) const;

  // The runs with status "complete" of `run`'s plan that started no later
  // than `run` (started_at; ties count as earlier), newest first (started_at,
  // then run id, descending), at most `limit` of them (<= 0: all); never
  // `run` itself nor `exclude_run_id`. "Its plan": the runs whose plan sha256
  // equals run.plan_sha256() when there are any, else those whose name
  // equals run.name(). Runs that started after `run` never appear, so
  // recording them cannot change the answer. Runs whose started_at did not
  // parse when recorded never appear either (their place is unknown).
  // `run` need not be in the db. With `site`, only that site's runs (a db
  // mirrored from a results service holds every site's shared runs).
  // InvalidArgument when run.started_at is not a time (ParseDateOrTime;
  // names the run and the value).
  absl::StatusOr<std::vector<std::string>> CompleteRunsBefore(
      const v1::RunRecord& run, int limit, const std::string& exclude_run_id = "",
      const std::optional<std::string>& site = std::nullopt) const;

  // The baseline `lockstep gate --baseline last-good` uses for `run`: the
  // newest of CompleteRunsBefore(run, site). NotFound (naming the plan, the
  // run, the site and the db) when there is none; InvalidArgument as
  // CompleteRunsBefore.
  absl::StatusOr<std::string> LastGood(const v1::RunRecord& run,
                                       const std::optional<std::string>& site = std::nullopt) const;

  // The site `run_id` was recorded with; NotFound when it is not recorded.
  absl::StatusOr<std::string> SiteOf(const std::string& run_id) const;

  // The bandwidth of one result (ResultKey::ToString()) across the runs the
  // filter selects, newest first.
  absl::StatusOr<std::vector<ResultPoint>> ResultTrend(const std::string& result_key,
                                                       const RunFilter& filter) const;
  // One AI figure (AiMetricDef::name) of one result across the runs the
  // filter selects, newest first. InvalidArgument names an unknown metric
  // and lists the known ones.
  absl::StatusOr<std::vector<AiMetricPoint>> AiMetricTrend(const std::string& result_key,
                                                           const std::string& metric,
                                                           const RunFilter& filter) const;

 private:
  HistoryStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  absl::Status Init();
  sqlite3* db_;
  std::string path_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_HISTORY_H_
