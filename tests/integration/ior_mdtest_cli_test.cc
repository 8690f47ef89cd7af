// End to end: `lockstep ior` and `lockstep mdtest` with unchanged command
// lines on local agents (a TestCluster without agents gives the temporary
// root and the results), and the rewrite and small_files kinds on agent
// processes.
#include <algorithm>
#include <filesystem>
#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/layout.h"
#include "common/files.h"
#include "controller/results/journal_report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(IorCli, FilePerProcessWriteReadOnTwoLocalAgents) {
  TestCluster tmp;  // no agents: --local
  std::filesystem::create_directories(tmp / "data");
  RunResult r = tmp.Lockstep({"ior", "-F", "-w", "-r", "-b", "4m", "-t", "1m", "-i", "2", "-v",
                              "-o", tmp / "data/f", "--local", "2", "-N", "2", "--out",
                              tmp.results_dir()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("# lockstep ior: 2 agents (local) x 1 task = 2 tasks"));
  EXPECT_THAT(r.out, HasSubstr("Summary of all tests:"));
  EXPECT_THAT(r.out, HasSubstr("\nMax Write: "));  // -v
  EXPECT_THAT(r.out, HasSubstr("\nMax Read:  "));
  const std::string& dir = r.run_dir;
  ASSERT_FALSE(dir.empty()) << r.out;
  v1::RunRecord rec = r.Record();
  ASSERT_EQ(rec.tests_size(), 1);
  ASSERT_EQ(rec.tests(0).phases_size(), 4);  // (write, read) x 2
  for (const v1::PhaseRecord& p : rec.tests(0).phases()) {
    EXPECT_TRUE(p.ok()) << p.error();
    EXPECT_EQ(p.row().bytes(), 2u * (4u << 20));
  }
  // Without -k the files are removed; plan.toml is a plan `lockstep run` takes.
  EXPECT_TRUE(ListFiles(tmp / "data").empty());
  EXPECT_THAT(*ReadFileToString(dir + "/plan.toml"), HasSubstr("block_size = 4194304"));
  // summary.txt is the text printed.
  EXPECT_EQ(*ReadFileToString(dir + "/summary.txt"), r.out.substr(r.out.find("IOR-")));
  // `lockstep report RUN_DIR` replays run.json through the same observers,
  // then adds per phase the start's lead and margin and the role telemetry.
  ExpectReportReprintsRun(dir);
  EXPECT_THAT(FormatPhaseStarts(rec), HasSubstr("t0/r0/write: lead "));

  // -O summaryFormat=JSON: only the JSON (IOR's keys and Lockstep's), one task
  // by default as IOR without mpirun.
  RunResult j = tmp.Lockstep({"ior", "-F", "-w", "-r", "-b", "4m", "-t", "1m", "-o",
                              tmp / "data/f", "-O", "summaryFormat=JSON", "--out",
                              tmp.results_dir()});
  ASSERT_EQ(j.exit_code, 0) << j.out << j.err;
  ASSERT_FALSE(j.out.empty());
  EXPECT_EQ(j.out.front(), '{') << j.out;
  EXPECT_THAT(j.out, HasSubstr("\"numTasks\": 1,"));
  EXPECT_THAT(j.out, HasSubstr("\"bwMeanMIB\": "));
  EXPECT_THAT(j.out, HasSubstr("\"lockstep\": {"));
  EXPECT_THAT(j.out, Not(HasSubstr("\n#")));
}

// Every front end records its run in the history database as `lockstep
// run` does (--history, --db, --site, --tag): a nightly `lockstep ior` is
// then listed, compared and gated without an import.
TEST(IorCli, TheFrontEndsRecordTheirRunsInHistoryAsRunDoes) {
  TestCluster tmp;
  std::filesystem::create_directories(tmp / "data");
  const std::string out = tmp.results_dir();
  RunResult r = tmp.Lockstep({"ior", "-w", "-b", "1m", "-t", "1m", "-o", tmp / "data/f",
                              "--local", "1", "--out", out, "--site", "site-a", "--tag",
                              "nightly"});
  ASSERT_EQ(r.exit_code, 0) << r.Output();
  CommandResult listed = RunLockstep({"history", "--db", out + "/history.db"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const std::string run_id = r.run_dir.substr(r.run_dir.find_last_of('/') + 1);
  EXPECT_THAT(listed.out, HasSubstr(run_id));
  EXPECT_THAT(listed.out, HasSubstr("site-a"));
  EXPECT_THAT(listed.out, HasSubstr("nightly"));
  // --history=false: nothing recorded; --db elsewhere: there.
  const std::string other = tmp / "other";
  RunResult off = tmp.Lockstep({"mdtest", "-n", "4", "-d", tmp / "data/md", "--local", "1",
                                "--out", other, "--history=false"});
  ASSERT_EQ(off.exit_code, 0) << off.Output();
  EXPECT_FALSE(std::filesystem::exists(other + "/history.db"));
  RunResult db = tmp.Lockstep({"iozone", "-i", "0", "-s", "1m", "-r", "1m", "-t", "1", "-F",
                               tmp / "data/z", "--local", "1", "--out", other, "--db",
                               tmp / "z.db"});
  ASSERT_EQ(db.exit_code, 0) << db.Output();
  CommandResult z = RunLockstep({"history", "--db", tmp / "z.db"});
  EXPECT_THAT(z.out, HasSubstr(db.run_dir.substr(db.run_dir.find_last_of('/') + 1))) << z.err;
}

TEST(IorCli, BadOptionsExitTwoNamingTheOption) {
  CommandResult r = RunLockstep({"ior", "-b", "1x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("-b 1: IOR refuses it"));  // string_to_bytes("1x") is 1
  r = RunLockstep({"ior", "-c"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("-c: refused"));
}

// mdtest's golden outputs, line for line: tests/conformance/.

TEST(MdtestCli, UniqueDirsPrintsTheSummaryTable) {
  TestCluster tmp;  // no agents: mdtest starts its own
  std::filesystem::create_directories(tmp / "md");
  RunResult r = tmp.Lockstep({"mdtest", "-n", "1000", "-u", "-d", tmp / "md", "--tasks", "2",
                              "--out", tmp.results_dir()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("SUMMARY rate (in ops/sec): (of 1 iterations)"));
  for (const char* row : {"Directory creation", "Directory stat", "Directory rename", "Directory removal",
                          "File creation", "File stat", "File read", "File removal",
                          "Tree creation", "Tree removal"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string("   ") + row)) << row;
  }
  v1::RunRecord rec = r.Record();
  for (const v1::PhaseRecord& p : rec.tests(0).phases()) {
    EXPECT_TRUE(p.ok()) << p.error();
    if (p.spec().md_op() == v1::MD_FILE_CREATE) {
      EXPECT_EQ(p.md_items(), 2000u);  // 1000 per task, 2 tasks
    }
    EXPECT_GT(p.md_rate(), 0) << p.phase();
  }
  EXPECT_TRUE(std::filesystem::is_empty(tmp / "md"));
  // summary.txt is the text printed; `lockstep report` prints it again, as
  // mdtest's layout (not IOR's).
  EXPECT_EQ(*ReadFileToString(r.run_dir + "/summary.txt"), r.out);
  EXPECT_THAT(r.out, HasSubstr("# lockstep mdtest: "));
  ExpectReportReprintsRun(r.run_dir);
}

// IOR -m: each repetition has its own files; -Z -X: every task reads the
// file IOR's srand(rank + seed)/rand() picks, never its own with two agents.
TEST(IorCli, MultiFileAndRandomTaskReordering) {
  TestCluster tmp;  // no agents: --local
  std::filesystem::create_directories(tmp / "data");
  RunResult r = tmp.Lockstep({"ior", "-a", "POSIX", "-w", "-r", "-F", "-m", "-Z", "-X", "5",
                              "-i", "2", "-k", "-b", "1m", "-t", "256k", "-N", "4", "--local",
                              "2", "-o", tmp / "data/f", "--out", tmp.results_dir()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<std::string> expected;
  for (int rank = 0; rank < 4; ++rank) {
    for (int rep = 0; rep < 2; ++rep) {
      expected.push_back(absl::StrFormat("f.%08d.%d 1048576", rank, rep));
    }
  }
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(tmp / "data")) {
    files.push_back(absl::StrFormat("%s %d", e.path().filename().string(),
                                    std::filesystem::file_size(e.path())));
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, expected);
  v1::RunRecord rec = r.Record();
  int reads = 0;
  for (const v1::PhaseRecord& p : rec.tests(0).phases()) {
    ASSERT_TRUE(p.ok()) << p.error();
    for (const v1::AgentPhaseRecord& a : p.agents()) {
      for (const v1::TaskResult& t : a.tasks()) {
        const uint32_t own = t.rank();
        uint32_t data = own;
        if (p.kind() == v1::READ) {
          data = (own + IorRandomTaskOffset(own, 5, p.repetition(), 4, 2, 2)) % 4;
          EXPECT_NE(data, own);  // two agents: the offset is at least one agent's tasks
          ++reads;
        }
        EXPECT_EQ(t.file(), absl::StrFormat("%s/data/f.%08d.%u", tmp.path(), data, p.repetition()))
            << p.phase_id() << " rank " << own;
      }
    }
  }
  EXPECT_EQ(reads, 8);
  EXPECT_THAT(r.out, HasSubstr("Summary of all tests:"));
}

TEST(Workloads, RewriteAndSmallFilesOnAgentProcesses) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start(2));
  RunResult r = cluster.Run(cluster.WritePlan(
      cluster.Plan()
          .Set("name", "workloads")
          .AddPhase(FilePerProcess("w", "write", "64k", "1m")
                        .Set("random_offsets", true)
                        .Set("verify_after_write", true))
          .AddPhase(FilePerProcess("rw", "rewrite", "64k", "1m").Set("verify", true))
          .AddPhase(FilePerProcess("r", "read", "64k", "1m").Set("verify", true))
          .AddPhase(PlanPhase("untar", "small_files")
                        .Set("tasks_per_agent", 2)
                        .Set("small_files", 300)
                        .Set("small_file_min_size", "512")
                        .Set("small_file_max_size", "32k")
                        .Set("small_files_per_dir", 40))));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("rewrite "));
  EXPECT_THAT(r.out, HasSubstr("small_files"));
  EXPECT_THAT(r.out, HasSubstr("readback"));
  v1::RunRecord rec = r.Record();
  ASSERT_EQ(rec.tests(0).phases_size(), 4);
  const v1::PhaseRecord& rw = rec.tests(0).phases(1);
  EXPECT_EQ(rw.row().access(), "rewrite");
  EXPECT_EQ(rw.row().bytes(), 2u << 20);
  const v1::PhaseRecord& small = rec.tests(0).phases(3);
  EXPECT_TRUE(small.ok()) << small.error();
  ASSERT_EQ(small.extra_rows_size(), 1);
  EXPECT_EQ(small.extra_rows(0).access(), "readback");
  EXPECT_EQ(small.extra_rows(0).bytes(), small.row().bytes());
  EXPECT_GT(small.row().iops(), 0);
  // Removed at the end of the iteration (no keep).
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(cluster.Files(i).empty()) << i;
}

}  // namespace
}  // namespace lockstep::testing
