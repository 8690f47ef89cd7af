// The AI workloads on the agent (issue 30): DLIO's file names and the npz
// container, the per-epoch order (shuffles, each sample once over the ranks),
// AU, and datagen -> train -> checkpoint write -> read on real files.
#include <sys/stat.h>
#include <zlib.h>

#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "agent/phase_runner.h"
#include "agent/workloads/checkpoint.h"
#include "common/dataset.h"
#include "agent/workloads/train.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "unit/run_phase.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using testing::RunSpec;
using testing::TempDir;

v1::PhaseSpec DatasetSpec(v1::PhaseKind kind, v1::DatasetFormat format) {
  v1::PhaseSpec s;
  s.set_phase_id("t0/r0/" + std::string(kind == v1::TRAIN ? "train" : "datagen"));
  s.set_kind(kind);
  s.set_file_name("testfile");
  s.set_tasks(2);
  s.set_total_tasks(2);
  s.set_dataset_format(format);
  s.set_num_files(12);
  s.set_samples_per_file(2);
  s.set_record_bytes(10000);  // npz: d = 100
  s.set_file_prefix("img");
  s.set_transfer_bytes(4096);
  s.set_pattern_seed(5);
  s.set_epochs(2);
  s.set_batch_size(3);
  s.set_read_threads(2);
  s.set_prefetch_batches(2);
  s.set_computation_time_ns(200'000);
  s.set_shuffle_seed(123);
  return s;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

uint32_t Le32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}
uint16_t Le16(const std::string& s, size_t at) {
  return static_cast<uint16_t>(static_cast<unsigned char>(s[at]) |
                               (static_cast<unsigned char>(s[at + 1]) << 8));
}

TEST(DatasetNames, AreDliosPaddedToTheDigitsOfTheFileCount) {
  v1::PhaseSpec s = DatasetSpec(v1::DATAGEN, v1::DATASET_FORMAT_NPZ);
  s.set_num_files(168);
  EXPECT_EQ(DatasetFilePath("/d", s, 7), "/d/train/img_007_of_168.npz");
  EXPECT_EQ(DatasetFilePath("/d", s, 167), "/d/train/img_167_of_168.npz");
  s.set_file_prefix("");
  s.set_dataset_format(v1::DATASET_FORMAT_RECORDS);
  s.set_num_files(9);
  EXPECT_EQ(DatasetFilePath("/d", s, 3), "/d/train/img_3_of_9.rec");
}

TEST(EpochOrder, ShufflesAreSeededPerEpochAndOffIsTheIdentity) {
  v1::PhaseSpec s = DatasetSpec(v1::TRAIN, v1::DATASET_FORMAT_NPZ);
  s.set_num_files(50);
  std::vector<uint64_t> identity(50);
  for (uint64_t i = 0; i < 50; ++i) identity[i] = i;
  EXPECT_EQ(EpochFileOrder(s, 1), identity);
  s.set_file_shuffle(v1::SHUFFLE_SEED);
  const std::vector<uint64_t> e1 = EpochFileOrder(s, 1);
  EXPECT_EQ(EpochFileOrder(s, 1), e1);  // the same on every rank and agent
  EXPECT_NE(EpochFileOrder(s, 2), e1);  // seed + epoch
  EXPECT_NE(e1, identity);
  EXPECT_EQ(std::set<uint64_t>(e1.begin(), e1.end()).size(), 50u);
  s.set_shuffle_seed(124);
  EXPECT_NE(EpochFileOrder(s, 1), e1);
}

TEST(EpochOrder, RanksTogetherReadEverySampleOncePerEpoch) {
  v1::PhaseSpec s = DatasetSpec(v1::TRAIN, v1::DATASET_FORMAT_RECORDS);
  s.set_num_files(7);
  s.set_samples_per_file(3);
  s.set_total_tasks(4);
  s.set_sample_shuffle(v1::SHUFFLE_SEED);
  for (uint32_t epoch = 1; epoch <= 2; ++epoch) {
    std::multiset<uint64_t> all;
    for (uint32_t rank = 0; rank < 4; ++rank) {
      const auto samples = EpochRankSamples(s, rank, epoch);
      EXPECT_LE(samples.size(), 6u);  // ceil(21 / 4)
      all.insert(samples.begin(), samples.end());
    }
    ASSERT_EQ(all.size(), 21u);
    EXPECT_EQ(std::set<uint64_t>(all.begin(), all.end()).size(), 21u);
  }
  EXPECT_NE(EpochRankSamples(s, 0, 1), EpochRankSamples(s, 0, 2));
  EXPECT_EQ(EpochRankSamples(s, 0, 1), EpochRankSamples(s, 0, 1));
  s.set_sample_shuffle(v1::SHUFFLE_OFF);
  EXPECT_EQ(EpochRankSamples(s, 1, 1), (std::vector<uint64_t>{6, 7, 8, 9, 10, 11}));
  // main.py: floor(21 / 3 / 4) = 1 batch of 3 per accelerator and epoch.
  EXPECT_EQ(StepsPerEpoch(s), 1u);
  s.set_total_training_steps(1);
  s.set_batch_size(1);
  EXPECT_EQ(StepsPerEpoch(s), 1u);
}

TEST(Au, IsComputeOverWallAndZeroWithoutWall) {
  EXPECT_DOUBLE_EQ(AcceleratorUtilization(900, 1000), 0.9);
  EXPECT_DOUBLE_EQ(AcceleratorUtilization(0, 1000), 0.0);
  EXPECT_DOUBLE_EQ(AcceleratorUtilization(5, 0), 0.0);
  EXPECT_DOUBLE_EQ(AcceleratorUtilization(1001, 1000), 1.0);  // clock granularity
}

TEST(BatchCompute, StdevDrawsAreDeterministicAndNeverNegative) {
  v1::PhaseSpec s = DatasetSpec(v1::TRAIN, v1::DATASET_FORMAT_RECORDS);
  EXPECT_EQ(BatchComputeNs(s, 0, 1, 0), 200'000);
  s.set_computation_stdev_ns(400'000);
  int64_t sum = 0;
  std::set<int64_t> seen;
  for (uint64_t b = 0; b < 2000; ++b) {
    const int64_t v = BatchComputeNs(s, 1, 1, b);
    ASSERT_GE(v, 0);
    EXPECT_EQ(v, BatchComputeNs(s, 1, 1, b));
    seen.insert(v);
    sum += v;
  }
  EXPECT_GT(seen.size(), 1000u);
  EXPECT_GT(sum / 2000, 200'000);  // clipped at 0: the mean moves up
}

TEST(DatagenWorkload, NpzFilesAreZipsOfXAndYAsNumpySavezWrites) {
  TempDir dir;
  const v1::PhaseSpec s = DatasetSpec(v1::DATAGEN, v1::DATASET_FORMAT_NPZ);
  const v1::PhaseResult r = RunSpec(s, dir.path());
  ASSERT_TRUE(r.ok()) << r.error();
  uint64_t files = 0;
  for (const auto& t : r.tasks()) files += t.files();
  EXPECT_EQ(files, 12u);
  const DatasetFileLayout l = DatasetFileLayoutOf(s, 0);
  EXPECT_EQ(l.dim, 100u);
  EXPECT_EQ(l.sample_bytes, 10000u);
  for (uint64_t i = 0; i < 12; ++i) {
    struct stat st;
    ASSERT_EQ(::stat(DatasetFilePath(dir.path(), s, i).c_str(), &st), 0) << i;
    EXPECT_EQ(static_cast<uint64_t>(st.st_size), l.file_bytes);
  }
  const std::string f = ReadFile(DatasetFilePath(dir.path(), s, 3));
  ASSERT_EQ(f.size(), l.file_bytes);
  ASSERT_EQ(Le32(f, 0), 0x04034b50u);
  EXPECT_EQ(f.substr(30, 5), "x.npy");
  const size_t npy = 30 + 5 + 20;
  EXPECT_EQ(f.substr(npy, 6), "\x93NUMPY");
  EXPECT_EQ((npy + 10 + Le16(f, npy + 8) - npy) % 64, 0u);
  EXPECT_THAT(f.substr(npy + 10, Le16(f, npy + 8)),
              HasSubstr("{'descr': '|u1', 'fortran_order': False, 'shape': (100, 100, 2), }"));
  EXPECT_EQ(npy + 10 + Le16(f, npy + 8), l.data_offset);
  // x's CRC in its local header is the CRC of x.npy (header and data).
  const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(f.data() + npy),
                          static_cast<uInt>(l.data_offset + l.data_bytes - npy));
  EXPECT_EQ(Le32(f, 14), static_cast<uint32_t>(crc));
  // The end record: two entries, the directory right before it.
  const size_t eocd = f.size() - 22;
  ASSERT_EQ(Le32(f, eocd), 0x06054b50u);
  EXPECT_EQ(Le16(f, eocd + 10), 2);
  const uint32_t cd_bytes = Le32(f, eocd + 12), cd_offset = Le32(f, eocd + 16);
  EXPECT_EQ(cd_offset + cd_bytes, eocd);
  EXPECT_EQ(Le32(f, cd_offset), 0x02014b50u);
  EXPECT_EQ(Le32(f, cd_offset + 16), static_cast<uint32_t>(crc));
  EXPECT_THAT(f.substr(l.data_offset + l.data_bytes), HasSubstr("y.npy"));
  EXPECT_THAT(f.substr(l.data_offset + l.data_bytes), HasSubstr("'descr': '<i8'"));
}

TEST(DatagenThenTrain, EveryEpochReadsTheDatasetOnceAndAuIsCounted) {
  for (v1::DatasetFormat format : {v1::DATASET_FORMAT_RECORDS, v1::DATASET_FORMAT_NPZ}) {
    SCOPED_TRACE(format);
    TempDir dir;
    v1::PhaseSpec gen = DatasetSpec(v1::DATAGEN, format);
    gen.set_samples_per_file(1);  // npz: every sample its own file, as unet3d
    ASSERT_TRUE(RunSpec(gen, dir.path()).ok());
    v1::PhaseSpec s = DatasetSpec(v1::TRAIN, format);
    s.set_samples_per_file(1);
    s.set_file_shuffle(v1::SHUFFLE_SEED);
    s.set_sample_shuffle(v1::SHUFFLE_SEED);
    const v1::PhaseResult r = RunSpec(s, dir.path());
    ASSERT_TRUE(r.ok()) << r.error();
    ASSERT_EQ(r.tasks_size(), 2);
    uint64_t bytes_epoch1 = 0;
    for (const v1::TaskResult& t : r.tasks()) {
      const v1::TrainResult& tr = t.train();
      // 12 samples, batches of 3, 2 accelerators: 2 batches each per epoch.
      EXPECT_EQ(tr.batches(), 4u);
      EXPECT_EQ(tr.samples(), 12u);
      EXPECT_EQ(tr.batch_wait().total_count(), 4u);
      ASSERT_EQ(tr.epochs_size(), 2);
      bytes_epoch1 += tr.epochs(0).bytes();
      EXPECT_GT(tr.au(), 0.0);
      EXPECT_LE(tr.au(), 1.0);
      EXPECT_GE(tr.compute_ns(), 4 * 200'000);
      EXPECT_LE(tr.compute_ns(), tr.wall_ns());
      EXPECT_EQ(t.ops(), 12u);
    }
    EXPECT_EQ(bytes_epoch1, DatasetBytes(s));
  }
}

TEST(TrainWorkload, RefusesAMissingDatasetAndABatchLargerThanTheShare) {
  TempDir dir;
  v1::PhaseSpec s = DatasetSpec(v1::TRAIN, v1::DATASET_FORMAT_NPZ);
  auto r = PhaseRunner::Prepare(s, dir.path());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("img_00_of_12.npz"));
  EXPECT_THAT(r.status().message(), HasSubstr("datagen"));
  s.set_batch_size(13);
  r = PhaseRunner::Prepare(s, dir.path());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("batch_size"));
}

TEST(CheckpointWorkload, WritesShardsPerRankAndReadsThemBack) {
  TempDir dir;
  v1::PhaseSpec s;
  s.set_phase_id("t0/r0/ckpt");
  s.set_kind(v1::CHECKPOINT);
  s.set_file_name("testfile");
  s.set_tasks(3);
  s.set_total_tasks(3);
  s.set_checkpoint_op(v1::CHECKPOINT_WRITE);
  s.set_shard_bytes(300 * 1024);
  s.set_checkpoints(2);
  s.set_transfer_bytes(64 * 1024);
  s.set_checkpoint_fsync(true);
  v1::PhaseResult w = RunSpec(s, dir.path());
  ASSERT_TRUE(w.ok()) << w.error();
  for (const v1::TaskResult& t : w.tasks()) {
    EXPECT_EQ(t.bytes(), 2u * 300 * 1024);
    EXPECT_EQ(t.files(), 2u);
    ASSERT_EQ(t.checkpoints_size(), 2);
    EXPECT_LE(t.checkpoints(0).stop_unix_ns(), t.checkpoints(1).start_unix_ns());
    // 300 KiB in 64 KiB transfers: 5 per shard.
    EXPECT_EQ(t.latency().total_count(), 10u);
  }
  struct stat st;
  ASSERT_EQ(::stat(CheckpointShardPath(dir.path(), 1, 2).c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 300 * 1024);
  EXPECT_EQ(CheckpointShardPath("/c", 0, 7), "/c/global_epoch1_step1/model_states-7.pt");
  s.set_checkpoint_op(v1::CHECKPOINT_READ);
  v1::PhaseResult rd = RunSpec(s, dir.path());
  ASSERT_TRUE(rd.ok()) << rd.error();
  for (const v1::TaskResult& t : rd.tasks()) EXPECT_EQ(t.bytes(), 2u * 300 * 1024);
  // A read of more checkpoints than were written is refused in Prepare.
  s.set_checkpoints(3);
  auto r = PhaseRunner::Prepare(s, dir.path());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("global_epoch1_step3/model_states-0.pt"));
}

}  // namespace
}  // namespace lockstep
