#include "controller/results/run_ref.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "controller/record/journal.h"
#include "controller/results/journal_report.h"
#include "controller/record/telemetry_file.h"

namespace lockstep {

absl::StatusOr<HistoryStore*> LazyHistory::Get() {
  if (!store_) {
    HistoryOptions o;
    o.create_if_missing = false;
    ASSIGN_OR_RETURN(store_, HistoryStore::Open(path_, o));
  }
  return store_.get();
}

absl::StatusOr<ResolvedRun> ResolveRunRef(const std::string& ref, LazyHistory* db,
                                          const RunRefOptions& options) {
  ResolvedRun out;
  struct stat st;
  const bool exists = !ref.empty() && ::stat(ref.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    std::string dir = ref;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    const std::string json = dir + "/run.json";
    if (::stat(json.c_str(), &st) == 0) {
      out.origin = ResolvedRun::Origin::kRunJson;
      out.path = json;
      ASSIGN_OR_RETURN(out.record, ReadRunJson(json));
      if (options.restore_telemetry) out.warning = RestoreTelemetryFromDir(dir, &out.record);
      return out;
    }
    if (options.allow_journal && ::stat((dir + "/journal.jsonl").c_str(), &st) == 0) {
      ASSIGN_OR_RETURN(RebuiltRun rebuilt, RebuildRun(dir));
      out.origin = ResolvedRun::Origin::kJournal;
      out.path = dir;
      out.record = std::move(rebuilt.record);
      if (options.restore_telemetry) out.warning = RestoreTelemetryFromDir(dir, &out.record);
      return out;
    }
    if (JournalIsHeld(dir)) {
      return absl::UnavailableError(absl::StrFormat(
          "%s: a run still going (its controller holds journal.jsonl), so it has no run.json "
          "yet; use it once it ends (`lockstep report %s` shows its journal so far)",
          ref, ref));
    }
    if (::stat((dir + "/journal.jsonl").c_str(), &st) == 0) {
      return absl::NotFoundError(absl::StrFormat(
          "%s: a run directory without run.json (its controller stopped early); "
          "`lockstep report %s` rebuilds run.json from its journal.jsonl",
          ref, ref));
    }
    return absl::NotFoundError(absl::StrFormat(
        "%s: a directory without run.json%s, so not a run directory (<out>/<run-id>/ of "
        "`lockstep run`)",
        ref, options.allow_journal ? " or journal.jsonl" : ""));
  }
  if (exists) {
    out.origin = ResolvedRun::Origin::kRunJson;
    out.path = ref;
    ASSIGN_OR_RETURN(out.record, ReadRunJson(ref));
    const size_t slash = ref.rfind('/');
    if (options.restore_telemetry) {
      out.warning = RestoreTelemetryFromDir(
          slash == std::string::npos ? "." : ref.substr(0, slash), &out.record);
    }
    return out;
  }
  // Not a path: a run id, if the db has it.
  constexpr char kNotAPath[] =
      "%s: not a directory with run.json, not a run.json file (no such file or directory), %s";
  std::string why;
  absl::StatusOr<HistoryStore*> store = db->Get();
  if (store.ok()) {
    absl::StatusOr<v1::RunRecord> run = (*store)->Load(ref);
    if (run.ok()) {
      out.origin = ResolvedRun::Origin::kHistory;
      out.path = db->path();
      out.record = std::move(*run);
      return out;
    }
    if (run.status().code() != absl::StatusCode::kNotFound) return run.status();
    why = absl::StrFormat("not a run id in %s (see `lockstep history --db %s`)", db->path(),
                          db->path());
  } else if (store.status().code() == absl::StatusCode::kNotFound) {
    why = absl::StrFormat("not a run id: there is no history db %s (--db names another)",
                          db->path());
  } else {
    // The db is there but unusable (locked, corrupt): that error, not "not found".
    return absl::Status(
        store.status().code(),
        absl::StrFormat(kNotAPath, ref,
                        absl::StrCat("and the history db could not be read to look it up as "
                                     "a run id: ",
                                     store.status().message())));
  }
  return absl::NotFoundError(absl::StrFormat(kNotAPath, ref, why));
}

absl::StatusOr<v1::RunRecord> ResolveRun(const std::string& ref, LazyHistory* db,
                                         const RunRefOptions& options) {
  ASSIGN_OR_RETURN(ResolvedRun run, ResolveRunRef(ref, db, options));
  return std::move(run.record);
}

}  // namespace lockstep
