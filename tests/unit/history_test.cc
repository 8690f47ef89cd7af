#include "controller/results/history.h"
#include "controller/results/workload.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>

#include "absl/strings/str_format.h"
#include "common/files.h"
#include "controller/results/compare.h"
#include "controller/results/run_json.h"
#include "google/protobuf/util/message_differencer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "unit/results_fixtures.h"

namespace lockstep {
namespace {

using testing::TempDir;
using ::testing::HasSubstr;

TEST(HistoryStore, RecordLoadListRoundTrip) {
  std::string dir = TempDir("hist");
  auto store = HistoryStore::Open(dir + "/sub/history.db");  // creates sub/
  ASSERT_TRUE(store.ok()) << store.status();
  SynthRun a;
  a.run_id = "r1";
  a.results = {{"write", 4, Reps(1000, 0.02, 5)}, {"read", 4, Reps(2000, 0.02, 5)},
               {"write", 8, Reps(1800, 0.02, 5)}};
  SynthRun b = a;
  b.run_id = "r2";
  b.name = "other";
  b.plan_sha256 = "0123456789abcdef";
  b.started_at = "2026-02-01T08:00:00Z";
  SynthRun c = a;
  c.run_id = "r3";
  c.started_at = "2026-02-03T08:00:00Z";
  c.status = "failed";
  v1::RunRecord ra = MakeRun(a);
  ASSERT_TRUE((*store)->Record(ra, "lab", {"nightly", "ssd"}).ok());
  ASSERT_TRUE((*store)->Record(MakeRun(b), "cloud", {"nightly"}).ok());
  ASSERT_TRUE((*store)->Record(MakeRun(c), "lab", {}).ok());
  // Recording again replaces, never duplicates.
  ASSERT_TRUE((*store)->Record(ra, "lab", {"nightly", "ssd"}).ok());

  auto loaded = (*store)->Load("r1");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*loaded, ra));

  auto all = (*store)->List({});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].run_id, "r3");  // newest first
  EXPECT_EQ((*all)[2].run_id, "r1");
  EXPECT_EQ((*all)[2].results, 3);
  EXPECT_EQ((*all)[2].agents, 2);
  EXPECT_EQ((*all)[2].tags, (std::vector<std::string>{"nightly", "ssd"}));

  auto ids = [&](RunFilter f) {
    std::vector<std::string> out;
    auto l = (*store)->List(f);
    EXPECT_TRUE(l.ok()) << l.status();
    if (l.ok()) for (const auto& r : *l) out.push_back(r.run_id);
    return out;
  };
  RunFilter f;
  f.plan = "seed";
  EXPECT_EQ(ids(f), (std::vector<std::string>{"r3", "r1"}));
  f = {};
  f.plan = "0123456789";  // sha256 prefix
  EXPECT_EQ(ids(f), (std::vector<std::string>{"r2"}));
  f = {};
  f.site = "lab";
  EXPECT_EQ(ids(f), (std::vector<std::string>{"r3", "r1"}));
  f = {};
  f.tag = "ssd";
  EXPECT_EQ(ids(f), (std::vector<std::string>{"r1"}));
  f = {};
  f.since = "2026-02-01";
  f.until = "2026-02-01";  // the whole day
  EXPECT_EQ(ids(f), (std::vector<std::string>{"r2"}));
  f = {};
  f.status = "complete";
  f.limit = 1;
  EXPECT_EQ(ids(f), (std::vector<std::string>{"r2"}));
  f = {};
  f.since = "last week";
  auto bad = (*store)->List(f);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Has(std::string(bad.status().message()), "--since")) << bad.status();

  auto missing = (*store)->Load("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Has(std::string(missing.status().message()), "nope"));

  auto last = (*store)->LastGood(MakeRun(c));
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, "r1");  // r3 failed
  EXPECT_EQ((*store)->LastGood(ra).status().code(), absl::StatusCode::kNotFound);  // not itself
  // Falls back to the name when the hash is unknown.
  SynthRun d = b;
  d.run_id = "r4";
  d.plan_sha256 = "deadbeef";
  d.started_at = "2026-03-01T08:00:00Z";
  EXPECT_EQ(*(*store)->LastGood(MakeRun(d)), "r2");
  // Never a run that started later: r2 started after this one.
  d.started_at = "2026-01-01T08:00:00Z";
  auto none = (*store)->LastGood(MakeRun(d));
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Has(std::string(none.status().message()), "at or before run r4")) << none.status();
  d.started_at = "yesterday";
  auto bad_time = (*store)->LastGood(MakeRun(d));
  EXPECT_EQ(bad_time.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Has(std::string(bad_time.status().message()), "run r4: started_at \"yesterday\""))
      << bad_time.status();

  RunFilter tf;
  tf.plan = a.plan_sha256;
  auto trend = (*store)->ResultTrend(KeyOf(ra.tests(0).summary(0)).ToString(), tf);
  ASSERT_TRUE(trend.ok()) << trend.status();
  ASSERT_EQ(trend->size(), 2u);
  EXPECT_EQ((*trend)[0].run_id, "r3");
  EXPECT_EQ((*trend)[1].repetitions, 5u);
}

TEST(HistoryStore, CompleteRunsBeforeIsByStartTimeAndNeverLater) {
  std::string dir = TempDir("hist");
  auto store = HistoryStore::Open(dir + "/h.db");
  ASSERT_TRUE(store.ok()) << store.status();
  auto rec = [&](const std::string& id, const std::string& started) {
    SynthRun s;
    s.run_id = id;
    s.started_at = started;
    s.results = {{"write", 4, Reps(1000, 0.02, 3)}};
    EXPECT_TRUE((*store)->Record(MakeRun(s), "lab", {}).ok());
    return MakeRun(s);
  };
  rec("a", "2026-01-01T00:00:00Z");
  rec("b", "2026-01-02T00:00:00Z");
  rec("c", "2026-01-02T00:00:00Z");   // same instant as b and x: counts as before
  rec("u", "not a time");             // place unknown: never chosen
  v1::RunRecord x = rec("x", "2026-01-02T00:00:00Z");
  rec("later", "2026-01-02T00:00:01Z");
  using V = std::vector<std::string>;
  auto before = [&](int limit, const std::string& exclude) {
    auto ids = (*store)->CompleteRunsBefore(x, limit, exclude);
    EXPECT_TRUE(ids.ok()) << ids.status();
    return ids.ok() ? *ids : V{"error"};
  };
  EXPECT_EQ(before(0, ""), V({"c", "b", "a"}));
  EXPECT_EQ(before(2, ""), V({"c", "b"}));
  EXPECT_EQ(before(2, "c"), V({"b", "a"}));
  EXPECT_EQ(*(*store)->LastGood(x), "c");
}

// A db mirrored from a results service holds every site's shared runs, and
// any site may push a run of the same plan with an earlier start time: the
// gate's last-good and noise window are then the gated site's own runs.
TEST(HistoryStore, LastGoodOfOneSiteNeverTakesAnotherSitesRun) {
  std::string dir = TempDir("hist");
  auto store = HistoryStore::Open(dir + "/h.db");
  ASSERT_TRUE(store.ok()) << store.status();
  auto rec = [&](const std::string& id, const std::string& started, const std::string& site) {
    SynthRun s;
    s.run_id = id;
    s.started_at = started;
    s.results = {{"write", 4, Reps(1000, 0.02, 3)}};
    EXPECT_TRUE((*store)->Record(MakeRun(s), site, {}).ok());
    return MakeRun(s);
  };
  rec("ours", "2026-01-01T00:00:00Z", "lab");
  rec("bait", "2026-01-02T00:00:00Z", "other");
  v1::RunRecord x = rec("x", "2026-01-03T00:00:00Z", "lab");
  EXPECT_EQ(*(*store)->LastGood(x), "bait");  // any site
  EXPECT_EQ(*(*store)->LastGood(x, "lab"), "ours");
  EXPECT_EQ(*(*store)->CompleteRunsBefore(x, 0, "", "lab"), std::vector<std::string>{"ours"});
  auto none = (*store)->LastGood(x, "third");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("of site \"third\""));
  EXPECT_EQ(*(*store)->SiteOf("bait"), "other");
  EXPECT_EQ((*store)->SiteOf("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST(HistoryStore, ImportThenExportKeepsTheFileByteForByte) {
  std::string dir = TempDir("hist");
  SynthRun a;
  a.run_id = "imp-1";
  a.results = {{"write", 2, Reps(700, 0.05, 3)}};
  std::string text = "  " + RunToJson(MakeRun(a)) + "\n";
  ASSERT_TRUE(WriteFileAtomically(dir + "/run.json", text).ok());
  auto store = HistoryStore::Open(dir + "/h.db");
  ASSERT_TRUE(store.ok());
  auto ids = (*store)->Import({dir + "/run.json"}, "lab", {"t1"});
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, std::vector<std::string>{"imp-1"});
  ASSERT_TRUE((*store)->Export("imp-1", dir + "/out.json").ok());
  EXPECT_EQ(*ReadFileToString(dir + "/out.json"), text);
  auto s = (*store)->Summary("imp-1");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->site, "lab");
  EXPECT_FALSE((*store)->Export("missing", dir + "/x.json").ok());
}

TEST(HistoryStore, ImportRejectsNewerFormatNamingFileAndField) {
  std::string dir = TempDir("hist");
  SynthRun a;
  a.results = {{"write", 2, Reps(700, 0.05, 3)}};
  v1::RunRecord run = MakeRun(a);
  run.set_format_version(7);
  std::string json = RunToJson(run);
  // A newer writer adds fields this build does not know.
  json.insert(json.find('{') + 1, "\n \"futureField\": {\"x\": 1},");
  std::string path = dir + "/new.json";
  ASSERT_TRUE(WriteFileAtomically(path, json).ok());
  auto store = HistoryStore::Open(dir + "/h.db");
  ASSERT_TRUE(store.ok());
  auto r = (*store)->Import({path}, "", {});
  ASSERT_FALSE(r.ok());
  std::string msg(r.status().message());
  EXPECT_TRUE(Has(msg, path)) << msg;
  EXPECT_TRUE(Has(msg, "format_version is 7")) << msg;
  EXPECT_TRUE(Has(msg, "upgrade lockstep")) << msg;
}

TEST(HistoryStore, ImportRejectsCorruptFilesAndLeavesTheDbUnchanged) {
  std::string dir = TempDir("hist");
  SynthRun a;
  a.run_id = "good";
  a.results = {{"write", 2, Reps(700, 0.05, 3)}};
  std::string good = RunToJson(MakeRun(a));
  ASSERT_TRUE(WriteFileAtomically(dir + "/good.json", good).ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/cut.json", good.substr(0, good.size() / 2)).ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/empty.json", "").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/typed.json", R"({"formatVersion": "one", "runId": "x"})").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/noid.json", R"({"formatVersion": 1})").ok());
  v1::RunRecord neg = MakeRun(a);
  neg.mutable_tests(0)->mutable_summary(0)->set_bw_mib_per_rep(1, -5);
  ASSERT_TRUE(WriteFileAtomically(dir + "/neg.json", RunToJson(neg)).ok());

  auto store = HistoryStore::Open(dir + "/h.db");
  ASSERT_TRUE(store.ok());
  struct Case {
    const char* file;
    const char* expect;
  } cases[] = {{"cut.json", "not a valid lockstep.v1.RunRecord"},
               {"empty.json", "empty"},
               {"typed.json", "not a valid"},
               {"noid.json", "field run_id"},
               {"neg.json", "tests[0].summary[0].bw_mib_per_rep[1]"},
               {"missing.json", "missing.json"}};
  for (const auto& c : cases) {
    std::string p = dir + "/" + c.file;
    auto r = (*store)->Import({dir + "/good.json", p}, "", {});
    ASSERT_FALSE(r.ok()) << c.file;
    std::string msg(r.status().message());
    EXPECT_TRUE(Has(msg, p)) << msg;
    EXPECT_TRUE(Has(msg, c.expect)) << c.file << ": " << msg;
  }
  // The good file in the same batch was not recorded either.
  EXPECT_TRUE((*store)->List({})->empty());
}

TEST(HistoryStore, LockedDbGivesAClearError) {
  std::string dir = TempDir("hist");
  std::string path = dir + "/h.db";
  HistoryOptions o;
  o.busy_timeout_ms = 100;
  auto store = HistoryStore::Open(path, o);
  ASSERT_TRUE(store.ok());
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE; DELETE FROM runs;", nullptr, nullptr, nullptr),
            SQLITE_OK);
  SynthRun a;
  a.results = {{"write", 2, Reps(700, 0.05, 3)}};
  absl::Status s = (*store)->Record(MakeRun(a), "", {});
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  std::string msg(s.message());
  EXPECT_TRUE(Has(msg, path)) << msg;
  EXPECT_TRUE(Has(msg, "locked")) << msg;
  EXPECT_TRUE(Has(msg, "--db")) << msg;
  // Once the other writer is gone it works.
  EXPECT_TRUE((*store)->Record(MakeRun(a), "", {}).ok());
}

TEST(HistoryStore, UnwritableOrMissingDbGivesAClearError) {
  auto s = HistoryStore::Open("/proc/lockstep-no/history.db");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Has(std::string(s.status().message()), "/proc/lockstep-no")) << s.status();
  EXPECT_TRUE(Has(std::string(s.status().message()), "--db")) << s.status();

  std::string dir = TempDir("hist");
  auto d = HistoryStore::Open(dir);
  ASSERT_FALSE(d.ok());
  EXPECT_TRUE(Has(std::string(d.status().message()), "is a directory")) << d.status();

  HistoryOptions ro;
  ro.create_if_missing = false;
  auto m = HistoryStore::Open(dir + "/none.db", ro);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kNotFound);
  struct stat st;
  EXPECT_NE(::stat((dir + "/none.db").c_str(), &st), 0);  // not created

  ASSERT_TRUE(WriteFileAtomically(dir + "/junk.db", std::string(4096, 'x')).ok());
  auto j = HistoryStore::Open(dir + "/junk.db");
  ASSERT_FALSE(j.ok());
  EXPECT_TRUE(Has(std::string(j.status().message()), "junk.db")) << j.status();
}

// 1,000 runs x 4 results = 4,000 result rows; listing, last-good, trends and
// a compare of two loaded runs must be fast. Figures are printed, not asserted.
TEST(HistoryScale, ThousandRunsListAndCompare) {
  std::string dir = TempDir("hist");
  auto store = HistoryStore::Open(dir + "/h.db");
  ASSERT_TRUE(store.ok());
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  auto t0 = Clock::now();
  const int kRuns = 1000;
  for (int i = 0; i < kRuns; ++i) {
    SynthRun s;
    s.run_id = absl::StrFormat("run-%04d", i);
    s.name = i % 2 ? "seed" : "other";
    s.plan_sha256 = i % 2 ? "aaaa1111" : "bbbb2222";
    s.started_at = absl::StrFormat("2026-%02d-%02dT%02d:%02d:00Z", 1 + i / 300, 1 + (i / 12) % 25,
                                   i % 24, i % 60);
    s.results = {{"write", 4, Reps(1000 + i, 0.02, 5, i)}, {"read", 4, Reps(2000, 0.02, 5, i)},
                 {"write", 8, Reps(1800, 0.02, 5, i)}, {"read", 8, Reps(3600, 0.02, 5, i)}};
    ASSERT_TRUE((*store)->Record(MakeRun(s), i % 3 ? "lab" : "cloud", {i % 5 ? "ci" : "manual"}).ok());
  }
  auto t1 = Clock::now();
  RunFilter f;
  f.plan = "seed";
  f.site = "lab";
  f.tag = "ci";
  f.since = "2026-02-01";
  f.limit = 0;
  auto list = (*store)->List(f);
  ASSERT_TRUE(list.ok());
  auto t2 = Clock::now();
  auto all = (*store)->List(RunFilter{.limit = 0});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), static_cast<size_t>(kRuns));
  SynthRun newest;  // last-good of a run newer than all
  newest.run_id = "gated";
  newest.plan_sha256 = "aaaa1111";
  newest.started_at = "2027-01-01T00:00:00Z";
  const v1::RunRecord newest_run = MakeRun(newest);
  auto t3 = Clock::now();
  auto last = (*store)->LastGood(newest_run);
  ASSERT_TRUE(last.ok());
  auto t4 = Clock::now();
  RunFilter tf;
  tf.plan = "aaaa1111";
  tf.status = "complete";
  tf.limit = 10;
  auto trend = (*store)->ResultTrend("write/write tasks=4 tpn=2 xfer=1 MiB block=16 MiB seg=1 fpp", tf);
  ASSERT_TRUE(trend.ok());
  EXPECT_EQ(trend->size(), 10u);
  auto t5 = Clock::now();
  auto a = (*store)->Load("run-0001");
  auto b = (*store)->Load("run-0999");
  ASSERT_TRUE(a.ok() && b.ok());
  Comparison c = CompareRuns(*a, *b);
  EXPECT_EQ(c.matched.size(), 4u);
  auto t6 = Clock::now();
  std::printf(
      "[ figures  ] %d runs / %d results: record all %.0f ms (%.2f ms/run); filtered list (%zu "
      "rows) %.2f ms; list all %.2f ms; last-good %.2f ms; trend of one result %.2f ms; load 2 "
      "+ compare %.2f ms\n",
      kRuns, kRuns * 4, ms(t1 - t0), ms(t1 - t0) / kRuns, list->size(), ms(t2 - t1), ms(t3 - t2),
      ms(t4 - t3), ms(t5 - t4), ms(t6 - t5));
}

// ---- schema version 2: the AI figures ---------------------------------------------

// The schema of version 1 as it shipped (before ai_metrics), to make a db
// the way an older lockstep made it.
constexpr char kSchemaV1[] = R"sql(
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

// A version-1 db at `path` holding `runs` (their runs rows only: what
// lockstep import of that version wrote first), made with raw SQL.
void MakeV1Db(const std::string& path, const std::vector<v1::RunRecord>& runs) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, kSchemaV1, nullptr, nullptr, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 1", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_stmt* ins = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "INSERT INTO runs VALUES (?, ?, ?, '', 'lab', '', ?, 1, '', ?, 1, "
                               "'0.1.0', 'ctl', 1, 2, '2026-01-01T00:00:00Z', ?)",
                               -1, &ins, nullptr),
            SQLITE_OK);
  for (const v1::RunRecord& r : runs) {
    const std::string json = RunToJson(r);
    sqlite3_bind_text(ins, 1, r.run_id().c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(ins, 2, r.name().c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(ins, 3, r.plan_sha256().c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(ins, 4, r.started_at().c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(ins, 5, r.status().c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(ins, 6, json.c_str(), -1, SQLITE_TRANSIENT);
    ASSERT_EQ(sqlite3_step(ins), SQLITE_DONE);
    sqlite3_reset(ins);
  }
  sqlite3_finalize(ins);
  sqlite3_close(db);
}

int64_t UserVersion(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, nullptr);
  int64_t v = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int64(q, 0) : -1;
  sqlite3_finalize(q);
  sqlite3_close(db);
  return v;
}

v1::RunRecord TrainRun(const std::string& id, const std::string& started, double au) {
  SynthRun s;
  s.run_id = id;
  s.started_at = started;
  s.results = {{"train", 4, Reps(500, 0.01, 3)}};
  v1::RunRecord run = MakeRun(s);
  testing::SetAiFigures(&run, "train", {au, au, au}, 0.9);
  return run;
}

// The result key of TrainRun's train result.
const std::string kTrainKey = [] {
  const v1::RunRecord r = TrainRun("k", "2026-01-01T00:00:00Z", 1);
  return KeyOf(r.tests(0).summary(0), r.tests(0)).ToString();
}();

TEST(HistoryStore, RecordsTheAiFiguresOfTrainAndCheckpointResults) {
  auto store = HistoryStore::Open(TempDir("hist") + "/history.db");
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Record(TrainRun("t1", "2026-02-01T08:00:00Z", 0.95), "lab", {}).ok());
  ASSERT_TRUE((*store)->Record(TrainRun("t2", "2026-02-02T08:00:00Z", 0.80), "lab", {}).ok());
  ASSERT_TRUE((*store)->Record(TrainRun("t2", "2026-02-02T08:00:00Z", 0.80), "lab", {}).ok());
  auto au = (*store)->AiMetricTrend(kTrainKey, "au", {});
  ASSERT_TRUE(au.ok()) << au.status();
  ASSERT_EQ(au->size(), 2u);  // recording again replaced, never duplicated
  EXPECT_EQ((*au)[0].run_id, "t2");
  EXPECT_NEAR((*au)[0].mean, 0.80, 1e-12);
  EXPECT_EQ((*au)[0].passed, 0);
  EXPECT_EQ((*au)[0].repetitions, 3u);
  EXPECT_EQ((*au)[1].passed, 1);
  auto sps = (*store)->AiMetricTrend(kTrainKey, "samples_per_s", {.site = "lab"});
  ASSERT_TRUE(sps.ok()) << sps.status();
  ASSERT_EQ(sps->size(), 2u);
  EXPECT_NEAR((*sps)[1].mean, 950, 1e-9);
  EXPECT_EQ((*sps)[1].passed, -1);
  auto bad = (*store)->AiMetricTrend(kTrainKey, "au_mean", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Has(std::string(bad.status().message()), "\"au_mean\" is not an AI figure; the "
                                                       "figures are au, au_min"))
      << bad.status();
}

TEST(HistoryStore, OpensADbOfSchemaOneAndFillsTheAiFiguresFromItsRuns) {
  const std::string path = TempDir("hist") + "/v1.db";
  SynthRun plain;
  plain.run_id = "old-plain";
  plain.results = {{"write", 4, Reps(1000, 0.01, 3)}};
  const v1::RunRecord old_plain = MakeRun(plain);
  const v1::RunRecord old_train = TrainRun("old-train", "2026-01-20T08:00:00Z", 0.93);
  MakeV1Db(path, {old_plain, old_train});
  ASSERT_EQ(UserVersion(path), 1);

  for (int open = 0; open < 2; ++open) {  // the second open finds version 3: nothing to redo
    auto store = HistoryStore::Open(path, {.create_if_missing = false});
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_EQ(UserVersion(path), 3);
    auto all = (*store)->List({});
    ASSERT_TRUE(all.ok()) << all.status();
    ASSERT_EQ(all->size(), 2u);
    // Schema 3: the workload hash of runs recorded before it, from their run.json.
    for (const RunSummary& s : *all) {
      const v1::RunRecord& run = s.run_id == "old-plain" ? old_plain : old_train;
      EXPECT_EQ(s.workload_hash, WorkloadOf(run).hash) << s.run_id;
      EXPECT_EQ(s.workload_hash.size(), 64u) << s.run_id;
      EXPECT_FALSE(s.workload_class.empty()) << s.run_id;
    }
    auto loaded = (*store)->Load("old-plain");
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*loaded, old_plain));
    auto au = (*store)->AiMetricTrend(kTrainKey, "au", {});
    ASSERT_TRUE(au.ok()) << au.status();
    ASSERT_EQ(au->size(), 1u);
    EXPECT_EQ((*au)[0].run_id, "old-train");
    EXPECT_NEAR((*au)[0].mean, 0.93, 1e-12);
    EXPECT_EQ((*au)[0].passed, 1);
  }
  // And it takes new runs with their figures.
  auto store = HistoryStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Record(TrainRun("new-train", "2026-02-20T08:00:00Z", 0.5), "lab", {}).ok());
  auto au = (*store)->AiMetricTrend(kTrainKey, "au", {});
  ASSERT_TRUE(au.ok());
  ASSERT_EQ(au->size(), 2u);
  EXPECT_EQ((*au)[0].run_id, "new-train");
}

}  // namespace
}  // namespace lockstep
