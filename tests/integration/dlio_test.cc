// End to end: `lockstep dlio` on the shipped unet3d config at smoke size on
// two local agents (datagen, train, checkpoint write), and the
// --find-max-accelerators sweep.
#include <filesystem>
#include <regex>

#include "absl/strings/str_format.h"
#include "common/files.h"
#include "common/net.h"
#include "controller/cli/exit_codes.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/process_util.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string Unet3d() { return std::string(LOCKSTEP_SOURCE_DIR) + "/deploy/plans/dlio/unet3d.yaml"; }

// `lockstep dlio ARGS` run in `dir` (DLIO's folders are relative to it).
// Every path below `dir`, one a line (what a test found left there).
std::string Listing(const std::string& dir) {
  std::string out = dir + " holds:\n";
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) out += e.path().string() + "\n";
  return out;
}

CommandResult DlioIn(const std::string& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/env", "-C", dir, BinDir() + "/lockstep", "dlio"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

TEST(DlioCli, Unet3dSmokeOnTwoLocalAgents) {
  TestCluster tmp;  // no agents: local ones
  const std::string work = tmp / "work";
  fs::create_directories(work);
  CommandResult r = DlioIn(work, {Unet3d(), "--smoke", "--local", "2", "--out", tmp.results_dir()});
  // An AU below the config's metric.au fails the run with its own code.
  const bool au_met = r.out.find("[METRIC] train_au_meet_expectation: success") != std::string::npos;
  ASSERT_EQ(r.exit_code, au_met ? 0 : kExitAuBelowThreshold) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("# lockstep dlio: --smoke: dataset.num_files_train 168 -> 8\n"));
  EXPECT_THAT(r.out, HasSubstr("reader.data_loader = pytorch: accepted, changes nothing"));
  // The dataset, as DLIO names it, under the config's data folder, and the
  // checkpoints below it were written and read (three phases, below) and,
  // a smoke run being a trial, removed: nothing is left in the working
  // directory (issue 39: checkpoints/ was left there).
  EXPECT_THAT(r.out, HasSubstr("# lockstep dlio: --smoke: what the run writes (dataset, "
                               "checkpoints) is removed at its end\n"));
  EXPECT_THAT(r.out, HasSubstr("# lockstep dlio: checkpoints (removed: --smoke) were in " +
                               LocalHostName() + ":" + work + "/data/unet3d/checkpoints/unet3d\n"));
  EXPECT_TRUE(fs::is_empty(work)) << Listing(work) << r.out;
  // DLIO's lines after Lockstep's.
  EXPECT_THAT(r.out, HasSubstr("[METRIC] Number of Simulated Accelerators: 2\n"));
  const std::regex au("\\[OUTPUT\\] Epoch 1 \\[Training\\] Accelerator Utilization \\[AU\\] "
                      "\\(%\\): ([0-9.]+)\n");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, au)) << r.out;
  EXPECT_GT(std::stod(m[1]), 0.0);
  EXPECT_LE(std::stod(m[1]), 100.0);
  EXPECT_THAT(r.out, HasSubstr("[METRIC] train_au_meet_expectation: "));
  EXPECT_THAT(r.out, HasSubstr("[METRIC] Checkpoint save duration (seconds): "));
  // run.json: 8 files of 1 sample read once in the epoch (batches of 4 by 2
  // accelerators: one batch each).
  const v1::RunRecord rec = ReadRunJson(RunDirFromOutput(r.out));
  ASSERT_EQ(rec.tests_size(), 1);
  ASSERT_EQ(rec.tests(0).phases_size(), 3);
  const v1::PhaseRecord& train = rec.tests(0).phases(1);
  EXPECT_EQ(train.kind(), v1::TRAIN);
  EXPECT_EQ(train.ai().accelerators(), 2u);
  EXPECT_EQ(train.ai().samples(), 8u);
  EXPECT_GT(train.ai().au_mean(), 0.0);
  // The report (IOR's, not at -v; DLIO's lines come after it) printed again.
  ExpectReportReprintsRun(RunDirFromOutput(r.out));
}

// Issue 39's case: `--smoke --data-dir D` from a working directory: nothing
// is left in either (D itself, the user's, stays).
TEST(DlioCli, SmokeWithDataDirLeavesNothingInTheWorkingOrDataDirectory) {
  TestCluster tmp;
  const std::string work = tmp / "work", data = tmp / "data";
  fs::create_directories(work);
  fs::create_directories(data);
  CommandResult r = DlioIn(work, {Unet3d(), "++workload.metric.au=0.01", "--smoke", "--data-dir",
                                  data, "--local", "1", "--out", tmp.results_dir()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("[METRIC] Checkpoint save duration (seconds): "));
  EXPECT_THAT(r.out, HasSubstr("# lockstep dlio: checkpoints (removed: --smoke) were in " +
                               LocalHostName() + ":" + data + "/checkpoints/unet3d\n"));
  EXPECT_TRUE(fs::is_empty(work)) << Listing(work);
  ASSERT_TRUE(fs::is_directory(data));
  EXPECT_TRUE(fs::is_empty(data)) << Listing(data);
}

// A full run keeps its checkpoints, as DLIO, and says where they are
// (host:/absolute path), a relative folder below the data directory.
TEST(DlioCli, RunPrintsWhereItsCheckpointsAreAndKeepsThem) {
  TestCluster tmp;
  const std::string work = tmp / "work", data = tmp / "data", cfg = tmp / "ckpt.yaml";
  fs::create_directories(work);
  ASSERT_OK(WriteFileAtomically(cfg, "model:\n  name: tiny\n  model_size: 1048576\n"
                                     "workflow:\n  train: False\n  checkpoint: True\n"
                                     "checkpoint:\n  checkpoint_folder: ./ckpt/\n"));
  CommandResult r = DlioIn(work, {cfg, "--data-dir", data, "--local", "1", "--out",
                                  tmp.results_dir()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("# lockstep dlio: checkpoints are in " + LocalHostName() + ":" +
                               data + "/ckpt\n"));
  EXPECT_FALSE(fs::is_empty(data + "/ckpt")) << Listing(data) << r.out;
  EXPECT_TRUE(fs::is_empty(work)) << Listing(work);
}

TEST(DlioCli, FindMaxAcceleratorsDoublesUpToTheCap) {
  TestCluster tmp;
  const std::string work = tmp / "work";
  fs::create_directories(work);
  // A threshold every step meets on this machine: the sweep doubles 1, 2, 4
  // and stops at --max-accelerators.
  CommandResult r =
      DlioIn(work, {Unet3d(), "++workload.metric.au=0.01", "--smoke", "--local", "1",
                    "--find-max-accelerators", "--max-accelerators", "4", "--out",
                    tmp.results_dir()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (int n : {1, 2, 4}) {
    EXPECT_THAT(r.out, HasSubstr(absl::StrFormat(
                           "# lockstep dlio: find-max: %d accelerators per host: AU ", n)))
        << r.out;
  }
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("find-max: 8 accelerators")));
  EXPECT_THAT(r.out, HasSubstr("# lockstep dlio: find-max: the most accelerators per host with "
                               "AU at or above 1.00%: 4 (none tried failed)\n"));
  // The dataset is written once, by the first step.
  size_t datagens = 0;
  for (size_t at = r.out.find("\ndatagen "); at != std::string::npos;
       at = r.out.find("\ndatagen ", at + 1)) {
    ++datagens;
  }
  EXPECT_EQ(datagens, 2u) << r.out;  // its row, and its summary row: one run
  // Each step is a run, recorded in history with the site given (as
  // `lockstep run`): three runs, each with its AU.
  CommandResult listed = RunLockstep({"history", "--db", tmp.results_dir() + "/history.db"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  size_t runs = 0;
  for (size_t at = listed.out.find(" dlio-"); at != std::string::npos;
       at = listed.out.find(" dlio-", at + 1)) {
    ++runs;
  }
  EXPECT_EQ(runs, 3u) << listed.out;
}

TEST(DlioCli, UnknownKeyIsRefusedBeforeAnyAgentStarts) {
  TestCluster tmp;
  const std::string cfg = tmp / "w.yaml";
  ASSERT_OK(WriteFileAtomically(cfg, "workflow:\n  train: True\n  evaluation: True\n"));
  CommandResult r = DlioIn(tmp / "", {cfg, "--local", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("w.yaml:3:15: unknown key workflow.evaluation (value True)"));
}

}  // namespace
}  // namespace lockstep::testing
