// The exit-code table of docs/exit-codes.md, a run per code that a run can cause here
// (3, 4 and 130 have their fault tests: run_test, slow_agent_test,
// fault_test and hang_test; 8 is here, against tests/tools/wire_major_agent),
// and the phase's error kind in run.json beside the code.
#include <filesystem>
#include <fstream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/wire_version.h"
#include "controller/cli/exit_codes.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/process_util.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Overwrites 4 bytes of `path` at `offset`.
void Corrupt(const std::string& path, std::streamoff offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good()) << path;
  f.seekp(offset);
  f.write("XXXX", 4);
}

TEST(ExitCodes, OkUsageIoErrorAndVerify) {
  TestCluster tmp;  // no agents: --local
  std::filesystem::create_directories(tmp / "data");
  const std::string f = tmp / "data/f";
  RunResult w = tmp.Lockstep({"ior", "-w", "-k", "-G", "3", "-b", "1m", "-t", "64k", "-o", f,
                              "--out", tmp.results_dir()});
  ASSERT_EQ(w.exit_code, kExitOk) << w.Output();

  EXPECT_EQ(tmp.Lockstep({"ior", "-w", "-w"}).exit_code, kExitUsage);

  // A verification failure: 6, the task and the phase VERIFY_FAILED.
  Corrupt(f, 100);
  RunResult v = tmp.Lockstep({"ior", "-r", "-R", "-G", "3", "-k", "-b", "1m", "-t", "64k", "-o",
                              f, "--out", tmp.results_dir()});
  EXPECT_EQ(v.exit_code, kExitVerify) << v.Output();
  EXPECT_THAT(v.err, HasSubstr("verification failed"));
  v1::RunRecord rec = v.Record();
  ASSERT_EQ(rec.tests_size(), 1);
  ASSERT_EQ(rec.tests(0).phases_size(), 1);
  const v1::PhaseRecord& read = rec.tests(0).phases(0);
  EXPECT_FALSE(read.ok());
  EXPECT_EQ(read.error_kind(), v1::VERIFY_FAILED);
  ASSERT_GE(read.agents_size(), 1);
  ASSERT_GE(read.agents(0).tasks_size(), 1);
  EXPECT_EQ(read.agents(0).tasks(0).error_kind(), v1::VERIFY_FAILED);

  // An I/O error (a missing file): 5, the phase's kind IO_FAILED.
  RunResult io = tmp.Lockstep({"ior", "-r", "-F", "-b", "1m", "-t", "64k", "-o", tmp / "data/none",
                               "--out", tmp.results_dir()});
  EXPECT_EQ(io.exit_code, kExitIoError) << io.Output();
  v1::RunRecord io_rec = io.Record();
  ASSERT_EQ(io_rec.tests_size(), 1);
  ASSERT_EQ(io_rec.tests(0).phases_size(), 1);
  EXPECT_EQ(io_rec.tests(0).phases(0).error_kind(), v1::IO_FAILED);
}

// 8: an agent process that answers Attach with another wire protocol major
// (tests/tools/wire_major_agent, the real proto over a real socket): the
// controller refuses it before any phase, naming the agent, both versions
// and the fix.
TEST(ExitCodes, AnAgentOfAnotherWireMajorExits8) {
  TestCluster tmp;
  std::filesystem::create_directories(tmp / "data");
  ListeningProcess other({ToolsDir() + "/wire_major_agent", "--wire_major",
                          std::to_string(kWireMajor + 1), "--wire_minor", "3"},
                         tmp / "wire_major_agent.log");
  ASSERT_TRUE(other.ok()) << other.error();
  RunResult r = tmp.Lockstep({"ior", "-w", "-b", "64k", "-t", "64k", "-o", tmp / "data/f",
                              "--agents", other.address(), "--insecure", "--out",
                              tmp.results_dir()});
  EXPECT_EQ(r.exit_code, kExitVersion) << r.Output();
  EXPECT_THAT(r.err, HasSubstr("version mismatch"));
  EXPECT_THAT(r.err, HasSubstr(absl::StrFormat("agent lockstep 0.0.0-other (wire protocol %u.3) "
                                               "on %s (host other-major-host)",
                                               kWireMajor + 1, other.address())));
  EXPECT_THAT(r.err, HasSubstr(absl::StrFormat("controller lockstep %s (wire protocol %u.%u)",
                                               LOCKSTEP_VERSION, kWireMajor, kWireMinor)));
  EXPECT_THAT(r.err, HasSubstr(absl::StrFormat("upgrade the controller to a lockstep release "
                                               "that speaks wire protocol %u",
                                               kWireMajor + 1)));
  EXPECT_FALSE(std::filesystem::exists(tmp / "data/f"));  // refused before any phase
}

TEST(ExitCodes, SkewBeyondTheBoundFails) {
  TestCluster tmp;
  // Two agents' start skew plus its uncertainty (the clock estimates' ±) is
  // above 1 us: the bound is broken, and with on_skew = "fail" the run stops.
  std::string plan = tmp.WritePlan(PlanBuilder()
                                       .Set("max_start_skew_us", 1)
                                       .Set("on_skew", "fail")
                                       .AddPhase(PlanPhase("w", "write").Set("dir", "data")));
  RunResult r = tmp.Lockstep({"run", "--local", "2", "--out", tmp.results_dir(), plan});
  EXPECT_EQ(r.exit_code, kExitSkew) << r.Output();
}

// A train phase whose AU is below its threshold: every phase runs and is
// recorded, the run fails with 9 and run.json says which phase, AU and
// threshold. Deterministic: AU = compute / wall, and the wall of an epoch
// also holds the wait for its first batch, which is never zero, so AU < 1
// and an au_threshold of 1.0 cannot pass.
TEST(ExitCodes, TrainAuBelowItsThresholdFails) {
  TestCluster tmp;
  auto dataset = [](PlanPhase p) {
    return p.Set("dir", "ai")
        .Set("format", "npz")
        .Set("num_files", 4)
        .Set("samples_per_file", 1)
        .Set("record_size", "64k");
  };
  std::string plan = tmp.WritePlan(
      PlanBuilder()
          .AddPhase(dataset(PlanPhase("gen", "datagen")).Set("keep", true))
          .AddPhase(dataset(PlanPhase("train", "train"))
                        .Set("batch_size", 1)
                        .Set("computation_time_seconds", 0.001)
                        .Set("au_threshold", 1.0)));
  RunResult r = tmp.Lockstep({"run", "--local", "1", "--out", tmp.results_dir(), plan});
  EXPECT_EQ(r.exit_code, kExitAuBelowThreshold) << r.Output();
  EXPECT_THAT(r.err, HasSubstr("below its au_threshold 100.00%")) << r.Output();
  v1::RunRecord rec = r.Record();
  EXPECT_EQ(rec.status(), "failed");
  EXPECT_THAT(rec.error(), HasSubstr("phase train (test 0, repetition 0): AU "));
  EXPECT_THAT(rec.error(), HasSubstr("% is below its au_threshold 100.00%"));
  ASSERT_EQ(rec.tests_size(), 1);
  ASSERT_EQ(rec.tests(0).phases_size(), 2);
  const v1::PhaseRecord& train = rec.tests(0).phases(1);
  EXPECT_TRUE(train.ok()) << train.error();  // the phase itself ran and is recorded
  EXPECT_FALSE(train.ai().au_passed());
  EXPECT_GT(train.ai().au_mean(), 0.0);
  EXPECT_LT(train.ai().au_mean(), 1.0);
  EXPECT_EQ(rec.tests(0).summary_size(), 2);
}

// Local agents write only where the runner meant: a system directory is
// refused with the plan line and the fix, before anything is created.
TEST(ExitCodes, LocalAgentsRefuseSystemDirectories) {
  TestCluster tmp;
  const std::string dir = "/etc/lockstep-exit-codes-test";
  RunResult ior = tmp.Lockstep({"ior", "-w", "-o", dir + "/f", "--out", tmp.results_dir()});
  EXPECT_EQ(ior.exit_code, kExitUsage) << ior.Output();
  EXPECT_THAT(ior.err, HasSubstr("is a system directory"));
  EXPECT_THAT(ior.err, HasSubstr("--root " + dir));
  EXPECT_THAT(ior.err, Not(HasSubstr("create it")));
  std::string plan = tmp.WritePlan(PlanBuilder().AddPhase(PlanPhase("w", "write").Set("dir", dir)));
  RunResult run = tmp.Lockstep({"run", "--local", "1", "--out", tmp.results_dir(), plan});
  EXPECT_EQ(run.exit_code, kExitUsage) << run.Output();
  EXPECT_THAT(run.err, HasSubstr(plan + ":"));
  EXPECT_THAT(run.err, HasSubstr("phase 'w': dir \"" + dir + "\" is a system directory"));
  EXPECT_FALSE(std::filesystem::exists(dir));
  // Outside the runner's places (not a system directory): --root allows it.
  std::string other = tmp.WritePlan(
      PlanBuilder().AddPhase(PlanPhase("w", "write").Set("dir", "/var/tmp/lockstep-exit-codes")));
  RunResult refused = tmp.Lockstep({"run", "--local", "1", "--out", tmp.results_dir(), other});
  EXPECT_EQ(refused.exit_code, kExitUsage) << refused.Output();
  EXPECT_THAT(refused.err, HasSubstr("--root /var/tmp/lockstep-exit-codes"));
  RunResult allowed = tmp.Lockstep({"run", "--local", "1", "--root", "/var/tmp/lockstep-exit-codes",
                                    "--out", tmp.results_dir(), other});
  EXPECT_EQ(allowed.exit_code, kExitOk) << allowed.Output();
  std::error_code ec;
  std::filesystem::remove_all("/var/tmp/lockstep-exit-codes", ec);
  // The agents' root itself (--local_root) is checked as a plan's dir is:
  // before, every dir being absolute, /usr/share became the agent's root.
  std::string in_tmp = tmp.WritePlan(
      PlanBuilder().AddPhase(PlanPhase("w", "write").Set("dir", "/tmp/lockstep-exit-codes-lr")));
  RunResult root = tmp.Lockstep({"run", "--local", "1", "--local_root", "/usr/share", "--out",
                                 tmp.results_dir(), in_tmp});
  EXPECT_EQ(root.exit_code, kExitUsage) << root.Output();
  EXPECT_THAT(root.err, HasSubstr("--local_root \"/usr/share\" is a system directory"));
  std::filesystem::remove_all("/tmp/lockstep-exit-codes-lr", ec);
}

// A run reference that names no run is a bad command line for every
// command that reads runs, as for gate (before, report, compare and export
// exited 1, gate 2).
TEST(ExitCodes, ARunReferenceThatNamesNoRunIsAUsageError) {
  TestCluster tmp;
  const std::string db = tmp / "history.db";
  const std::string certs = tmp / "certs";
  ASSERT_EQ(tmp.Lockstep({"certs", "init", "--dir", certs, "--agent", "s"}).exit_code, kExitOk);
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"report", "--db", db, "nosuch"},
           {"compare", "--db", db, "nosuch", "nosuch2"},
           {"export", "--db", db, "nosuch", "--csv", tmp / "x.csv"},
           {"export", "--db", db, "--bundle", "nosuch", tmp / "x.lsbundle", "--key",
            certs + "/agent-s.key", "--cert", certs + "/agent-s.pem"},
           {"gate", "--db", db, "nosuch"}}) {
    RunResult r = tmp.Lockstep(args);
    EXPECT_EQ(r.exit_code, kExitUsage) << absl::StrJoin(args, " ") << "\n" << r.Output();
    EXPECT_THAT(r.err, HasSubstr("nosuch: not a directory with run.json"));
  }
}

// Before, a path that was not UTF-8 failed far from its cause: `ior -o` as a
// plan.toml line that did not parse, `run --local_root` as an agent lost
// (its HostFacts did not serialise). Now both are usage errors naming it.
TEST(ExitCodes, AnArgumentThatIsNotUtf8IsAUsageError) {
  TestCluster tmp;
  const std::string bad = tmp / "r\xff";
  RunResult ior = tmp.Lockstep({"ior", "-w", "-o", bad + "/f", "--local", "1"});
  EXPECT_EQ(ior.exit_code, kExitUsage) << ior.Output();
  EXPECT_THAT(ior.err, HasSubstr("\\xff/f\" (after -o) is not UTF-8"));
  std::string plan = tmp.WritePlan(PlanBuilder().AddPhase(PlanPhase("w", "write").Set("dir", "d")));
  RunResult run = tmp.Lockstep(
      {"run", "--local", "1", "--local_root", bad, "--out", tmp.results_dir(), plan});
  EXPECT_EQ(run.exit_code, kExitUsage) << run.Output();
  EXPECT_THAT(run.err, HasSubstr("(after --local_root) is not UTF-8"));
  EXPECT_FALSE(std::filesystem::exists(bad));
}

}  // namespace
}  // namespace lockstep::testing
