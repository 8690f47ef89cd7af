// SEEKS (bonnie++'s random seeks): the offsets, the rewrite share, the file
// Prepare lays out, and a run on real files; the plan keys and the row.
#include "agent/workloads/seeks.h"

#include <sys/stat.h>

#include <filesystem>
#include <set>

#include "agent/phase_runner.h"
#include "agent/workloads/workload.h"
#include "common/layout.h"
#include "controller/ior/ior_report.h"
#include "controller/plan/phase_kind.h"
#include "controller/record/phase_reduce.h"
#include "controller/plan/plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "unit/run_phase.h"
#include "controller/plan/kinds/seeks_plan.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using testing::RunSpec;
using testing::TempDir;

v1::PhaseSpec SeekSpec() {
  v1::PhaseSpec s;
  s.set_phase_id("t0/r0/seeks");
  s.set_kind(v1::SEEKS);
  s.set_file_name("f");
  s.set_tasks(3);
  s.set_total_tasks(3);
  s.set_transfer_bytes(8192);
  s.set_block_bytes(256 * 1024);
  s.set_segments(2);  // 1.5 MiB: 192 chunks
  s.set_pattern_seed(7);
  s.set_random_seed(7);
  s.set_seeks_per_task(400);
  s.set_seek_rewrite_pct(10);
  return s;
}

TEST(SeekOffsets, AlignedInsideTheFileAndSpreadOverIt) {
  const v1::PhaseSpec s = SeekSpec();
  const uint64_t file = SeekFileBytes(s);
  ASSERT_EQ(file, 3u * 2 * 256 * 1024);
  std::set<uint64_t> chunks;
  for (uint32_t rank = 0; rank < 3; ++rank) {
    for (uint64_t k = 0; k < 5000; ++k) {
      const uint64_t off = SeekOffset(s, rank, k);
      ASSERT_EQ(off % s.transfer_bytes(), 0u) << "rank " << rank << " seek " << k;
      ASSERT_LE(off + s.transfer_bytes(), file) << "rank " << rank << " seek " << k;
      chunks.insert(off / s.transfer_bytes());
    }
  }
  // 15000 draws over 192 chunks: every chunk is hit, the last one too.
  EXPECT_EQ(chunks.size(), file / s.transfer_bytes());
  // A file of one chunk: always offset 0.
  v1::PhaseSpec one = s;
  one.set_block_bytes(8192);
  one.set_segments(1);
  one.set_total_tasks(1);
  for (uint64_t k = 0; k < 100; ++k) EXPECT_EQ(SeekOffset(one, 0, k), 0u);
}

TEST(SeekOffsets, DeterministicFromSeedRankAndRepetition) {
  v1::PhaseSpec s = SeekSpec();
  std::vector<uint64_t> a, b, other_rank, other_seed, other_rep;
  for (uint64_t k = 0; k < 64; ++k) {
    a.push_back(SeekOffset(s, 1, k));
    b.push_back(SeekOffset(s, 1, k));
    other_rank.push_back(SeekOffset(s, 2, k));
  }
  v1::PhaseSpec seed = s;
  seed.set_random_seed(8);
  v1::PhaseSpec rep = s;
  rep.set_repetition(1);
  for (uint64_t k = 0; k < 64; ++k) {
    other_seed.push_back(SeekOffset(seed, 1, k));
    other_rep.push_back(SeekOffset(rep, 1, k));
  }
  EXPECT_EQ(a, b);
  EXPECT_NE(a, other_rank);
  EXPECT_NE(a, other_seed);
  EXPECT_NE(a, other_rep);
}

TEST(SeekRewrites, ShareIsExactAndSpreadAsBonnie) {
  // bonnie++: every 10th seek of a seeker, from its first.
  for (uint64_t k = 0; k < 30; ++k) EXPECT_EQ(IsRewriteSeek(k, 10), k % 10 == 0) << k;
  for (uint32_t pct : {0u, 1u, 3u, 10u, 25u, 33u, 50u, 99u, 100u}) {
    for (uint64_t n : {1u, 7u, 100u, 1234u, 8000u}) {
      uint64_t rewrites = 0;
      for (uint64_t k = 0; k < n; ++k) rewrites += IsRewriteSeek(k, pct);
      const double want = static_cast<double>(n) * pct / 100.0;
      EXPECT_NEAR(static_cast<double>(rewrites), want, 1.0) << pct << "% of " << n;
    }
  }
  EXPECT_TRUE(IsRewriteSeek(5, 150));  // above 100 counts as 100
}

TEST(SeekDataRank, FollowsTheSharedLayout) {
  const v1::PhaseSpec s = SeekSpec();
  for (uint32_t rank = 0; rank < 3; ++rank) {
    for (uint64_t segment = 0; segment < 2; ++segment) {
      EXPECT_EQ(SeekDataRank(s, TransferOffset(s, rank, segment, 5)), rank);
    }
  }
}

TEST(SeeksWorkload, LaysOutTheFileThenSeeksRewritesAndVerifies) {
  TempDir tmp;
  v1::PhaseSpec s = SeekSpec();
  s.set_verify(true);
  v1::PhaseResult res = RunSpec(s, tmp.path());
  ASSERT_TRUE(res.ok()) << res.error();
  struct stat st;
  ASSERT_EQ(::stat((tmp / "f").c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), SeekFileBytes(s));  // laid out by Prepare
  ASSERT_EQ(res.tasks_size(), 3);
  for (const v1::TaskResult& t : res.tasks()) {
    EXPECT_EQ(t.ops(), 400u);
    EXPECT_EQ(t.seeks_rewritten(), 40u);
    EXPECT_EQ(t.bytes(), (400u + 40u) * 8192);  // read, plus the blocks written back
    EXPECT_EQ(t.latency().total_count(), 400u);
    EXPECT_EQ(t.file(), tmp / "f");
  }
  // A read of the same layout checks what the seeks wrote back.
  v1::PhaseSpec read = s;
  read.set_kind(v1::READ);
  read.set_phase_id("t0/r0/read");
  EXPECT_TRUE(RunSpec(read, tmp.path()).ok());
}

TEST(SeeksWorkload, UsesAnExistingFileAndCatchesForeignData) {
  TempDir tmp;
  v1::PhaseSpec w = SeekSpec();
  w.set_kind(v1::WRITE);
  w.set_phase_id("t0/r0/write");
  ASSERT_TRUE(RunSpec(w, tmp.path()).ok());
  struct stat before;
  ASSERT_EQ(::stat((tmp / "f").c_str(), &before), 0);
  v1::PhaseSpec s = SeekSpec();
  s.set_verify(true);
  s.set_seek_rewrite_pct(0);
  v1::PhaseResult res = RunSpec(s, tmp.path());
  ASSERT_TRUE(res.ok()) << res.error();
  EXPECT_EQ(res.tasks(0).seeks_rewritten(), 0u);
  EXPECT_EQ(res.tasks(0).bytes(), 400u * 8192);
  // Another seed's pattern is caught by verify, naming the block's rank.
  v1::PhaseSpec foreign = s;
  foreign.set_pattern_seed(99);
  res = RunSpec(foreign, tmp.path());
  EXPECT_FALSE(res.ok());
  EXPECT_THAT(res.error(), HasSubstr("verification failed"));
}

TEST(SeeksWorkload, RefusesWhatBonnieDoesNot) {
  v1::PhaseSpec fpp = SeekSpec();
  fpp.set_file_per_process(true);
  auto w = MakeWorkload(fpp);
  ASSERT_OK(w);
  EXPECT_THAT(std::string((*w)->Validate().message()), HasSubstr("file_per_process"));
  v1::PhaseSpec none = SeekSpec();
  none.set_seeks_per_task(0);
  w = MakeWorkload(none);
  ASSERT_OK(w);
  EXPECT_EQ((*w)->Validate().code(), absl::StatusCode::kInvalidArgument);
  v1::PhaseSpec pct = SeekSpec();
  pct.set_seek_rewrite_pct(101);
  w = MakeWorkload(pct);
  ASSERT_OK(w);
  EXPECT_THAT(std::string((*w)->Validate().message()), HasSubstr("seek_rewrite_pct 101"));
}

TEST(SeeksPlan, KeysDefaultsAndErrors) {
  const std::string head = "[run]\nname = \"s\"\n[[phase]]\nname = \"seeks\"\nkind = \"seeks\"\n"
                           "dir = \"/tmp\"\nblock_size = \"64k\"\n";
  auto plan = ParsePlan(head + "seeks = 100\n", "p.toml");
  ASSERT_OK(plan);
  const PhasePlan& p = plan->phases[0];
  EXPECT_EQ(p.kind, v1::SEEKS);
  EXPECT_EQ(p.Own<SeeksPlan>().seeks, 100u);
  EXPECT_EQ(p.Own<SeeksPlan>().seek_rewrite_pct, 10u);          // bonnie++'s share
  EXPECT_EQ(p.transfer_bytes, 8192u);          // bonnie++'s chunk
  v1::PhaseSpec spec;
  SetWorkloadFields(p, 1, &spec);
  EXPECT_EQ(spec.seeks_per_task(), 100u);
  EXPECT_EQ(spec.seek_rewrite_pct(), 10u);

  auto missing = ParsePlan(head, "p.toml");
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("seeks = 2667"));
  auto pct = ParsePlan(head + "seeks = 1\nseek_rewrite_pct = 101\n", "p.toml");
  EXPECT_THAT(std::string(pct.status().message()), HasSubstr("seek_rewrite_pct"));
  auto fpp = ParsePlan(head + "seeks = 1\nfile_per_process = true\n", "p.toml");
  EXPECT_THAT(std::string(fpp.status().message()), HasSubstr("one shared file"));
  auto other = ParsePlan("[run]\nname = \"s\"\n[[phase]]\nname = \"w\"\nkind = \"write\"\n"
                         "dir = \"/tmp\"\nseeks = 5\n",
                         "p.toml");
  EXPECT_THAT(std::string(other.status().message()), HasSubstr("applies to seeks phases"));
}

TEST(SeeksReduce, RowIsSeeksPerSecondAndTheLineSaysBonniesFigures) {
  v1::PhaseSpec spec = SeekSpec();
  v1::PhaseRecord pr;
  pr.set_kind(v1::SEEKS);
  *pr.mutable_spec() = spec;
  v1::AgentPhaseRecord* a = pr.add_agents();
  const int64_t t0 = 1'000'000'000'000;
  for (int i = 0; i < 2; ++i) {
    v1::TaskResult* t = a->add_tasks();
    t->set_open_start_unix_ns(t0);
    t->set_open_stop_unix_ns(t0);
    t->set_rdwr_start_unix_ns(t0 + i * 100'000'000);
    t->set_rdwr_stop_unix_ns(t0 + 1'000'000'000 + i * 1'000'000'000);  // 2 s in all
    t->set_close_start_unix_ns(t->rdwr_stop_unix_ns());
    t->set_close_stop_unix_ns(t->rdwr_stop_unix_ns());
    t->set_ops(1000);
    t->set_seeks_rewritten(100);
    t->set_bytes(1100 * 8192);
  }
  std::vector<const v1::TaskResult*> tasks = {&a->tasks(0), &a->tasks(1)};
  ReducePhase(tasks, spec, 0, &pr);
  EXPECT_EQ(pr.row().access(), "seeks");
  EXPECT_DOUBLE_EQ(pr.row().iops(), 1000.0);  // 2000 seeks over 2 s
  EXPECT_EQ(pr.row().bytes(), 2u * 1100 * 8192);
  EXPECT_EQ(SeeksRewritten(pr), 200u);
  pr.mutable_latency()->set_ops(2000);
  pr.mutable_latency()->set_max_us(5686);
  const std::string text = IorReport(false).PhaseDone(pr);
  EXPECT_THAT(text, HasSubstr("# seeks: 2000 seeks (200 rewritten) of 8 KiB in 1.50 MiB, "
                              "1000.0 seeks/s"));
  EXPECT_THAT(text, HasSubstr("max 5686 us"));
}

}  // namespace
}  // namespace lockstep
