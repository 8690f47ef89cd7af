// End to end through real agent processes: bonnie++'s random seeks over one
// file two agents share (laid out by their Prepare, removed after the
// repetition), and the per-process CPU the agents report for the phase.
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(Seeks, TwoAgentsSeekOverOneSharedFileAndReportTheirTopProcesses) {
  TestCluster cluster;
  const std::string shared = cluster.MakeDir("shared");
  // 1 ms per seek: the phase lasts about 0.4 s, long enough for telemetry.
  const AgentSpec spec{.flags = {"--root", shared, "--test_delay_per_transfer_us", "1000",
                                 "--telemetry_interval_ms", "100"}};
  ASSERT_OK(cluster.Start({.agents = {spec, spec}}));
  PlanBuilder plan = cluster.Plan();
  plan.AddPhase(PlanPhase("seeks", "seeks")
                    .Set("dir", shared)
                    .Set("tasks_per_agent", 3)
                    .Set("block_size", "64k")
                    .Set("segments", 4)
                    .Set("seeks", 400)
                    .Set("verify", true));
  RunResult r = cluster.Run(cluster.WritePlan(plan));
  ASSERT_EQ(r.exit_code, 0) << r.Output();
  v1::RunRecord rec = r.Record();
  ASSERT_EQ(rec.tests_size(), 1);
  ASSERT_EQ(rec.tests(0).phases_size(), 1);
  const v1::PhaseRecord& p = rec.tests(0).phases(0);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(p.spec().seeks_per_task(), 400u);
  EXPECT_EQ(p.spec().seek_rewrite_pct(), 10u);  // bonnie++'s default share
  EXPECT_EQ(p.spec().transfer_bytes(), 8192u);  // and its chunk
  ASSERT_EQ(p.agents_size(), 2);
  uint64_t seeks = 0, rewritten = 0;
  for (const v1::AgentPhaseRecord& a : p.agents()) {
    ASSERT_EQ(a.tasks_size(), 3);
    for (const v1::TaskResult& t : a.tasks()) {
      EXPECT_EQ(t.file(), shared + "/testfile");  // one file for all six tasks
      seeks += t.ops();
      rewritten += t.seeks_rewritten();
    }
  }
  EXPECT_EQ(seeks, 6u * 400);
  EXPECT_EQ(rewritten, 6u * 40);
  EXPECT_EQ(p.row().access(), "seeks");
  EXPECT_GT(p.row().iops(), 0.0);
  EXPECT_EQ(p.latency().ops(), 6u * 400);
  EXPECT_THAT(r.out, HasSubstr("# seeks: 2400 seeks (240 rewritten) of 8 KiB in 1.50 MiB"));
  // The file the agents laid out went with the repetition (keep = false).
  EXPECT_FALSE(fs::exists(shared + "/testfile"));

  // run.json keeps each agent's busiest processes (the brief).
  int with_top = 0;
  for (const v1::AgentPhaseRecord& a : p.agents()) {
    ASSERT_TRUE(a.has_telemetry_brief());
    EXPECT_LE(a.telemetry_brief().top_processes_size(), 5);
    for (const v1::ProcessCpu& c : a.telemetry_brief().top_processes()) {
      EXPECT_FALSE(c.name().empty());
      EXPECT_GT(c.cpu_pct(), 0.0);
      EXPECT_GE(c.processes(), 1u);
    }
    with_top += a.telemetry_brief().top_processes_size() > 0;
  }
  EXPECT_GT(with_top, 0) << "no agent saw any process use CPU over the phase";
}

}  // namespace
}  // namespace lockstep::testing
