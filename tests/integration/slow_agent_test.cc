// A slowed agent (lockstep-agent --test_delay_per_transfer_us) against the
// tools that must notice: compare and gate on real runs, and the I/O stall
// detector for a transfer that does not come back.
#include <filesystem>
#include <fstream>
#include <memory>

#include "absl/strings/str_format.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/agent_process_util.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;

class SlowAgentTest : public ::testing::Test {
 protected:
  std::unique_ptr<AgentProcess> Start(int i, uint32_t delay_us) {
    std::string root = tmp_ / absl::StrFormat("root%d-%u", i, delay_us);
    std::filesystem::create_directories(root + "/data");
    std::vector<std::string> extra;
    if (delay_us > 0) extra = {"--test_delay_per_transfer_us", std::to_string(delay_us)};
    return std::make_unique<AgentProcess>(root, extra);
  }
  std::string Plan(const std::vector<AgentProcess*>& agents, const std::string& run_extra) {
    std::string body = "[run]\nname = \"nightly\"\nrepetitions = 5\n" + run_extra;
    for (AgentProcess* a : agents) body += absl::StrFormat("[[agent]]\naddress = \"%s\"\n", a->address());
    body += "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"data\"\nfile_per_process = true\n"
            "transfer_size = \"64k\"\nblock_size = \"4m\"\n";
    std::string path = tmp_ / absl::StrFormat("plan%d.toml", n_++);
    std::ofstream(path) << body;
    return path;
  }
  std::string RunDir(const CommandResult& r) { return RunDirFromOutput(r.out); }

  TempDir tmp_;
  int n_ = 0;
};

TEST_F(SlowAgentTest, CompareFlagsTheDropAndTheGateFailsWithJUnit) {
  // Baseline: two normal agents. Then the same plan with one agent whose
  // every transfer takes 2 ms longer (64 transfers per task: ~130 ms more).
  auto a0 = Start(0, 0), a1 = Start(1, 0);
  ASSERT_TRUE(a0->ok() && a1->ok());
  const std::string db = tmp_ / "history.db";
  CommandResult base = RunLockstep({"run", "--insecure", "--out", tmp_ / "results", "--db", db,
                                    Plan({a0.get(), a1.get()}, "")});
  ASSERT_EQ(base.exit_code, 0) << base.out << base.err;
  auto slow = Start(2, 2000);
  ASSERT_TRUE(slow->ok());
  CommandResult worse = RunLockstep({"run", "--insecure", "--out", tmp_ / "results", "--db", db,
                                     Plan({a0.get(), slow.get()}, "")});
  ASSERT_EQ(worse.exit_code, 0) << worse.out << worse.err;

  const std::string a = RunDir(base) + "/run.json", b = RunDir(worse) + "/run.json";
  CommandResult cmp = RunLockstep({"compare", "--db", db, a, b});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.out << cmp.err;
  EXPECT_THAT(cmp.out, HasSubstr("w/write"));
  EXPECT_THAT(cmp.out, HasSubstr(" *")) << cmp.out;  // significant at p < 0.05
  EXPECT_THAT(cmp.out, HasSubstr("Welch"));

  const std::string junit = tmp_ / "gate.xml";
  CommandResult gate = RunLockstep({"gate", "--db", db, b, "--baseline", a, "--max-drop", "5%",
                                    "--junit", junit});
  EXPECT_EQ(gate.exit_code, 1) << gate.out << gate.err;
  auto xml = ReadFileToString(junit);
  ASSERT_OK(xml);
  EXPECT_THAT(*xml, HasSubstr("<testsuites"));
  EXPECT_THAT(*xml, HasSubstr("<failure"));
  EXPECT_THAT(*xml, HasSubstr("write"));

  // The baseline against itself passes: no drop, nothing flagged.
  CommandResult same = RunLockstep({"gate", "--db", db, a, "--baseline", a, "--max-drop", "5%"});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  // No baseline at all: its own exit code.
  CommandResult none = RunLockstep({"gate", "--db", tmp_ / "empty.db", b, "--baseline", "last-good"});
  EXPECT_EQ(none.exit_code, 3) << none.out << none.err;
}

TEST_F(SlowAgentTest, AStuckTransferIsReportedWithItsFileAndOffset) {
  // Every transfer of this agent takes 30 s: with io_stall_timeout_ms = 600
  // the controller gives up on it, names the task, file and offset, and does
  // not wait for it (no cleanup call can finish behind a stuck transfer).
  auto stuck = Start(3, 30'000'000);
  ASSERT_TRUE(stuck->ok());
  const auto t0 = std::chrono::steady_clock::now();
  CommandResult r = RunLockstep({"run", "--insecure", "--history=false", "--out", tmp_ / "results",
                                 Plan({stuck.get()}, "io_stall_timeout_ms = 600\n")});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;  // a hung agent counts as lost
  EXPECT_THAT(r.err, HasSubstr("I/O stalled beyond io_stall_timeout_ms = 600"));
  EXPECT_THAT(r.err, HasSubstr("task 0 stuck in write"));
  EXPECT_THAT(r.err, HasSubstr("data/testfile.00000000 at offset 0"));
  EXPECT_LT(seconds, 25.0) << "the controller waited for the stuck transfer";
}

}  // namespace
}  // namespace lockstep::testing
