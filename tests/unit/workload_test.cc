// Comparable by construction (issue 40): the workload hash keeps what
// determines the I/O and leaves out what is local; compare --sites refuses
// runs of different classes and prints one table per result.
#include "controller/results/workload.h"

#include "controller/results/history.h"
#include "controller/results/site_compare.h"
#include "gtest/gtest.h"
#include "unit/results_fixtures.h"

namespace lockstep {
namespace {

using testing::TempDir;

// A run with recorded plan_specs (as runs write them) and a cache barrier.
v1::RunRecord SpecRun(const std::string& id, uint64_t transfer_bytes = 1 << 20) {
  SynthRun s;
  s.run_id = id;
  s.results = {{"write", 4, Reps(1000, 0.01, 3)}, {"read", 4, Reps(1500, 0.01, 3)}};
  v1::RunRecord run = MakeRun(s);
  for (auto& test : *run.mutable_tests()) {
    for (auto& ph : *test.mutable_phases()) {
      ph.set_cache("all");
      ph.mutable_spec()->set_transfer_bytes(transfer_bytes);
      if (ph.repetition() == 0) {
        v1::PhaseSpec spec = ph.spec();
        spec.set_kind(ph.kind());
        spec.set_phase_id(ph.phase_id());
        *test.add_plan_specs() = spec;
      }
    }
  }
  return run;
}

TEST(WorkloadHash, ChangedDirectoryHostAddressAndTunablesKeepTheHash) {
  const v1::RunRecord a = SpecRun("a");
  v1::RunRecord b = SpecRun("b");
  b.set_started_at("2027-01-01T00:00:00Z");
  b.set_controller_host("elsewhere");
  for (auto& agent : *b.mutable_agents()) {
    agent.set_address("192.168.7.9:7070");
    agent.mutable_facts()->set_hostname("other-node");
  }
  for (auto& test : *b.mutable_tests()) {
    test.set_repetitions(7);
    for (auto& spec : *test.mutable_plan_specs()) {
      spec.set_dir("/lustre/scratch/other/bench");
      spec.set_file_name("data");
      spec.set_stripe_count(8);
      spec.set_set_stripe(true);
      spec.set_stripe_pool("flash");
      spec.set_delay_seconds(3);
      spec.set_ignore_free_space(true);
      spec.set_stonewall_count(12345);
    }
  }
  const WorkloadIdentity wa = WorkloadOf(a), wb = WorkloadOf(b);
  EXPECT_EQ(wa.hash, wb.hash) << WorkloadDifference(wa, wb);
  EXPECT_EQ(wa.hash.size(), 64u);
  EXPECT_EQ(WorkloadDifference(wa, wb), "");
}

TEST(WorkloadHash, AChangedTransferSizeChangesTheHashAndSaysWhere) {
  const WorkloadIdentity a = WorkloadOf(SpecRun("a", 1 << 20));
  const WorkloadIdentity b = WorkloadOf(SpecRun("b", 4 << 20));
  EXPECT_NE(a.hash, b.hash);
  const std::string why = WorkloadDifference(a, b);
  EXPECT_TRUE(Has(why, "transfer_bytes=1048576")) << why;
  EXPECT_TRUE(Has(why, "transfer_bytes=4194304")) << why;
}

TEST(WorkloadHash, ClientCountTasksCacheBarrierAndSweepPointChangeTheHash) {
  const std::string base = WorkloadOf(SpecRun("a")).hash;
  v1::RunRecord clients = SpecRun("c");
  clients.mutable_tests(0)->set_client_agents(4);
  EXPECT_NE(WorkloadOf(clients).hash, base);
  v1::RunRecord tasks = SpecRun("t");
  tasks.mutable_tests(0)->set_tasks_per_agent(8);
  EXPECT_NE(WorkloadOf(tasks).hash, base);
  v1::RunRecord cache = SpecRun("k");
  for (auto& ph : *cache.mutable_tests(0)->mutable_phases()) ph.set_cache("none");
  EXPECT_NE(WorkloadOf(cache).hash, base);
  v1::RunRecord sweep = SpecRun("s");
  auto* point = sweep.mutable_tests(0)->add_sweep();
  point->set_key("transfer_size");
  point->set_value("4m");
  EXPECT_NE(WorkloadOf(sweep).hash, base);
  // A sweep over a site tunable (the stripe count) is local.
  v1::RunRecord stripes = SpecRun("p");
  auto* sp = stripes.mutable_tests(0)->add_sweep();
  sp->set_key("stripe_count");
  sp->set_value("4");
  EXPECT_EQ(WorkloadOf(stripes).hash, base);
  v1::RunRecord direct = SpecRun("d");
  direct.mutable_tests(0)->mutable_plan_specs(0)->set_direct(true);
  EXPECT_NE(WorkloadOf(direct).hash, base);
}

TEST(WorkloadHash, AnOldRecordWithoutPlanSpecsHashesItsFirstRepetitionsSpecs) {
  SynthRun s;
  s.results = {{"write", 4, Reps(1000, 0.01, 3)}};
  const v1::RunRecord old = MakeRun(s);  // MakeRun records no plan_specs
  ASSERT_EQ(old.tests(0).plan_specs_size(), 0);
  const WorkloadIdentity w = WorkloadOf(old);
  EXPECT_EQ(w.hash.size(), 64u);
  ASSERT_EQ(w.lines.size(), 3u);
  EXPECT_TRUE(Has(w.lines[2], "kind=WRITE")) << w.lines[2];
  EXPECT_TRUE(Has(w.lines[2], "transfer_bytes=1048576")) << w.lines[2];
  EXPECT_FALSE(Has(w.lines[2], "/mnt/fs")) << w.lines[2];
  EXPECT_TRUE(Has(w.workload_class, "write, 2 clients x 2 tasks, xfer 1 MiB")) << w.workload_class;
}

// ---- compare --sites -------------------------------------------------------------

std::unique_ptr<HistoryStore> Db(const std::string& tag) {
  auto store = HistoryStore::Open(TempDir(tag) + "/history.db");
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

TEST(CompareSites, OneTablePerResultWithEachSitesMedianSpreadAndPerNodeFigures) {
  auto db = Db("sites");
  ASSERT_NE(db, nullptr);
  v1::RunRecord a = SpecRun("hlrs-1");
  v1::RunRecord b = SpecRun("lrz-1");
  auto* oss = b.add_agents();
  oss->set_role(v1::OSS);
  oss->mutable_facts()->set_role(v1::OSS);
  oss->mutable_facts()->set_cpu_model("AMD EPYC 7763");
  ASSERT_TRUE(db->Record(a, "hlrs", {}).ok());
  ASSERT_TRUE(db->Record(b, "lrz", {}).ok());
  auto sides = LoadSiteRuns(*db, {.sites = {"hlrs", "lrz"}, .plan = "seed"});
  ASSERT_TRUE(sides.ok()) << sides.status();
  const auto tables = CompareSites(*sides);
  ASSERT_EQ(tables.size(), 2u);  // read and write
  const SiteFigure& f = tables[1].sites[1];  // write at lrz
  EXPECT_EQ(tables[1].key.operation, "write");
  EXPECT_EQ(f.site, "lrz");
  EXPECT_EQ(f.repetitions, 3u);
  EXPECT_EQ(f.client_nodes, 2u);
  EXPECT_EQ(f.server_nodes, 1u);
  EXPECT_NEAR(f.median_mib, 1000 * (1 - 0.0055), 1e-6);
  const std::string text = FormatSiteComparison(*sides, tables);
  EXPECT_TRUE(Has(text, "per client")) << text;
  EXPECT_TRUE(Has(text, "per server")) << text;
  EXPECT_TRUE(Has(text, "differs:")) << text;
  EXPECT_TRUE(Has(text, "oss cpu model")) << text;
  // Differences come before what is the same.
  EXPECT_LT(text.find("oss hosts"), text.find("same:")) << text;
}

TEST(CompareSites, RunsOfDifferentWorkloadsAreRefusedSayingWhyUnlessForced) {
  auto db = Db("sites-class");
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Record(SpecRun("hlrs-1", 1 << 20), "hlrs", {}).ok());
  ASSERT_TRUE(db->Record(SpecRun("lrz-1", 4 << 20), "lrz", {}).ok());
  auto refused = LoadSiteRuns(*db, {.sites = {"hlrs", "lrz"}, .plan = "seed"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string why(refused.status().message());
  EXPECT_TRUE(Has(why, "not comparable: site hlrs run hlrs-1")) << why;
  EXPECT_TRUE(Has(why, "transfer_bytes=4194304")) << why;
  EXPECT_TRUE(Has(why, "--force")) << why;
  auto forced = LoadSiteRuns(*db, {.sites = {"hlrs", "lrz"}, .plan = "seed", .force = true});
  ASSERT_TRUE(forced.ok()) << forced.status();
  EXPECT_TRUE(Has(FormatSiteComparison(*forced, CompareSites(*forced)), "workloads differ"));
  // The history keeps each run's hash.
  auto listed = db->List({.site = "lrz"});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].workload_hash, WorkloadOf(SpecRun("x", 4 << 20)).hash);
}

TEST(CompareSites, ASiteWithoutARunOfThePlanIsNamed) {
  auto db = Db("sites-missing");
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Record(SpecRun("hlrs-1"), "hlrs", {}).ok());
  auto missing = LoadSiteRuns(*db, {.sites = {"hlrs", "jsc"}, .plan = "seed"});
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Has(std::string(missing.status().message()),
                  "site jsc has no complete run of plan seed"))
      << missing.status();
}

}  // namespace
}  // namespace lockstep
