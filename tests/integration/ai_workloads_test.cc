// End to end through real agent processes (issue 30): a DLIO-style datagen,
// train, checkpoint write and read on two agents sharing a directory, with
// the figures checked against the files on disk; and a dataset that cannot
// fit refused before anything is written.
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_format.h"
#include "common/dataset.h"
#include "controller/cli/exit_codes.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(AiWorkloads, DatagenTrainCheckpointWriteAndReadOnTwoAgents) {
  TestCluster cluster;
  const std::string shared = cluster.MakeDir("shared");
  const AgentSpec spec{.flags = {"--root", shared}};
  ASSERT_OK(cluster.Start({.agents = {spec, spec}}));
  PlanBuilder plan = cluster.Plan();
  auto dataset = [&](PlanPhase p) {
    return p.Set("dir", shared)
        .Set("format", "npz")
        .Set("num_files", 16)
        .Set("samples_per_file", 1)
        .Set("record_size", "64k")
        .Set("transfer_size", "16k");
  };
  plan.AddPhase(dataset(PlanPhase("gen", "datagen")).Set("tasks_per_agent", 2).Set("keep", true));
  plan.AddPhase(dataset(PlanPhase("train", "train"))
                    .Set("tasks_per_agent", 2)
                    .Set("epochs", 2)
                    .Set("batch_size", 2)
                    .Set("read_threads", 2)
                    .Set("file_shuffle", "seed")
                    .Set("sample_shuffle", "seed")
                    .Set("computation_time_seconds", 0.005));
  plan.AddPhase(PlanPhase("ckpt-w", "checkpoint")
                    .Set("dir", shared)
                    .Set("tasks_per_agent", 2)
                    .Set("checkpoint_op", "write")
                    .Set("shard_size", "256k")
                    .Set("checkpoints", 2)
                    .Set("keep", true));
  plan.AddPhase(PlanPhase("ckpt-r", "checkpoint")
                    .Set("dir", shared)
                    .Set("tasks_per_agent", 2)
                    .Set("checkpoint_op", "read")
                    .Set("shard_size", "256k")
                    .Set("checkpoints", 2));
  std::string toml = cluster.WritePlan(plan);
  RunResult r = cluster.Run(toml);
  const v1::RunRecord rec = r.Record();
  ASSERT_EQ(rec.tests_size(), 1) << r.Output();
  ASSERT_EQ(rec.tests(0).phases_size(), 4) << r.Output();
  const v1::PhaseRecord& gen = rec.tests(0).phases(0);
  const v1::PhaseRecord& train = rec.tests(0).phases(1);
  // The default au_threshold (0.90) judges this machine's AU: below it the
  // run fails with its own code (docs/exit-codes.md), and only then.
  ASSERT_EQ(r.exit_code, train.ai().au_passed() ? 0 : kExitAuBelowThreshold) << r.Output();
  const v1::PhaseRecord& ckw = rec.tests(0).phases(2);
  const v1::PhaseRecord& ckr = rec.tests(0).phases(3);
  for (const v1::PhaseRecord* p : {&gen, &train, &ckw, &ckr}) ASSERT_TRUE(p->ok()) << p->error();

  // The dataset: DLIO's names, the npz layout's sizes, every file once.
  const v1::PhaseSpec& ds = gen.spec();
  EXPECT_EQ(gen.ai().files(), 16u);
  for (uint64_t i = 0; i < 16; ++i) {
    const std::string path = DatasetFilePath(shared, ds, i);
    EXPECT_THAT(path, HasSubstr(absl::StrFormat("/train/img_%02u_of_16.npz", i)));
    struct stat st;
    ASSERT_EQ(::stat(path.c_str(), &st), 0) << path;
    EXPECT_EQ(static_cast<uint64_t>(st.st_size), DatasetFileLayoutOf(ds, i).file_bytes);
  }
  EXPECT_EQ(gen.ai().bytes(), DatasetBytes(ds));

  // Train: 4 accelerators; each epoch reads the dataset exactly once.
  ASSERT_EQ(train.agents_size(), 2);
  std::vector<uint64_t> epoch_bytes(2, 0);
  for (const v1::AgentPhaseRecord& a : train.agents()) {
    EXPECT_GT(a.au(), 0.0);
    EXPECT_LE(a.au(), 1.0);
    for (const v1::TaskResult& t : a.tasks()) {
      ASSERT_EQ(t.train().epochs_size(), 2);
      EXPECT_GT(t.train().au(), 0.0);
      EXPECT_LE(t.train().au(), 1.0);
      // 16 samples, batches of 2, 4 accelerators: 2 batches per epoch.
      EXPECT_EQ(t.train().batches(), 4u);
      for (int e = 0; e < 2; ++e) epoch_bytes[e] += t.train().epochs(e).bytes();
    }
  }
  EXPECT_EQ(epoch_bytes[0], DatasetBytes(ds));
  EXPECT_EQ(epoch_bytes[1], DatasetBytes(ds));
  const v1::AiSummary& ai = train.ai();
  EXPECT_EQ(ai.accelerators(), 4u);
  EXPECT_EQ(ai.samples(), 32u);
  EXPECT_GT(ai.au_mean(), 0.0);
  EXPECT_LE(ai.au_mean(), 1.0);
  EXPECT_DOUBLE_EQ(ai.au_threshold(), 0.90);
  EXPECT_EQ(ai.epoch_au_size(), 2);
  EXPECT_EQ(ai.batch_wait().total_count(), 16u);
  EXPECT_GT(ai.samples_per_s(), 0.0);
  EXPECT_THAT(r.out, HasSubstr("# train: 4 accelerators, 32 samples"));
  EXPECT_THAT(r.out, HasSubstr("# train batch wait: 16 batches"));

  // Checkpoints: 4 ranks × 2 checkpoints of 256 KiB, written then read.
  for (uint32_t c = 0; c < 2; ++c) {
    for (uint32_t rank = 0; rank < 4; ++rank) {
      const std::string path = absl::StrFormat("%s/global_epoch1_step%u/model_states-%u.pt",
                                               shared, c + 1, rank);
      struct stat st;
      ASSERT_EQ(::stat(path.c_str(), &st), 0) << path;
      EXPECT_EQ(st.st_size, 256 * 1024);
    }
  }
  for (const v1::PhaseRecord* p : {&ckw, &ckr}) {
    EXPECT_EQ(p->ai().checkpoints(), 2u);
    EXPECT_EQ(p->ai().bytes(), 2u * 4 * 256 * 1024);
    EXPECT_GT(p->ai().min_rank_mib_per_s(), 0.0);
    EXPECT_GT(p->ai().max_duration_s(), 0.0);
    EXPECT_GE(p->ai().aggregate_mib_per_s(), p->ai().min_rank_mib_per_s());
  }
  EXPECT_TRUE(ckw.spec().checkpoint_fsync());  // a write's default
  EXPECT_THAT(r.out, HasSubstr("# checkpoint write: 2 checkpoints of 1 MiB by 4 ranks"));
}

TEST(AiWorkloads, ADatasetThatCannotFitIsRefusedBeforeAnythingIsWritten) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start({.agents = {AgentSpec{}}}));
  PlanBuilder plan = cluster.Plan();
  plan.AddPhase(PlanPhase("gen", "datagen")
                    .Set("format", "records")
                    .Set("num_files", 1000)
                    .Set("record_size", "1t"));
  RunResult r = cluster.Run(cluster.WritePlan(plan));
  EXPECT_EQ(r.exit_code, 2) << r.Output();
  EXPECT_THAT(r.err + r.out, HasSubstr("[[phase]] 'gen' key 'num_files': 1000 files"));
  EXPECT_THAT(r.err + r.out, HasSubstr(".toml:"));
  EXPECT_THAT(r.err + r.out, HasSubstr("--force"));
  bool any_train_dir = false;
  for (const auto& e : fs::recursive_directory_iterator(cluster / "")) {
    if (e.path().filename() == "train") any_train_dir = true;
  }
  EXPECT_FALSE(any_train_dir);
}

}  // namespace
}  // namespace lockstep::testing
