#include "controller/results/sqlite_db.h"

#include <sqlite3.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"

namespace lockstep {

std::string DbAdvice(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return "another process holds the database locked; retry when it finishes, or pass --db "
             "to use another file";
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_CANTOPEN:
      return "check that the file and its directory exist and are writable by this user, or "
             "pass --db to use another file";
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return "the file is not a lockstep history db or is damaged; move it aside (the run.json "
             "files can be imported again) or pass --db";
    case SQLITE_FULL:
      return "the disk is full";
    default:
      return "";
  }
}

absl::Status DbError(sqlite3* db, int rc, const std::string& path, std::string_view what) {
  std::string msg = absl::StrFormat("history db %s: %s: %s", path, std::string(what),
                                    db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  std::string advice = DbAdvice(rc);
  if (!advice.empty()) absl::StrAppend(&msg, " (", advice, ")");
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(msg);
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_CANTOPEN:
      return absl::PermissionDeniedError(msg);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(msg);
    case SQLITE_FULL:
      return absl::ResourceExhaustedError(msg);
    default:
      return absl::InternalError(msg);
  }
}

absl::StatusOr<sqlite3*> OpenDb(const std::string& path, bool create, int busy_timeout_ms) {
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    absl::Status s = DbError(db, rc, path, "cannot open");
    sqlite3_close(db);
    return s;
  }
  sqlite3_busy_timeout(db, busy_timeout_ms);
  return db;
}

absl::Status Exec(sqlite3* db, const std::string& path, const char* sql, std::string_view what) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) return DbError(db, rc, path, what);
  return absl::OkStatus();
}

// ---- Stmt ------------------------------------------------------------------------

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

absl::Status Stmt::Prepare(std::string_view sql) {
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) return DbError(db_, rc, path_, "cannot prepare a query");
  return absl::OkStatus();
}

void Stmt::Bind(int i, const DbValue& v) {
  if (auto* s = std::get_if<std::string>(&v)) {
    sqlite3_bind_text(stmt_, i, s->data(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
  } else if (auto* n = std::get_if<int64_t>(&v)) {
    sqlite3_bind_int64(stmt_, i, *n);
  } else {
    sqlite3_bind_double(stmt_, i, std::get<double>(v));
  }
}

void Stmt::BindAll(const std::vector<DbValue>& values) {
  for (size_t i = 0; i < values.size(); ++i) Bind(static_cast<int>(i + 1), values[i]);
}

void Stmt::BindUncopied(int i, std::string_view text) {
  sqlite3_bind_text64(stmt_, i, text.data(), text.size(), SQLITE_STATIC, SQLITE_UTF8);
}

absl::StatusOr<bool> Stmt::Step(std::string_view what) {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return DbError(db_, rc, path_, what);
}

absl::Status Stmt::Run(std::string_view what) {
  auto r = Step(what);
  if (!r.ok()) return r.status();
  sqlite3_reset(stmt_);
  return absl::OkStatus();
}

void Stmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Stmt::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  return p ? std::string(reinterpret_cast<const char*>(p),
                         static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
           : std::string();
}

int64_t Stmt::Int(int col) const { return sqlite3_column_int64(stmt_, col); }
double Stmt::Real(int col) const { return sqlite3_column_double(stmt_, col); }
bool Stmt::IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

// ---- Transaction -----------------------------------------------------------------

Transaction::~Transaction() {
  if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

absl::Status Transaction::Begin() {
  RETURN_IF_ERROR(Exec(db_, path_, "BEGIN IMMEDIATE", "cannot start a write"));
  open_ = true;
  return absl::OkStatus();
}

absl::Status Transaction::Commit() {
  RETURN_IF_ERROR(Exec(db_, path_, "COMMIT", "cannot commit"));
  open_ = false;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> TableColumns(sqlite3* db, const std::string& path,
                                                      const std::string& table) {
  Stmt q(db, path);
  RETURN_IF_ERROR(q.Prepare("SELECT name FROM pragma_table_info(?)"));
  q.Bind(1, table);
  std::vector<std::string> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, q.Step(absl::StrCat("cannot read the columns of ", table)));
    if (!row) break;
    out.push_back(q.Text(0));
  }
  return out;
}

}  // namespace lockstep
