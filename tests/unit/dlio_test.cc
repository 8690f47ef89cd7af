// `lockstep dlio`'s YAML reader and its translation to a plan
// (controller/dlio): the shipped configs parse and translate into plans the
// plan reader accepts; unknown keys and bad values are refused with
// FILE:LINE:COL, the key and the value.
#include <filesystem>
#include <string>

#include "common/files.h"
#include "controller/dlio/dlio_config.h"
#include "controller/dlio/dlio_plan.h"
#include "controller/plan/plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "controller/plan/kinds/ai_plan.h"

namespace lockstep {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Shipped(const std::string& name) {
  return std::string(LOCKSTEP_SOURCE_DIR) + "/deploy/plans/dlio/" + name;
}

DlioConfig Load(const std::string& name) {
  auto text = ReadFileToString(Shipped(name));
  EXPECT_TRUE(text.ok()) << text.status();
  auto c = ParseDlioConfig(text.ok() ? *text : "", name);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : DlioConfig{};
}

constexpr const char* kShipped[] = {"unet3d.yaml", "resnet50.yaml", "cosmoflow.yaml",
                                    "llama3_8b.yaml"};

TEST(DlioConfig, EveryShippedConfigParsesAndTranslatesToAPlanThePlanReaderAccepts) {
  size_t seen = 0;
  for (const auto& e : std::filesystem::directory_iterator(Shipped(""))) {
    if (e.path().extension() == ".yaml") ++seen;
  }
  EXPECT_EQ(seen, std::size(kShipped)) << "a config in deploy/plans/dlio/ is not tested here";
  for (const char* name : kShipped) {
    for (bool smoke : {false, true}) {
      const DlioConfig c = Load(name);
      const DlioPlan p = DlioToPlan(c, {.accelerators_per_host = 4, .hosts = 2, .smoke = smoke});
      auto plan = ParsePlan(p.toml, name);
      EXPECT_TRUE(plan.ok()) << name << (smoke ? " --smoke" : "") << ": " << plan.status()
                             << "\n" << p.toml;
    }
  }
}

TEST(DlioConfig, Unet3dTranslatesToDatagenTrainAndCheckpointWithMlperfsNumbers) {
  const DlioConfig c = Load("unet3d.yaml");
  EXPECT_EQ(c.record_length_bytes, 146600628u);
  EXPECT_EQ(c.batch_size, 7u);
  EXPECT_DOUBLE_EQ(c.computation_time_seconds, 0.323);
  const DlioPlan p = DlioToPlan(c, {.accelerators_per_host = 3, .data_dir = "/mnt/d/"});
  const std::string& t = p.toml;
  EXPECT_THAT(t, HasSubstr("name = \"datagen\"\nkind = \"datagen\"\ntasks_per_agent = 3\n"
                           "dir = \"/mnt/d\"\nformat = \"npz\"\nnum_files = 168\n"
                           "samples_per_file = 1\nrecord_size = \"146600628\"\n"
                           "record_size_stdev = \"68341808\"\n"));
  EXPECT_THAT(t, HasSubstr("kind = \"train\""));
  EXPECT_THAT(t, HasSubstr("epochs = 5\nbatch_size = 7\nread_threads = 4\nprefetch_batches = 2\n"
                           "computation_time_seconds = 0.323\n"));
  EXPECT_THAT(t, HasSubstr("file_shuffle = \"seed\"\nsample_shuffle = \"seed\"\n"));
  EXPECT_THAT(t, HasSubstr("au_threshold = 0.9\n"));
  // One checkpoint: after epoch 5 of 5; model_size bytes per rank; no read.
  EXPECT_THAT(t, HasSubstr("checkpoint_op = \"write\"\nshard_size = \"499153191\"\n"
                           "checkpoints = 1\n"));
  EXPECT_THAT(t, Not(HasSubstr("checkpoint_op = \"read\"")));
  auto plan = ParsePlan(t, "unet3d");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->phases.size(), 3u);
  EXPECT_EQ(plan->phases[1].Own<AiPhasePlan>().batch_size, 7u);
}

TEST(DlioConfig, SmokeShrinksAndSaysWhat) {
  const DlioPlan p = DlioToPlan(Load("unet3d.yaml"), {.hosts = 2, .smoke = true});
  EXPECT_THAT(p.toml, AllOf(HasSubstr("num_files = 8\n"), HasSubstr("record_size = \"2097152\"\n"),
                            HasSubstr("epochs = 1\n"), HasSubstr("computation_time_seconds = 0.01\n"),
                            HasSubstr("batch_size = 4\n"), HasSubstr("shard_size = \"4194304\"")));
  EXPECT_THAT(p.toml, Not(HasSubstr("record_size_stdev")));
  EXPECT_THAT(p.notes, ::testing::Contains("--smoke: dataset.num_files_train 168 -> 8"));
  EXPECT_THAT(p.notes, ::testing::Contains("--smoke: train.epochs 5 -> 1"));
}

// Issue 39: `--smoke --data-dir D` left checkpoints/…/model_states-0.pt in
// the working directory. A relative checkpoint folder goes below the
// dataset's directory (what the agents share), an absolute one stays.
TEST(DlioConfig, RelativeCheckpointFolderGoesBelowTheDataDirNotTheWorkingDirectory) {
  DlioConfig c = Load("unet3d.yaml");
  EXPECT_EQ(DlioCheckpointDir(c, {.data_dir = "/mnt/d/"}), "/mnt/d/checkpoints/unet3d");
  EXPECT_EQ(DlioCheckpointDir(c, {}), "data/unet3d/checkpoints/unet3d");
  EXPECT_THAT(DlioToPlan(c, {.data_dir = "/mnt/d"}).toml,
              HasSubstr("dir = \"/mnt/d/checkpoints/unet3d\"\ncheckpoint_op = \"write\""));
  c.checkpoint_folder = "./checkpoints/";  // DLIO's default
  EXPECT_EQ(DlioCheckpointDir(c, {.data_dir = "/mnt/d"}), "/mnt/d/checkpoints");
  c.checkpoint_folder = "/scratch/ckpt/";
  EXPECT_EQ(DlioCheckpointDir(c, {.data_dir = "/mnt/d"}), "/scratch/ckpt");
  EXPECT_TRUE(CheckDlioCheckpointFolder(c).ok());
}

TEST(DlioConfig, CheckpointFolderClimbingOutOfTheDataDirIsRefused) {
  DlioConfig c = Load("unet3d.yaml");
  for (const char* climbing : {"../ckpt", "..", "a/../../ckpt"}) {
    c.checkpoint_folder = climbing;
    const absl::Status s = CheckDlioCheckpointFolder(c);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << climbing;
    EXPECT_THAT(s.message(), AllOf(HasSubstr("checkpoint.checkpoint_folder " + std::string(climbing)),
                                   HasSubstr("give an absolute path")));
  }
  c.checkpoint_folder = "a/../ckpt";  // stays below
  EXPECT_TRUE(CheckDlioCheckpointFolder(c).ok());
}

// A smoke run is a trial: neither its dataset nor its checkpoints are kept
// (the repetition's end removes them); a full run keeps both, as DLIO; the
// sweep's first smoke step keeps the dataset its later steps read.
TEST(DlioConfig, SmokeRunKeepsNothingItWroteAndSaysSo) {
  const DlioConfig c = Load("unet3d.yaml");
  const DlioPlan smoke = DlioToPlan(c, {.hosts = 2, .smoke = true});
  EXPECT_THAT(smoke.toml, Not(HasSubstr("keep")));
  EXPECT_THAT(smoke.notes, ::testing::Contains(
                               "--smoke: what the run writes (dataset, checkpoints) is removed at "
                               "its end"));
  const DlioPlan full = DlioToPlan(c, {.hosts = 2});
  EXPECT_THAT(full.toml, HasSubstr("kind = \"datagen\""));
  size_t keeps = 0;
  for (size_t at = full.toml.find("keep = true"); at != std::string::npos;
       at = full.toml.find("keep = true", at + 1)) {
    ++keeps;
  }
  EXPECT_EQ(keeps, 2u) << full.toml;  // the dataset and the checkpoints
  const DlioPlan sweep = DlioToPlan(c, {.hosts = 2, .smoke = true, .later_runs_read_dataset = true});
  EXPECT_THAT(sweep.toml, HasSubstr("keep = true"));
}

TEST(DlioConfig, Llama3CheckpointsUseMlperfsModelAndCounts) {
  const DlioConfig c = Load("llama3_8b.yaml");
  EXPECT_FALSE(c.train);
  const DlioPlan p = DlioToPlan(c, {.accelerators_per_host = 8});
  EXPECT_THAT(p.toml, Not(HasSubstr("kind = \"train\"")));
  // A relative checkpoint folder: below the dataset's folder (the default
  // "data": the config names none).
  EXPECT_THAT(p.toml, HasSubstr("tasks_per_agent = 8\ndir = \"data/checkpoints/llama3_8b\"\n"
                                "checkpoint_op = \"write\"\nmodel = \"llama3-8b\"\n"
                                "checkpoints = 10\nfsync = true\nkeep = true\n"));
  EXPECT_THAT(p.toml, HasSubstr("checkpoint_op = \"read\"\nmodel = \"llama3-8b\"\n"
                                "checkpoints = 10\n"));
  EXPECT_EQ(DlioCheckpointModel("llama_70b_zero3"), "llama3-70b");
  EXPECT_EQ(DlioCheckpointModel("llama3_405b"), "llama3-405b");
  EXPECT_EQ(DlioCheckpointModel("unet3d"), "");
}

TEST(DlioConfig, CosmoflowKeepsItsAuThresholdAndResnetRoundsItsRecord) {
  EXPECT_THAT(DlioToPlan(Load("cosmoflow.yaml"), {}).toml, HasSubstr("au_threshold = 0.7\n"));
  EXPECT_EQ(Load("resnet50.yaml").record_length_bytes, 114660u);
}

constexpr const char* kSmall =
    "model:\n  name: m\nworkflow:\n  train: True\ndataset:\n  format: npz\n"
    "  num_files_train: 4\n  record_length_bytes: 4096\n";

TEST(DlioConfig, UnknownKeyIsRefusedWithFileLineKeyValueAndTheKeysThere) {
  auto c = ParseDlioConfig(std::string(kSmall) + "  num_files_eval: 8\n", "w.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(),
              AllOf(HasSubstr("w.yaml:9:19: unknown key dataset.num_files_eval (value 8)"),
                    HasSubstr("num_files_train"), HasSubstr("remove it")));
  auto s = ParseDlioConfig(std::string(kSmall) + "profiling:\n  profiler: iostat\n", "w.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("w.yaml:9:1: unknown section profiling"));
}

TEST(DlioConfig, BadValuesAreRefusedWithTheirLine) {
  struct Case {
    std::string line, want;
  };
  const Case cases[] = {
      {"  num_samples_per_file: -3\n", "w.yaml:9:25: dataset.num_samples_per_file: -3 is not a "
                                       "whole number"},
      {"  num_samples_per_file: 1.5\n", "1.5 is not a whole number"},
      {"  file_prefix: [a, b]\n", "dataset.file_prefix: (a list) is not a non-empty string"},
      {"reader:\n  batch_size: many\n", "w.yaml:10:15: reader.batch_size: many is not a whole"},
      {"reader:\n  file_shuffle: sometimes\n", "write off, seed or random"},
      {"metric:\n  au: 1.5\n", "metric.au: 1.5 is not an AU fraction in (0, 1]"},
      {"train:\n  computation_time: -1\n", "train.computation_time: -1 is not a time"},
      {"workflow:\n  checkpoint: maybe\n", "w.yaml:10:15: workflow.checkpoint: maybe is not a "
                                           "boolean"},
  };
  for (const Case& k : cases) {
    auto c = ParseDlioConfig(std::string(kSmall) + k.line, "w.yaml");
    ASSERT_FALSE(c.ok()) << k.line;
    EXPECT_THAT(c.status().message(), HasSubstr(k.want)) << k.line;
  }
  // Not YAML at all: yaml-cpp's mark gives the line.
  auto bad_yaml = ParseDlioConfig("dataset: [\n", "w.yaml");
  ASSERT_FALSE(bad_yaml.ok());
  EXPECT_THAT(bad_yaml.status().message(), HasSubstr("w.yaml:2:1: not YAML"));
}

TEST(DlioConfig, FormatsLockstepDoesNotWriteAreRefusedWithTheFix) {
  // MLPerf Storage's own resnet50 line, as shipped there.
  std::string text = kSmall;
  text.replace(text.find("format: npz"), 11, "format: tfrecord");
  auto c = ParseDlioConfig(text, "resnet50_h100.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(),
              AllOf(HasSubstr("resnet50_h100.yaml:6:11: dataset.format: tfrecord is a format "
                              "Lockstep does not write"),
                    HasSubstr("format: records")));
}

TEST(DlioConfig, MissingPiecesAreRefused) {
  auto none = ParseDlioConfig("model:\n  name: m\nworkflow:\n  train: False\n", "w.yaml");
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), HasSubstr("workflow runs nothing"));
  auto ckpt = ParseDlioConfig(
      "model:\n  name: m\nworkflow:\n  train: False\n  checkpoint: True\n", "w.yaml");
  ASSERT_FALSE(ckpt.ok());
  EXPECT_THAT(ckpt.status().message(), HasSubstr("add model_size"));
  // No train given: DLIO trains by default, so a dataset is needed, and the
  // refusal says why.
  auto by_default = ParseDlioConfig("model:\n  name: m\nworkflow:\n  checkpoint: True\n", "w.yaml");
  ASSERT_FALSE(by_default.ok());
  EXPECT_THAT(by_default.status().message(),
              AllOf(HasSubstr("workflow trains on a dataset but dataset.format is missing"),
                    HasSubstr("DLIO trains by default")));
}

// DLIO's ConfigArguments defaults (generate_data False, do_train True,
// do_checkpoint False) for a config without a workflow section, or with
// only some of its keys: no longer "workflow runs nothing".
TEST(DlioConfig, WithoutWorkflowDlioDefaultsTrainOnly) {
  const std::string no_workflow =
      "model:\n  name: m\ndataset:\n  format: npz\n  num_files_train: 4\n"
      "  record_length_bytes: 4096\n";
  auto c = ParseDlioConfig(no_workflow, "w.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->train);
  EXPECT_FALSE(c->generate_data);
  EXPECT_FALSE(c->checkpoint);
  const std::string toml = DlioToPlan(*c, {}).toml;
  EXPECT_THAT(toml, HasSubstr("kind = \"train\""));
  EXPECT_THAT(toml, Not(HasSubstr("kind = \"datagen\"")));
  EXPECT_THAT(toml, Not(HasSubstr("kind = \"checkpoint")));
  // A workflow that gives generate_data only still trains, as DLIO does.
  auto gen = ParseDlioConfig(no_workflow + "workflow:\n  generate_data: True\n", "w.yaml");
  ASSERT_TRUE(gen.ok()) << gen.status();
  EXPECT_TRUE(gen->generate_data);
  EXPECT_TRUE(gen->train);
}

TEST(DlioConfig, HydraOverridesApplyAsTheYamlWould) {
  auto c = ParseDlioConfig(kSmall, "w.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(IsDlioOverride("++workload.dataset.data_folder=/mnt/x"));
  EXPECT_FALSE(IsDlioOverride("--smoke"));
  ASSERT_TRUE(ApplyDlioOverride("++workload.dataset.data_folder=/mnt/x", &*c).ok());
  ASSERT_TRUE(ApplyDlioOverride("workload.train.epochs=3", &*c).ok());
  EXPECT_EQ(c->data_folder, "/mnt/x");
  EXPECT_EQ(c->epochs, 3u);
  absl::Status bad = ApplyDlioOverride("++workload.train.epoch=3", &*c);
  EXPECT_THAT(bad.message(), HasSubstr("override ++workload.train.epoch=3: unknown key "
                                       "train.epoch"));
  EXPECT_THAT(ApplyDlioOverride("++workload.epochs=3", &*c).message(),
              HasSubstr("not workload.SECTION.KEY=VALUE"));
  // A section no workload has: named, with the sections there are (before,
  // "use one of nosuch: " and nothing).
  EXPECT_THAT(ApplyDlioOverride("++workload.nosuch.key=1", &*c).message(),
              HasSubstr("unknown section nosuch (in nosuch.key = 1): lockstep dlio does not run "
                        "it; use one of model, framework, workflow, dataset, reader, train, "
                        "checkpoint, metric"));
}

TEST(DlioConfig, TrainOnlyIsTheSweepsStep) {
  const DlioPlan p = DlioToPlan(Load("unet3d.yaml"), {.accelerators_per_host = 6,
                                                      .train_only = true});
  EXPECT_THAT(p.toml, Not(HasSubstr("datagen")));
  EXPECT_THAT(p.toml, Not(HasSubstr("checkpoint")));
  EXPECT_THAT(p.toml, HasSubstr("kind = \"train\"\ntasks_per_agent = 6\n"));
}

}  // namespace
}  // namespace lockstep
