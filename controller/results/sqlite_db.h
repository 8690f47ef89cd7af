// A thin layer over SQLite for the history db (controller/results/history.h):
// opening a file, statements with bound values, transactions, and errors
// that name the db file, what was being done and the way out.
//
// Every error is "history db PATH: WHAT: SQLITE MESSAGE (ADVICE)", with the
// code that fits the SQLite result: Unavailable (busy, locked),
// PermissionDenied (read-only, cannot open), DataLoss (corrupt, not a db),
// ResourceExhausted (disk full), Internal otherwise.
#ifndef LOCKSTEP_CONTROLLER_RESULTS_SQLITE_DB_H_
#define LOCKSTEP_CONTROLLER_RESULTS_SQLITE_DB_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct sqlite3;
struct sqlite3_stmt;

namespace lockstep {

// The status for SQLite result `rc` while doing `what` on the db at `path`
// (db may be null: the message then comes from the code alone).
absl::Status DbError(sqlite3* db, int rc, const std::string& path, std::string_view what);

// What to do about an SQLite result code, in words ("" when there is no
// advice beyond the message).
std::string DbAdvice(int rc);

// Opens (read-write; creating the file when `create`) with a busy timeout.
// The caller owns the handle (sqlite3_close). Errors as DbError("cannot open").
absl::StatusOr<sqlite3*> OpenDb(const std::string& path, bool create, int busy_timeout_ms);

// Runs `sql` (one or several statements, no results wanted).
absl::Status Exec(sqlite3* db, const std::string& path, const char* sql, std::string_view what);

using DbValue = std::variant<std::string, int64_t, double>;

// One prepared statement. `path` names the db in errors and must outlive it.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& path) : db_(db), path_(path) {}
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // Error: "cannot prepare a query".
  absl::Status Prepare(std::string_view sql);
  // Parameters count from 1; text is copied.
  void Bind(int i, const DbValue& v);
  void BindAll(const std::vector<DbValue>& values);
  // Not copied: `text` must outlive the statement's next Run or Reset (a
  // run.json of tens of MB is bound without a copy).
  void BindUncopied(int i, std::string_view text);
  // True for a row, false when done; an error names `what`.
  absl::StatusOr<bool> Step(std::string_view what);
  // Steps once (a statement without rows) and resets for the next bindings.
  absl::Status Run(std::string_view what);
  void Reset();
  // Columns of the current row, counting from 0.
  std::string Text(int col) const;
  int64_t Int(int col) const;
  double Real(int col) const;
  bool IsNull(int col) const;

 private:
  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN IMMEDIATE ... COMMIT; rolled back when destroyed uncommitted.
class Transaction {
 public:
  Transaction(sqlite3* db, const std::string& path) : db_(db), path_(path) {}
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  absl::Status Begin();   // "cannot start a write"
  absl::Status Commit();  // "cannot commit"

 private:
  sqlite3* db_;
  const std::string& path_;
  bool open_ = false;
};

// The names of the columns of `table` (empty when there is no such table).
absl::StatusOr<std::vector<std::string>> TableColumns(sqlite3* db, const std::string& path,
                                                      const std::string& table);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_SQLITE_DB_H_
