// Naming runs: a run id in the history db, a run directory, a run.json file
// (and, for report, a directory with only journal.jsonl) work for report,
// compare, gate and export alike.
#include "controller/results/run_ref.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "controller/results/gate.h"
#include "controller/results/history.h"
#include "controller/cli/exit_codes.h"
#include "controller/cli/results_commands.h"
#include "common/json.h"
#include "controller/record/telemetry_file.h"
#include "controller/run/run_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "unit/results_fixtures.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using testing::MakeRun;
using testing::Reps;
using testing::SynthRun;

v1::RunRecord SynthWriteRun(const std::string& id, double bw) {
  SynthRun s;
  s.run_id = id;
  s.results = {{"write", 4, Reps(bw, 0.01, 5)}};
  return MakeRun(s);
}

class RunRefTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.path = testing::TempDir("runref");
    db_ = dir_ / "history.db";
    base_dir_ = dir_ / "results/base";
    slow_dir_ = dir_ / "results/slow";
    journal_dir_ = dir_ / "results/crashed";
    base_json_ = dir_ / "base.json";
    slow_json_ = dir_ / "slow.json";
    const v1::RunRecord base = SynthWriteRun("base", 1000);
    const v1::RunRecord slow = SynthWriteRun("slow", 800);
    const std::pair<const v1::RunRecord*, std::string> runs[] = {{&base, base_dir_},
                                                                  {&slow, slow_dir_}};
    for (const auto& [run, run_dir] : runs) {
      std::filesystem::create_directories(run_dir);
      ASSERT_OK(WriteFileAtomically(run_dir + "/run.json", RunToJson(*run)));
    }
    ASSERT_OK(WriteFileAtomically(base_json_, RunToJson(base)));
    ASSERT_OK(WriteFileAtomically(slow_json_, RunToJson(slow)));
    // A run whose controller died: only the journal.
    std::filesystem::create_directories(journal_dir_);
    std::ofstream j(journal_dir_ + "/journal.jsonl");
    for (const v1::PhaseRecord& p : slow.tests(0).phases()) j << ToJson(p, false) << "\n";
    j.close();
    auto store = HistoryStore::Open(db_);
    ASSERT_OK(store);
    ASSERT_OK((*store)->Record(base, "", {}));
    ASSERT_OK((*store)->Record(slow, "", {}));
  }

  absl::StatusOr<v1::RunRecord> Resolve(const std::string& ref, bool allow_journal = false) {
    LazyHistory db(db_);
    return ResolveRun(ref, &db, {.allow_journal = allow_journal});
  }

  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_.path, ec);
  }

  // A directory path with "/" to join names, as test_util's TempDir has.
  struct Dir {
    std::string path;
    std::string operator/(const std::string& name) const { return path + "/" + name; }
  };

  Dir dir_;
  std::string db_, base_dir_, slow_dir_, journal_dir_, base_json_, slow_json_;
};

TEST_F(RunRefTest, EveryFormResolvesToTheSameRun) {
  for (const std::string& ref : {std::string("base"), base_dir_, base_dir_ + "/", base_json_,
                                 base_dir_ + "/run.json"}) {
    SCOPED_TRACE(ref);
    auto run = Resolve(ref);
    ASSERT_OK(run);
    EXPECT_EQ(run->run_id(), "base") << ref;
    EXPECT_EQ(run->tests(0).summary_size(), 1) << ref;
  }
  LazyHistory db(db_);
  auto by_id = ResolveRunRef("base", &db);
  ASSERT_OK(by_id);
  EXPECT_EQ(by_id->origin, ResolvedRun::Origin::kHistory);
  auto by_dir = ResolveRunRef(base_dir_, &db);
  ASSERT_OK(by_dir);
  EXPECT_EQ(by_dir->origin, ResolvedRun::Origin::kRunJson);
  EXPECT_EQ(by_dir->path, base_dir_ + "/run.json");
}

TEST_F(RunRefTest, AJournalOnlyDirectoryIsARunOnlyWhereAllowed) {
  auto run = Resolve(journal_dir_, /*allow_journal=*/true);
  ASSERT_OK(run);
  EXPECT_EQ(run->run_id(), "crashed");
  EXPECT_EQ(run->status(), "interrupted");
  EXPECT_FALSE(std::filesystem::exists(journal_dir_ + "/run.json"));  // not written back
  auto refused = Resolve(journal_dir_);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(refused.status().message(),
            journal_dir_ + ": a run directory without run.json (its controller stopped early); "
                           "`lockstep report " + journal_dir_ +
                "` rebuilds run.json from its journal.jsonl");
}

// compare, gate and export of a run still going: said so, not "stopped
// early" (its controller holds the journal: run/run_store.h).
TEST_F(RunRefTest, ARunStillGoingIsNamedAsSuch) {
  auto store = RunStore::Create(dir_ / "results", "live", "[[phase]]\n");
  ASSERT_OK(store);
  const std::string live = (*store)->dir();
  auto refused = Resolve(live);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(refused.status().message()),
              ::testing::HasSubstr(live + ": a run still going (its controller holds "
                                          "journal.jsonl), so it has no run.json yet"));
  store->reset();
  EXPECT_THAT(std::string(Resolve(live).status().message()),
              ::testing::HasSubstr("its controller stopped early"));
}

TEST_F(RunRefTest, ErrorsSayWhatWasTried) {
  auto missing = Resolve("nope");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "nope: not a directory with run.json, not a run.json file (no such file or "
            "directory), not a run id in " + db_ + " (see `lockstep history --db " + db_ + "`)");

  LazyHistory no_db(dir_ / "none.db");
  auto without_db = ResolveRun("nope", &no_db);
  EXPECT_EQ(without_db.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(without_db.status().message(),
              HasSubstr("not a run id: there is no history db " + (dir_ / "none.db") +
                        " (--db names another)"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "none.db"));  // never created

  std::filesystem::create_directories(dir_ / "empty");
  auto empty = Resolve(dir_ / "empty", /*allow_journal=*/true);
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(empty.status().message(),
              HasSubstr("a directory without run.json or journal.jsonl, so not a run directory"));

  ASSERT_OK(WriteFileAtomically(dir_ / "cut.json", "{\"formatVersion\": 1,"));
  auto cut = Resolve(dir_ / "cut.json");
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cut.status().message(), HasSubstr(dir_ / "cut.json"));
}

// ---- every command, every form ----------------------------------------------------

TEST_F(RunRefTest, CompareTakesEveryForm) {
  EXPECT_EQ(CompareCommand({"--db", db_, "base", "slow"}), 0);
  EXPECT_EQ(CompareCommand({"--db", db_, base_dir_, slow_dir_}), 0);
  EXPECT_EQ(CompareCommand({"--db", db_, base_json_, slow_json_}), 0);
  EXPECT_EQ(CompareCommand({"--db", db_, "base", slow_dir_, slow_json_, "--csv", dir_ / "c.csv"}),
            0);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "c.csv"));
  EXPECT_EQ(CompareCommand({"--db", db_, base_dir_, "nope"}), 2);
}

TEST_F(RunRefTest, GateTakesEveryFormForRunAndBaseline) {
  for (const std::string& base : {std::string("base"), base_dir_, base_json_}) {
    for (const std::string& slow : {std::string("slow"), slow_dir_, slow_json_}) {
      EXPECT_EQ(GateCommand({"--db", db_, slow, "--baseline", base}), kGateRegression)
          << slow << " vs " << base;
      EXPECT_EQ(GateCommand({"--db", db_, base, "--baseline", base}), kGatePass) << base;
    }
  }
  EXPECT_EQ(GateCommand({"--db", db_, slow_dir_, "--baseline", dir_ / "missing"}),
            kGateNoBaseline);
}

TEST_F(RunRefTest, ExportTakesEveryForm) {
  const std::string want = *ReadFileToString(base_json_);
  int n = 0;
  for (const std::string& ref : {std::string("base"), base_dir_, base_json_}) {
    const std::string out = dir_ / ("out" + std::to_string(n++) + ".json");
    EXPECT_EQ(ExportCommand({"--db", db_, ref, out}), 0) << ref;
    EXPECT_EQ(*ReadFileToString(out), want) << ref;  // byte for byte
  }
  EXPECT_EQ(ExportCommand({"--db", db_, slow_dir_, "--csv", dir_ / "slow.csv"}), 0);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "slow.csv"));
  EXPECT_EQ(ExportCommand({"--db", db_, "nope", dir_ / "x.json"}), 2);
}

TEST_F(RunRefTest, ADamagedTelemetrySideFileIsAWarningNotAnUnreadableRun) {
  // Not gzip, not delimited records: nothing of it can be put back.
  ASSERT_OK(WriteFileAtomically(slow_dir_ + "/" + kTelemetryFile, "\x7f not a side file"));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(GateCommand({"--db", db_, slow_dir_, "--baseline", base_dir_}), kGateRegression);
  EXPECT_EQ(CompareCommand({"--db", db_, base_dir_, slow_dir_}), 0);
  EXPECT_EQ(ExportCommand({"--db", db_, slow_dir_, dir_ / "slow-export.json"}), 0);
  const std::string err = ::testing::internal::GetCapturedStderr();
  for (const char* command : {"gate", "compare", "export"}) {
    EXPECT_THAT(err, HasSubstr(absl::StrCat("lockstep ", command, ": warning: ", slow_dir_, "/",
                                            kTelemetryFile)))
        << err;
  }
  EXPECT_THAT(err, HasSubstr("left out")) << err;
}

TEST_F(RunRefTest, ReportWritesOutputsForEveryForm) {
  // Two directories with --html: refused before issue 9.
  EXPECT_EQ(ReportCommand({"--db", db_, base_dir_, slow_dir_, "--html", dir_ / "r.html"}), 0);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "r.html"));
  EXPECT_EQ(ReportCommand({"--db", db_, "base", slow_json_, journal_dir_, "--csv", dir_ / "r.csv"}),
            0);
  auto csv = ReadFileToString(dir_ / "r.csv");
  ASSERT_OK(csv);
  EXPECT_THAT(*csv, HasSubstr("base"));
  EXPECT_THAT(*csv, HasSubstr("crashed"));
  EXPECT_EQ(ReportCommand({"--db", db_, "nope", "--csv", dir_ / "n.csv"}), 2);
}

TEST_F(RunRefTest, ReportWithoutOutputsPrintsEachSummary) {
  ::testing::internal::CaptureStdout();
  const int code = ReportCommand({"--db", db_, "base", slow_json_, base_dir_, journal_dir_});
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(code, 0);
  EXPECT_THAT(out, HasSubstr(", run base ("));
  EXPECT_THAT(out, HasSubstr(", run slow ("));
  EXPECT_THAT(out, HasSubstr(", run crashed ("));
  EXPECT_THAT(out, HasSubstr("# Status : interrupted: "));
  // A journal-only directory is written back, as `lockstep report RUN_DIR` always did.
  EXPECT_TRUE(std::filesystem::exists(journal_dir_ + "/run.json"));
}

}  // namespace
}  // namespace lockstep
