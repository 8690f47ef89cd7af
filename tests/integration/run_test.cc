// End to end: three lockstep-agent processes on loopback, the real
// `lockstep` binary, real files.
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/files.h"
#include "common/pattern.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/agent_process_util.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;

class RunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 3; ++i) {
      roots_.push_back(tmp_ / absl::StrFormat("root%d", i));
      std::filesystem::create_directories(roots_.back() + "/data");
      agents_.push_back(std::make_unique<AgentProcess>(roots_.back()));
      ASSERT_TRUE(agents_.back()->ok());
    }
  }

  std::string AgentTables(int n = 3) {
    std::string s;
    for (int i = 0; i < n; ++i) {
      s += absl::StrFormat("[[agent]]\naddress = \"%s\"\n", agents_[i]->address());
    }
    return s;
  }

  std::string WritePlan(const std::string& body) {
    std::string path = tmp_ / absl::StrFormat("plan%d.toml", plans_++);
    std::ofstream(path) << body;
    return path;
  }

  CommandResult Run(const std::string& plan) {
    return RunLockstep({"run", "--insecure", "--out", tmp_ / "results", plan});
  }

  TempDir tmp_;
  std::vector<std::string> roots_;
  std::vector<std::unique_ptr<AgentProcess>> agents_;
  int plans_ = 0;
};

TEST_F(RunTest, WritesReadsAndReportsLikeIor) {
  std::string plan = WritePlan(
      "[run]\nname = \"e2e\"\nrepetitions = 2\n" + AgentTables() +
      R"([[phase]]
name = "w"
kind = "write"
dir = "data"
file_per_process = true
tasks_per_agent = [1, 2]
transfer_size = "64k"
block_size = "1m"
segments = 2
fsync = true
keep = true

[[phase]]
name = "r"
kind = "read"
dir = "data"
file_per_process = true
tasks_per_agent = [1, 2]
transfer_size = "64KiB"
block_size = 1048576
segments = 2
verify = true
keep = true
)");
  CommandResult r = Run(plan);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Summary of all tests:"));
  EXPECT_THAT(r.out, HasSubstr("Max Write: "));
  EXPECT_THAT(r.out, HasSubstr("Max Read:  "));
  EXPECT_THAT(r.out, HasSubstr("access              : file-per-process"));

  // Files of the last test (2 tasks per agent, 6 ranks): agent i holds ranks
  // 2i and 2i+1, each 2 segments × 1 MiB, with the pattern of its writer.
  for (int i = 0; i < 3; ++i) {
    std::vector<std::string> want = {absl::StrFormat("testfile.%08d", 2 * i),
                                     absl::StrFormat("testfile.%08d", 2 * i + 1)};
    // Test 0 (1 task per agent) wrote ranks 0..2 and they were kept too.
    if (i < 3) want.push_back(absl::StrFormat("testfile.%08d", i));
    std::sort(want.begin(), want.end());
    want.erase(std::unique(want.begin(), want.end()), want.end());
    EXPECT_EQ(ListFiles(roots_[i] + "/data"), want) << "agent " << i;
    for (int rank : {2 * i, 2 * i + 1}) {
      std::string f = roots_[i] + absl::StrFormat("/data/testfile.%08d", rank);
      EXPECT_EQ(std::filesystem::file_size(f), 2u << 20);
      auto content = ReadFileToString(f);
      ASSERT_OK(content);
      std::string scratch(content->size(), '\0');
      auto m = CheckPattern(content->data(), content->size(), 0, PatternTag(1, rank),
                            scratch.data());
      EXPECT_FALSE(m.has_value()) << f << ": " << m->Describe();
    }
  }

  // The summary agrees with run.json, and run.json with the IOR arithmetic.
  std::string dir = RunDirFromOutput(r.out);
  ASSERT_FALSE(dir.empty()) << r.out;
  v1::RunRecord rec = ReadRunJson(dir);
  EXPECT_EQ(rec.status(), "complete");
  EXPECT_EQ(rec.agents_size(), 3);
  ASSERT_EQ(rec.tests_size(), 2);
  EXPECT_TRUE(std::filesystem::exists(dir + "/plan.toml"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/summary.txt"));
  EXPECT_EQ(*ReadFileToString(dir + "/summary.txt"), r.out);
  for (const v1::TestRecord& t : rec.tests()) {
    ASSERT_EQ(t.phases_size(), 4);  // (w, r) × 2 repetitions
    for (const v1::PhaseRecord& p : t.phases()) {
      EXPECT_TRUE(p.ok()) << p.error();
      EXPECT_EQ(p.row().bytes(), p.row().expected_bytes());
      EXPECT_EQ(p.row().bytes(), uint64_t{t.total_tasks()} * 2 * (1 << 20));
      int64_t min_open = INT64_MAX, max_close = 0;
      int tasks = 0;
      for (const auto& a : p.agents()) {
        for (const auto& task : a.tasks()) {
          min_open = std::min(min_open, task.open_start_unix_ns());
          max_close = std::max(max_close, task.close_stop_unix_ns());
          ++tasks;
        }
      }
      EXPECT_EQ(tasks, static_cast<int>(t.total_tasks()));
      EXPECT_NEAR(p.row().total_s(), static_cast<double>(max_close - min_open) / 1e9, 1e-9);
      EXPECT_NEAR(p.row().bw_mib(), p.row().bytes() / 1048576.0 / p.row().total_s(), 1e-6);
    }
    ASSERT_EQ(t.summary_size(), 2);
    const v1::SummaryRow& w = t.summary(0);
    EXPECT_EQ(w.operation(), "write");
    double a = t.phases(0).row().bw_mib(), b = t.phases(2).row().bw_mib();
    EXPECT_NEAR(w.bw_max_mib(), std::max(a, b), 1e-6);
    EXPECT_NEAR(w.bw_mean_mib(), (a + b) / 2, 1e-6);
    EXPECT_NEAR(w.bw_std_mib(), std::fabs(a - b) / 2, 1e-6);  // population SD of two
    // The printed row carries the same figures.
    EXPECT_THAT(r.out, HasSubstr(absl::StrFormat("write     %10.2f %10.2f", w.bw_max_mib(),
                                                 w.bw_min_mib())));
  }
}

TEST_F(RunTest, RemovesFilesUnlessKept) {
  std::string plan = WritePlan(AgentTables() + R"([[phase]]
name = "w"
kind = "write"
dir = "data"
transfer_size = "64k"
block_size = "256k"
[[phase]]
name = "r"
kind = "read"
dir = "data"
transfer_size = "64k"
block_size = "256k"
)");
  CommandResult r = Run(plan);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("\n# remove    "));
  EXPECT_THAT(r.out, HasSubstr("single-shared-file"));
  for (const auto& root : roots_) EXPECT_TRUE(ListFiles(root + "/data").empty()) << root;
}

TEST_F(RunTest, UnreachableAgentIsNamedAndNothingIsLeftBehind) {
  std::string plan = WritePlan(AgentTables(1) +
                               "[run]\nconnect_timeout_ms = 500\n"
                               "[[agent]]\naddress = \"127.0.0.1:1\"\n"
                               "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"data\"\n");
  CommandResult r = Run(plan);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("agent 127.0.0.1:1 did not answer within 500ms"));
  EXPECT_TRUE(ListFiles(roots_[0] + "/data").empty());
  // The good agent was never taken: another run can use it at once.
  std::string ok = WritePlan(AgentTables(1) +
                             "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"data\"\n");
  EXPECT_EQ(Run(ok).exit_code, 0);
}

TEST_F(RunTest, DirectoryOutsideRootsOrMissing) {
  CommandResult outside = Run(WritePlan(
      AgentTables() + "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"/etc\"\n"));
  EXPECT_EQ(outside.exit_code, 2) << outside.out << outside.err;
  EXPECT_THAT(outside.err, HasSubstr("directory /etc is outside the agent's allowed roots"));
  EXPECT_THAT(outside.err, HasSubstr("agent 127.0.0.1:"));

  CommandResult escape = Run(WritePlan(
      AgentTables() + "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"data/../..\"\n"));
  EXPECT_EQ(escape.exit_code, 2);
  EXPECT_THAT(escape.err, HasSubstr("outside the agent's allowed roots"));

  CommandResult missing = Run(WritePlan(
      AgentTables() + "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"nope\"\n"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("nope does not exist"));
  for (const auto& root : roots_) EXPECT_TRUE(ListFiles(root + "/data").empty());
}

TEST_F(RunTest, ReadOfMissingFilesNamesFileAndTask) {
  CommandResult r = Run(WritePlan(
      AgentTables() + "[[phase]]\nname = \"r\"\nkind = \"read\"\ndir = \"data\"\n"
                      "file_per_process = true\n"));
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("testfile.0000000"));
  EXPECT_THAT(r.err, HasSubstr("does not exist"));
  v1::RunRecord rec = ReadRunJson(RunDirFromOutput(r.out));
  EXPECT_EQ(rec.status(), "failed");
  EXPECT_THAT(rec.error(), HasSubstr("does not exist"));
}

TEST_F(RunTest, PlanErrorsExitTwoWithPosition) {
  CommandResult r = Run(WritePlan("[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"d\"\n"
                                  "tasks_per_agent = 0\n"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(":5:19: [[phase]] 'w' key 'tasks_per_agent'"));
}

TEST(LocalRun, EmbeddedDefaultRunsTheSamplePlan) {
  TempDir tmp;
  CommandResult r = RunLockstep({"run", "--local", "2", "--out", tmp / "results",
                                 SourceDir() + "/deploy/plans/quickstart.toml"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("\nwrite "));
  EXPECT_THAT(r.out, HasSubstr("\nread "));
  EXPECT_THAT(r.out, HasSubstr("# agents: 2 (2 client)"));
  v1::RunRecord rec = ReadRunJson(RunDirFromOutput(r.out));
  EXPECT_EQ(rec.status(), "complete");
}

TEST(LocalRun, InsecureToARemoteAddressIsRefused) {
  TempDir tmp;
  std::string plan = tmp / "p.toml";
  std::ofstream(plan) << "[[agent]]\naddress = \"node7.example:7070\"\n"
                         "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"d\"\n";
  CommandResult r = RunLockstep({"run", "--insecure", "--out", tmp / "results", plan});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--insecure is allowed only for loopback agents"));
  CommandResult none = RunLockstep({"run", "--out", tmp / "results", plan});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("no TLS material"));
}

// With --local the user runs both sides: the plan's absolute directories
// are the agents' roots (created if missing, as IOR creates its files);
// relative ones stay below the temporary root.
TEST(LocalRun, TrustsThePlansAbsoluteDirectories) {
  TempDir tmp;
  const std::string data = tmp / "not/yet/there";
  std::string plan = tmp / "p.toml";
  std::ofstream(plan) << "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"" << data
                      << "\"\nfile_per_process = true\nkeep = true\nblock_size = \"64k\"\n"
                         "transfer_size = \"64k\"\n";
  CommandResult r = RunLockstep({"run", "--local", "1", "--out", tmp / "results", plan});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(ListFiles(data), std::vector<std::string>{"testfile.00000000"});

  std::ofstream(plan) << "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"../up\"\n";
  r = RunLockstep({"run", "--local", "1", "--out", tmp / "results", plan});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("dir \"../up\" climbs out of the local agents' root; with "
                               "--local use an absolute dir, or --local_root DIR"));
}

}  // namespace
}  // namespace lockstep::testing
