// The AI phases' plan keys (controller/plan/kinds/datagen.cc, train.cc,
// checkpoint.cc): defaults, the spec they make, and the bad input of issue
// 30 refused with file:line, key, value and fix; the reduction's AU,
// pass/fail and checkpoint figures (controller/record/ai_reduce.h).
#include "controller/plan/kinds/ai_shared.h"
#include "controller/plan/phase_kind.h"
#include "controller/plan/plan.h"
#include "controller/plan/plan_toml.h"
#include "controller/record/ai_reduce.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "controller/plan/kinds/ai_plan.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

const std::string kHead = "[run]\nname = \"ai\"\n[[phase]]\nname = \"p\"\ndir = \"/tmp\"\n";
const std::string kDataset =
    "format = \"npz\"\nnum_files = 168\nsamples_per_file = 1\nrecord_size = \"146600k\"\n";

std::string Error(const std::string& body) {
  return testing::ErrorOrOk(ParsePlan(kHead + body, "ai.toml"));
}

TEST(AiPlan, TrainKeysDefaultsAndTheSpecTheyMake) {
  auto plan = ParsePlan(kHead + "kind = \"train\"\n" + kDataset +
                            "batch_size = 7\ncomputation_time_seconds = 0.323\n"
                            "file_shuffle = \"seed\"\nread_threads = 4\n",
                        "ai.toml");
  ASSERT_OK(plan);
  const PhasePlan& p = plan->phases[0];
  EXPECT_EQ(p.kind, v1::TRAIN);
  EXPECT_EQ(p.Own<AiPhasePlan>().format, v1::DATASET_FORMAT_NPZ);
  EXPECT_EQ(p.Own<AiPhasePlan>().record_bytes, 146600u * 1024);
  EXPECT_EQ(p.Own<AiPhasePlan>().epochs, 1u);
  EXPECT_EQ(p.Own<AiPhasePlan>().prefetch_batches, 2u);
  EXPECT_EQ(p.Own<AiPhasePlan>().file_prefix, "img");
  EXPECT_DOUBLE_EQ(p.Own<AiPhasePlan>().au_threshold, 0.90);  // MLPerf's, with a compute time
  EXPECT_EQ(p.transfer_bytes, 1u << 20);
  EXPECT_THAT(p.Own<AiPhasePlan>().dataset_pos, HasSubstr("ai.toml:8:"));
  v1::PhaseSpec s;
  s.set_total_tasks(8);
  SetWorkloadFields(p, 1, &s);
  EXPECT_EQ(s.num_files(), 168u);
  EXPECT_EQ(s.batch_size(), 7u);
  EXPECT_EQ(s.read_threads(), 4u);
  EXPECT_EQ(s.computation_time_ns(), 323'000'000);
  EXPECT_EQ(s.file_shuffle(), v1::SHUFFLE_SEED);
  EXPECT_EQ(s.sample_shuffle(), v1::SHUFFLE_OFF);
  EXPECT_EQ(s.shuffle_seed(), 123u);
}

TEST(AiPlan, CheckpointModelsSplitOverTheRanksAndWritesFsyncByDefault) {
  auto plan = ParsePlan(kHead + "kind = \"checkpoint\"\ncheckpoint_op = \"write\"\n"
                                "model = \"llama3-8b\"\ncheckpoints = 2\n",
                        "ai.toml");
  ASSERT_OK(plan);
  const PhasePlan& p = plan->phases[0];
  EXPECT_TRUE(p.fsync);
  EXPECT_EQ(p.Own<AiPhasePlan>().total_checkpoint_bytes, 105'000'000'000u);
  v1::PhaseSpec s;
  s.set_total_tasks(8);
  SetWorkloadFields(p, 1, &s);
  EXPECT_EQ(s.shard_bytes() % 4096, 0u);
  EXPECT_GE(s.shard_bytes() * 8, 105'000'000'000u);
  EXPECT_LT(s.shard_bytes() * 8, 105'000'000'000u + 8 * 4096);
  EXPECT_TRUE(s.checkpoint_fsync());
  EXPECT_EQ(s.checkpoints(), 2u);
  EXPECT_EQ(kinds::ModelCheckpointBytes("llama3-405b"), 5'290'000'000'000u);
}

TEST(AiPlan, RefusesTheIssuesBadInputNamingPositionKeyValueAndFix) {
  const std::string unknown = Error("kind = \"datagen\"\nformat = \"tfrecord\"\nnum_files = 1\n"
                                    "record_size = \"1k\"\n");
  EXPECT_THAT(unknown, HasSubstr("ai.toml:7:"));
  EXPECT_THAT(unknown, HasSubstr("key 'format'"));
  EXPECT_THAT(unknown, HasSubstr("\"tfrecord\" is not a format"));
  EXPECT_THAT(unknown, HasSubstr("use \"npz\""));
  const std::string zero = Error("kind = \"train\"\n" + kDataset +
                                 "batch_size = 1\nau_threshold = 0.9\n");
  EXPECT_THAT(zero, HasSubstr("key 'au_threshold'"));
  EXPECT_THAT(zero, HasSubstr("computation_time_seconds = 0"));
  EXPECT_THAT(zero, HasSubstr("drop au_threshold"));
  EXPECT_THAT(Error("kind = \"train\"\n" + kDataset + "batch_size = 1\n"
                    "computation_time_seconds = 0.1\nau_threshold = 0\n"),
              HasSubstr("must be in (0, 1]"));
  EXPECT_THAT(Error("kind = \"train\"\n" + kDataset), HasSubstr("add batch_size"));
  EXPECT_THAT(Error("kind = \"datagen\"\nformat = \"npz\"\nrecord_size = \"1k\"\n"),
              HasSubstr("add num_files"));
  EXPECT_THAT(Error("kind = \"write\"\nbatch_size = 4\n"), HasSubstr("applies to train phases"));
  EXPECT_THAT(Error("kind = \"train\"\n" + kDataset + "batch_size = 1\nblock_size = \"1m\"\n"),
              HasSubstr("applies to IOR-style phases"));
  EXPECT_THAT(Error("kind = \"checkpoint\"\ncheckpoint_op = \"write\"\nmodel = \"gpt-5\"\n"),
              HasSubstr("llama3-8b, llama3-70b, llama3-405b or llama3-1t"));
  EXPECT_THAT(Error("kind = \"checkpoint\"\ncheckpoint_op = \"write\"\n"), HasSubstr("shard_size"));
  // A read syncs nothing: fsync there was taken and ignored.
  EXPECT_THAT(Error("kind = \"checkpoint\"\ncheckpoint_op = \"read\"\nshard_size = \"4m\"\n"
                    "fsync = true\n"),
              HasSubstr("a checkpoint read syncs nothing: drop it"));
  EXPECT_THAT(Error("kind = \"train\"\n" + kDataset + "batch_size = 1\ncompute = \"gpu\"\n"),
              HasSubstr("compute"));
}

TEST(AiPlan, PlanToTomlRoundTripsTheAiKeys) {
  auto plan = ParsePlan(
      kHead + "kind = \"datagen\"\n" + kDataset + "dataset_memory_multiple = 2.5\n" +
          "[[phase]]\nname = \"t\"\nkind = \"train\"\ndir = \"/tmp\"\n" + kDataset +
          "batch_size = 7\ncomputation_time_seconds = 0.323\nsample_shuffle = \"seed\"\n"
          "compute = \"spin\"\ntransfer_size = \"4m\"\n"
          "[[phase]]\nname = \"c\"\nkind = \"checkpoint\"\ndir = \"/tmp\"\n"
          "checkpoint_op = \"write\"\nmodel = \"llama3-8b\"\nfsync = false\ncheckpoints = 3\n",
      "ai.toml");
  ASSERT_OK(plan);
  auto again = ParsePlan(PlanToToml(*plan), "again.toml");
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << PlanToToml(*plan);
  ASSERT_EQ(again->phases.size(), 3u);
  const AiPhasePlan& g = again->phases[0].Own<AiPhasePlan>();
  EXPECT_EQ(g.format, v1::DATASET_FORMAT_NPZ);
  EXPECT_EQ(g.num_files, 168u);
  EXPECT_EQ(g.record_bytes, 146600u * 1024);
  EXPECT_DOUBLE_EQ(g.dataset_memory_multiple, 2.5);
  const PhasePlan& t = again->phases[1];
  EXPECT_EQ(t.transfer_bytes, 4u << 20);
  EXPECT_EQ(t.Own<AiPhasePlan>().batch_size, 7u);
  EXPECT_DOUBLE_EQ(t.Own<AiPhasePlan>().computation_time_seconds, 0.323);
  EXPECT_DOUBLE_EQ(t.Own<AiPhasePlan>().au_threshold, 0.90);
  EXPECT_EQ(t.Own<AiPhasePlan>().sample_shuffle, v1::SHUFFLE_SEED);
  EXPECT_TRUE(t.Own<AiPhasePlan>().compute_spin);
  const PhasePlan& c = again->phases[2];
  EXPECT_FALSE(c.fsync);  // given, not the write's default
  EXPECT_EQ(c.Own<AiPhasePlan>().model, "llama3-8b");
  EXPECT_EQ(c.Own<AiPhasePlan>().checkpoints, 3u);
}

TEST(AiPlan, DatasetKeysBelongToDatagenAndTrainOnly) {
  EXPECT_THAT(Error("kind = \"write\"\nnum_files = 4\n"),
              HasSubstr("'num_files': applies to datagen and train phases, not to kind = \"write\""));
  EXPECT_THAT(Error("kind = \"train\"\n" + kDataset + "batch_size = 1\n"
                    "dataset_memory_multiple = 2\n"),
              HasSubstr("applies to datagen phases, not to kind = \"train\""));
  EXPECT_THAT(Error("kind = \"checkpoint\"\ncheckpoint_op = \"write\"\nshard_size = \"1m\"\n"
                    "transfer_size = \"128m\"\n"),
              HasSubstr("the most for kind = \"checkpoint\""));
}

v1::TaskResult TrainTask(int64_t compute_ns, int64_t wall_ns, uint64_t samples) {
  v1::TaskResult t;
  t.set_rdwr_start_unix_ns(1'000'000'000);
  t.set_rdwr_stop_unix_ns(1'000'000'000 + wall_ns);
  t.set_bytes(samples * 100);
  v1::TrainResult* tr = t.mutable_train();
  tr->set_compute_ns(compute_ns);
  tr->set_wall_ns(wall_ns);
  tr->set_au(static_cast<double>(compute_ns) / wall_ns);
  tr->set_samples(samples);
  v1::TrainEpoch* e = tr->add_epochs();
  e->set_compute_ns(compute_ns);
  e->set_wall_ns(wall_ns);
  return t;
}

TEST(AiReduce, AuPerAcceleratorAndHostAndPassFail) {
  v1::PhaseRecord pr;
  pr.set_kind(v1::TRAIN);
  v1::AgentPhaseRecord* a = pr.add_agents();
  a->set_address("a:1");
  *a->add_tasks() = TrainTask(950, 1000, 10);
  *a->add_tasks() = TrainTask(850, 1000, 10);
  v1::AgentPhaseRecord* b = pr.add_agents();
  b->set_address("b:1");
  *b->add_tasks() = TrainTask(990, 1000, 10);
  std::vector<const v1::TaskResult*> tasks;
  for (const auto& ag : pr.agents()) {
    for (const auto& t : ag.tasks()) tasks.push_back(&t);
  }
  v1::PhaseSpec spec;
  spec.set_kind(v1::TRAIN);
  spec.set_au_threshold(0.90);
  ReducePhase(tasks, spec, 0, &pr);
  EXPECT_NEAR(pr.ai().au_mean(), (950.0 + 850 + 990) / 3000, 1e-9);
  EXPECT_DOUBLE_EQ(pr.ai().au_min(), 0.85);
  EXPECT_DOUBLE_EQ(pr.ai().au_max(), 0.99);
  EXPECT_NEAR(pr.agents(0).au(), 0.90, 1e-9);
  EXPECT_NEAR(pr.agents(1).au(), 0.99, 1e-9);
  EXPECT_TRUE(pr.ai().au_passed());  // 0.93 mean
  EXPECT_EQ(pr.ai().samples(), 30u);
  EXPECT_EQ(pr.row().access(), "train");
  spec.set_au_threshold(0.95);
  pr.clear_ai();
  ReducePhase(tasks, spec, 0, &pr);
  EXPECT_FALSE(pr.ai().au_passed());
  const std::vector<std::string> lines = KindOf(v1::TRAIN).ReportNotes(pr, {});
  ASSERT_GE(lines.size(), 2u);
  EXPECT_THAT(lines[0], HasSubstr("threshold 95%: FAIL"));
  EXPECT_THAT(lines[1], HasSubstr("a:1 90.00%"));
}

TEST(AiReduce, CheckpointIsTheSlowestRankAndTheLongestDuration) {
  v1::PhaseRecord pr;
  pr.set_kind(v1::CHECKPOINT);
  std::vector<v1::TaskResult> ranks(2);
  for (int r = 0; r < 2; ++r) {
    v1::CheckpointShard* c = ranks[r].add_checkpoints();
    c->set_bytes(100 << 20);
    c->set_start_unix_ns(0);
    c->set_stop_unix_ns(r == 0 ? 1'000'000'000 : 2'000'000'000);  // 100 and 50 MiB/s
    ranks[r].set_bytes(100 << 20);
  }
  std::vector<const v1::TaskResult*> tasks = {&ranks[0], &ranks[1]};
  v1::PhaseSpec spec;
  spec.set_kind(v1::CHECKPOINT);
  spec.set_checkpoint_op(v1::CHECKPOINT_WRITE);
  ReducePhase(tasks, spec, 0, &pr);
  EXPECT_DOUBLE_EQ(pr.ai().min_rank_mib_per_s(), 50.0);
  EXPECT_DOUBLE_EQ(pr.ai().max_duration_s(), 2.0);
  EXPECT_DOUBLE_EQ(pr.ai().aggregate_mib_per_s(), 100.0);
  EXPECT_EQ(pr.row().access(), "checkpoint-write");
}

}  // namespace
}  // namespace lockstep
