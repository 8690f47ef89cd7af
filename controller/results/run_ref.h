// Naming a run on the command line (report, compare, gate, export): RUN is a
// run id recorded in the history db, a run directory <out>/<run-id>/, or a
// run.json file. One resolver, so that every command takes every form.
#ifndef LOCKSTEP_CONTROLLER_RESULTS_RUN_REF_H_
#define LOCKSTEP_CONTROLLER_RESULTS_RUN_REF_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "controller/results/history.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// The history db, opened on first use and never created: a command that only
// names runs by path does not need it, and must not leave an empty db behind.
class LazyHistory {
 public:
  explicit LazyHistory(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }
  // The store, opened on the first call. A missing file is NotFound naming
  // the path and --db.
  absl::StatusOr<HistoryStore*> Get();
  bool opened() const { return store_ != nullptr; }

 private:
  std::string path_;
  std::unique_ptr<HistoryStore> store_;
};

struct ResolvedRun {
  enum class Origin {
    kHistory,   // a run id in the db
    kRunJson,   // a run.json file, named or in a run directory (`path`)
    kJournal,   // rebuilt from `path`/journal.jsonl (allow_journal only)
  };
  v1::RunRecord record;
  Origin origin = Origin::kHistory;
  std::string path;  // the run.json file, or the run directory for kJournal
  // Set when the telemetry side file was damaged: what was left out (the
  // record is read all the same). For the command to print.
  std::string warning;
};

struct RunRefOptions {
  // A run directory without run.json is rebuilt from its journal.jsonl
  // (`lockstep report`); the files are not written back.
  bool allow_journal = false;
  // A run.json or journal with a telemetry side file next to it: the agents'
  // full telemetry is put back into the record (ior/telemetry_file.h); a
  // damaged one puts back what it can and sets ResolvedRun::warning.
  bool restore_telemetry = true;
};

// Resolves `ref`, trying in order:
//   1. an existing directory: DIR/run.json; with allow_journal, when it is
//      missing, DIR/journal.jsonl;
//   2. an existing file: a run.json;
//   3. a run id in the history db.
// A path that exists but does not hold a valid run is that error
// (InvalidArgument from the parser, NotFound for a directory that lacks
// run.json); the db is then not consulted. When no form matches: NotFound
// "REF: not a directory with run.json, not a run.json file, not a run id in
// DB (why)", each part saying why it failed.
absl::StatusOr<ResolvedRun> ResolveRunRef(const std::string& ref, LazyHistory* db,
                                          const RunRefOptions& options = {});
// The record alone (ResolvedRun::warning is dropped: commands that print
// it use ResolveRunRef).
absl::StatusOr<v1::RunRecord> ResolveRun(const std::string& ref, LazyHistory* db,
                                         const RunRefOptions& options = {});

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_RUN_REF_H_
