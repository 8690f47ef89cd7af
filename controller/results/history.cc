// The history store's writing side and its whole-run reads: recording a run
// (HistoryStore::Record, Import), a stored run.json read back (Load,
// RunJsonText, Export), and ParseDateOrTime. The schema, its migrations and
// opening the store are in history_schema.cc; listings, baselines and trends
// in history_queries.cc.
#include "controller/results/history.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "controller/results/ai_metrics.h"
#include "controller/results/compare.h"
#include "controller/results/history_parts.h"
#include "controller/results/sqlite_db.h"
#include "controller/results/workload.h"
#include "google/protobuf/util/json_util.h"

namespace lockstep {

absl::StatusOr<absl::Time> ParseInstant(std::string_view text) {
  std::string s(absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size())));
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, s, &t, &err) &&
      !absl::ParseTime("%Y-%m-%d", s, absl::UTCTimeZone(), &t, &err)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "\"%s\" is not a date: use YYYY-MM-DD or RFC 3339 (2026-01-31T12:00:00Z)", s));
  }
  const absl::TimeZone utc = absl::UTCTimeZone();
  if (t < absl::FromCivil(absl::CivilDay(1, 1, 1), utc) ||
      t >= absl::FromCivil(absl::CivilDay(10000, 1, 1), utc)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "\"%s\" is not a date from 0001-01-01 to 9999-12-31 (a year has four digits)", s));
  }
  return t;
}

absl::StatusOr<int64_t> ParseDateOrTime(std::string_view text) {
  ASSIGN_OR_RETURN(const absl::Time t, ParseInstant(text));
  return absl::ToUnixNanos(t);
}

namespace {

std::string RoleName(v1::Role r) { return v1::Role_Name(r); }

std::string FormatValues(const std::vector<double>& values) {
  std::vector<std::string> parts;
  for (double v : values) parts.push_back(absl::StrFormat("%.10g", v));
  return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
}

std::string FormatReps(const v1::SummaryRow& row) {
  return FormatValues({row.bw_mib_per_rep().begin(), row.bw_mib_per_rep().end()});
}

std::string FactsJson(const v1::HostFacts& f) {
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(f, &out);
  return out;
}

}  // namespace

namespace history_parts {

// The ai_metrics rows of `run` (history_parts.h).
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

}  // namespace history_parts

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
  RETURN_IF_ERROR(history_parts::InsertAiMetrics(db_, path_, run));
  return Annotate(tx.Commit(), absl::StrCat("recording run ", run.run_id()));
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

}  // namespace lockstep
