// End to end: `lockstep ior` and `lockstep mdtest` with unchanged command
// lines on local agents, and the rewrite and small_files kinds on agent
// processes.
#include <filesystem>
#include <fstream>

#include "absl/strings/str_format.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/agent_process_util.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(IorCli, FilePerProcessWriteReadOnTwoLocalAgents) {
  TempDir tmp;
  std::filesystem::create_directories(tmp / "data");
  CommandResult r = RunLockstep({"ior", "-F", "-w", "-r", "-b", "4m", "-t", "1m", "-i", "2", "-o",
                                 tmp / "data/f", "-O", "summaryFormat=JSON", "--out",
                                 tmp / "results"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("2 agents (local) x 1 task = 2 tasks"));
  EXPECT_THAT(r.out, HasSubstr("Summary of all tests:"));
  EXPECT_THAT(r.out, HasSubstr("Max Write: "));
  EXPECT_THAT(r.out, HasSubstr("Max Read:  "));
  EXPECT_THAT(r.out, HasSubstr("\"summary\": ["));
  EXPECT_THAT(r.out, HasSubstr("\"bwMeanMIB\": "));
  std::string dir = RunDirFromOutput(r.out);
  ASSERT_FALSE(dir.empty()) << r.out;
  v1::RunRecord rec = ReadRunJson(dir);
  ASSERT_EQ(rec.tests_size(), 1);
  ASSERT_EQ(rec.tests(0).phases_size(), 4);  // (write, read) x 2
  for (const v1::PhaseRecord& p : rec.tests(0).phases()) {
    EXPECT_TRUE(p.ok()) << p.error();
    EXPECT_EQ(p.row().bytes(), 2u * (4u << 20));
  }
  // Without -k the files are removed; plan.toml is a plan `lockstep run` takes.
  EXPECT_TRUE(ListFiles(tmp / "data").empty());
  EXPECT_THAT(*ReadFileToString(dir + "/plan.toml"), HasSubstr("block_size = 4194304"));
}

TEST(IorCli, BadOptionsExitTwoNamingTheOption) {
  CommandResult r = RunLockstep({"ior", "-b", "1x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("-b 1x"));
  r = RunLockstep({"ior", "-c"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("-c: refused"));
}

TEST(MdtestCli, UniqueDirsPrintsTheSummaryTable) {
  TempDir tmp;
  std::filesystem::create_directories(tmp / "md");
  CommandResult r = RunLockstep({"mdtest", "-n", "1000", "-u", "-d", tmp / "md", "--out",
                                 tmp / "results"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("SUMMARY rate (in ops/sec): (of 1 iterations)"));
  for (const char* row : {"Directory creation", "Directory stat", "Directory removal",
                          "File creation", "File stat", "File read", "File removal",
                          "Tree creation", "Tree removal"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string("   ") + row)) << row;
  }
  std::string dir = RunDirFromOutput(r.out);
  v1::RunRecord rec = ReadRunJson(dir);
  for (const v1::PhaseRecord& p : rec.tests(0).phases()) {
    EXPECT_TRUE(p.ok()) << p.error();
    if (p.spec().md_op() == v1::MD_FILE_CREATE) {
      EXPECT_EQ(p.md_items(), 2000u);  // 1000 per task, 2 tasks
    }
    EXPECT_GT(p.md_rate(), 0) << p.phase();
  }
  EXPECT_TRUE(std::filesystem::is_empty(tmp / "md"));
}

TEST(Workloads, RewriteAndSmallFilesOnAgentProcesses) {
  TempDir tmp;
  std::vector<std::unique_ptr<AgentProcess>> agents;
  std::string tables;
  for (int i = 0; i < 2; ++i) {
    std::string root = tmp / absl::StrFormat("root%d", i);
    std::filesystem::create_directories(root + "/data");
    agents.push_back(std::make_unique<AgentProcess>(root));
    ASSERT_TRUE(agents.back()->ok());
    tables += absl::StrFormat("[[agent]]\naddress = \"%s\"\n", agents.back()->address());
  }
  std::string plan = tmp / "plan.toml";
  std::ofstream(plan) << "[run]\nname = \"workloads\"\n" + tables + R"(
[[phase]]
name = "w"
kind = "write"
dir = "data"
file_per_process = true
transfer_size = "64k"
block_size = "1m"
random_offsets = true
verify_after_write = true

[[phase]]
name = "rw"
kind = "rewrite"
dir = "data"
file_per_process = true
transfer_size = "64k"
block_size = "1m"
verify = true

[[phase]]
name = "r"
kind = "read"
dir = "data"
file_per_process = true
transfer_size = "64k"
block_size = "1m"
verify = true

[[phase]]
name = "untar"
kind = "small_files"
dir = "data"
tasks_per_agent = 2
small_files = 300
small_file_min_size = "512"
small_file_max_size = "32k"
small_files_per_dir = 40
)";
  CommandResult r = RunLockstep({"run", "--insecure", "--out", tmp / "results", plan});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("rewrite "));
  EXPECT_THAT(r.out, HasSubstr("small_files"));
  EXPECT_THAT(r.out, HasSubstr("readback"));
  v1::RunRecord rec = ReadRunJson(RunDirFromOutput(r.out));
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
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(ListFiles(tmp / absl::StrFormat("root%d/data", i)).empty()) << i;
  }
}

}  // namespace
}  // namespace lockstep::testing
