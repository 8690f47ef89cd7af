#include "controller/results/sqlite_db.h"

#include <sqlite3.h>

#include <string>

#include "common/files.h"
#include "gtest/gtest.h"
#include "unit/results_fixtures.h"

namespace lockstep {
namespace {

using testing::Has;
using testing::TempDir;

struct Db {
  explicit Db(const std::string& p) : path(p) {
    auto opened = OpenDb(path, /*create=*/true, /*busy_timeout_ms=*/0);
    EXPECT_TRUE(opened.ok()) << opened.status();
    db = opened.ok() ? *opened : nullptr;
  }
  ~Db() { sqlite3_close(db); }
  std::string path;
  sqlite3* db = nullptr;
};

TEST(SqliteDb, StatementsBindStepAndReadColumns) {
  Db d(TempDir("sqlite") + "/a.db");
  ASSERT_TRUE(Exec(d.db, d.path, "CREATE TABLE t (s TEXT, n INTEGER, x REAL)", "create").ok());
  {
    Stmt ins(d.db, d.path);
    ASSERT_TRUE(ins.Prepare("INSERT INTO t VALUES (?, ?, ?)").ok());
    ins.BindAll({std::string("one"), int64_t{1}, 1.5});
    ASSERT_TRUE(ins.Run("insert").ok());
    ins.BindAll({std::string("two"), int64_t{2}, 2.5});
    ASSERT_TRUE(ins.Run("insert").ok());
    std::string big(1 << 20, 'x');
    ins.Reset();
    ins.BindUncopied(1, big);
    ASSERT_TRUE(ins.Run("insert").ok());
  }
  Stmt q(d.db, d.path);
  ASSERT_TRUE(q.Prepare("SELECT s, n, x FROM t ORDER BY rowid").ok());
  auto row = q.Step("select");
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(q.Text(0), "one");
  EXPECT_EQ(q.Int(1), 1);
  EXPECT_DOUBLE_EQ(q.Real(2), 1.5);
  ASSERT_TRUE(*q.Step("select"));
  EXPECT_EQ(q.Text(0), "two");
  ASSERT_TRUE(*q.Step("select"));
  EXPECT_EQ(q.Text(0).size(), size_t{1} << 20);
  EXPECT_TRUE(q.IsNull(1));  // cleared by Reset
  EXPECT_FALSE(*q.Step("select"));
}

TEST(SqliteDb, ErrorsNameTheFileTheStatementAndTheWayOut) {
  Db d(TempDir("sqlite") + "/a.db");
  Stmt q(d.db, d.path);
  absl::Status s = q.Prepare("SELECT nope FROM nowhere");
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(Has(std::string(s.message()), "history db " + d.path + ": cannot prepare a query: "))
      << s;
  EXPECT_TRUE(Has(std::string(s.message()), "nowhere")) << s;

  absl::Status e = Exec(d.db, d.path, "DROP TABLE missing", "cannot drop the table");
  EXPECT_TRUE(Has(std::string(e.message()), ": cannot drop the table: no such table")) << e;
}

TEST(SqliteDb, CodesFollowTheSqliteResult) {
  EXPECT_EQ(DbError(nullptr, SQLITE_BUSY, "/x.db", "w").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(DbError(nullptr, SQLITE_READONLY, "/x.db", "w").code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(DbError(nullptr, SQLITE_NOTADB, "/x.db", "w").code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(DbError(nullptr, SQLITE_FULL, "/x.db", "w").code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(DbError(nullptr, SQLITE_ERROR, "/x.db", "w").code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(Has(std::string(DbError(nullptr, SQLITE_BUSY, "/x.db", "w").message()), "--db"));
  EXPECT_EQ(DbAdvice(SQLITE_ERROR), "");
}

TEST(SqliteDb, OpenWithoutCreateOnAMissingFileAndOnAFileThatIsNotADb) {
  const std::string dir = TempDir("sqlite");
  auto missing = OpenDb(dir + "/none.db", /*create=*/false, 0);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kPermissionDenied) << missing.status();
  EXPECT_TRUE(Has(std::string(missing.status().message()), dir + "/none.db: cannot open"));

  ASSERT_TRUE(WriteFileAtomically(dir + "/text.db", std::string(4096, 'z')).ok());
  Db d(dir + "/text.db");  // opening is lazy: the first statement finds out
  absl::Status s = Exec(d.db, d.path, "PRAGMA user_version = 1", "cannot set the version");
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_TRUE(Has(std::string(s.message()), "not a lockstep history db")) << s;
}

TEST(SqliteDb, TransactionRollsBackUnlessCommittedAndABusyWriterIsUnavailable) {
  const std::string path = TempDir("sqlite") + "/a.db";
  Db d(path);
  ASSERT_TRUE(Exec(d.db, d.path, "CREATE TABLE t (n INTEGER)", "create").ok());
  {
    Transaction tx(d.db, d.path);
    ASSERT_TRUE(tx.Begin().ok());
    ASSERT_TRUE(Exec(d.db, d.path, "INSERT INTO t VALUES (1)", "insert").ok());
  }  // rolled back
  {
    Transaction tx(d.db, d.path);
    ASSERT_TRUE(tx.Begin().ok());
    ASSERT_TRUE(Exec(d.db, d.path, "INSERT INTO t VALUES (2)", "insert").ok());
    // A second connection cannot start a write while this one holds it.
    Db other(path);
    Transaction blocked(other.db, other.path);
    absl::Status s = blocked.Begin();
    EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
    EXPECT_TRUE(Has(std::string(s.message()), "cannot start a write")) << s;
    ASSERT_TRUE(tx.Commit().ok());
  }
  Stmt q(d.db, d.path);
  ASSERT_TRUE(q.Prepare("SELECT group_concat(n) FROM t").ok());
  ASSERT_TRUE(*q.Step("select"));
  EXPECT_EQ(q.Text(0), "2");
}

TEST(SqliteDb, TableColumnsListsTheColumnsOrNoneForAMissingTable) {
  Db d(TempDir("sqlite") + "/a.db");
  ASSERT_TRUE(Exec(d.db, d.path, "CREATE TABLE t (a TEXT, b INTEGER)", "create").ok());
  auto cols = TableColumns(d.db, d.path, "t");
  ASSERT_TRUE(cols.ok()) << cols.status();
  EXPECT_EQ(*cols, (std::vector<std::string>{"a", "b"}));
  auto none = TableColumns(d.db, d.path, "missing");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace lockstep
