// Workload::AgentBufferBytes, the buffers a phase's tasks allocate on one
// agent (agent/workloads/workload.h): each kind's formula for a normal spec,
// saturation instead of a wrapped product, what Prepare really allocates
// against the formula, and CheckTransferLayout's refusal without a preparer.
// A change to what a workload allocates must change its formula and these.
#include <malloc.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "agent/beneath.h"
#include "agent/workloads/workload.h"
#include "common/limits.h"
#include "google/protobuf/text_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

constexpr uint64_t kMiB = uint64_t{1} << 20;

v1::PhaseSpec SpecText(const std::string& text) {
  v1::PhaseSpec s;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &s)) << text;
  return s;
}

uint64_t BufferBytes(const std::string& text) {
  auto w = MakeWorkload(SpecText(text));
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? (*w)->AgentBufferBytes() : 0;
}

TEST(AgentBufferBytes, TransfersAreTasksTimesTransferTwiceWithVerification) {
  EXPECT_EQ(BufferBytes(R"pb(kind: WRITE file_name: "f" tasks: 4 total_tasks: 4
                             transfer_bytes: 65536 block_bytes: 1048576 segments: 1)pb"),
            4 * 65536u);
  EXPECT_EQ(BufferBytes(R"pb(kind: WRITE file_name: "f" tasks: 4 total_tasks: 4
                             transfer_bytes: 65536 block_bytes: 1048576 segments: 1
                             verify_after_write: true)pb"),
            4 * 65536u * 2);
  EXPECT_EQ(BufferBytes(R"pb(kind: REWRITE file_name: "f" tasks: 3 total_tasks: 3
                             transfer_bytes: 8192 block_bytes: 8192 segments: 1
                             verify: true)pb"),
            3 * 8192u * 2);
}

TEST(AgentBufferBytes, NetCountsSendersAndReceivers) {
  // 2 peers x 3 streams send: each its payload (message - 16-byte header)
  // and a ping and a pong frame (16 + 64); 4 receive into max(message, 80).
  EXPECT_EQ(BufferBytes(R"pb(kind: NET file_name: "n" tasks: 10 total_tasks: 10
                             net { streams_per_peer: 3 send_peers: 2 receive_streams: 4
                                   message_bytes: 1048576 ping_bytes: 64 })pb"),
            6 * (kMiB - 16 + 2 * 80) + 4 * kMiB);
  // Pings larger than the message: the receiver's buffer holds a ping frame.
  EXPECT_EQ(BufferBytes(R"pb(kind: NET file_name: "n" tasks: 1 total_tasks: 1
                             net { receive_streams: 1 message_bytes: 1024
                                   ping_bytes: 4096 })pb"),
            16 + 4096u);
  // Peers x streams beyond the tasks (Validate refuses it): weighed by the tasks.
  EXPECT_EQ(BufferBytes(R"pb(kind: NET file_name: "n" tasks: 2 total_tasks: 2
                             net { streams_per_peer: 4000000000 send_peers: 4000000000
                                   receive_streams: 4000000000 message_bytes: 1024 })pb"),
            2 * (1024 - 16 + 2 * 16u));
}

TEST(AgentBufferBytes, BackendFileHoldsABlockPerTaskAndTheBenchesNone) {
  EXPECT_EQ(BufferBytes(R"pb(kind: BACKEND file_name: "f" tasks: 3 total_tasks: 3
                             backend { method: "file" bytes: 16777216 block_bytes: 4194304 })pb"),
            3 * 4 * kMiB);
  EXPECT_EQ(BufferBytes(R"pb(kind: BACKEND file_name: "f" tasks: 3 total_tasks: 3
                             backend { method: "osd_bench" bytes: 16777216
                                       block_bytes: 4194304 })pb"),
            0u);
  // 2 x 2^63 saturates: never passes a bound as a wrapped 0.
  EXPECT_EQ(BufferBytes(R"pb(kind: BACKEND file_name: "f" tasks: 2 total_tasks: 2
                             backend { method: "file" bytes: 9223372036854775808
                                       block_bytes: 9223372036854775808 })pb"),
            UINT64_MAX);
}

TEST(AgentBufferBytes, MdtestHoldsItsLargestSizeTheExpectedBytesAndItsTreePaths) {
  // Tree of branching 10, depth 2: 111 directories at 64 bytes each.
  const uint64_t paths = 111 * 64;
  EXPECT_EQ(BufferBytes(R"pb(kind: MDTEST md_op: MD_FILE_CREATE file_name: "f" tasks: 5
                             total_tasks: 5 md_items: 10 md_write_bytes: 8192
                             md_read_bytes: 4096 md_branching: 10 md_depth: 2)pb"),
            5 * (8192 + paths));
  // -e with -X: the expected bytes, min(-w, -e) rounded down to 8, on top.
  EXPECT_EQ(BufferBytes(R"pb(kind: MDTEST md_op: MD_FILE_READ file_name: "f" tasks: 5
                             total_tasks: 5 md_items: 10 md_write_bytes: 8192
                             md_read_bytes: 4100 verify: true md_branching: 10
                             md_depth: 2)pb"),
            5 * (8192 + 4096 + paths));
  // Without -w and -e: an 8-byte buffer; one directory (no branching).
  EXPECT_EQ(BufferBytes(R"pb(kind: MDTEST md_op: MD_DIR_STAT file_name: "f" tasks: 2
                             total_tasks: 2 md_items: 10)pb"),
            2 * (8 + 64u));
}

TEST(AgentBufferBytes, SmallFilesHoldTheLargestFileTwice) {
  EXPECT_EQ(BufferBytes(R"pb(kind: SMALL_FILES file_name: "f" tasks: 3 total_tasks: 3
                             small_files: 10 small_file_min_bytes: 100
                             small_file_max_bytes: 1048576)pb"),
            3 * 2 * kMiB);
}

TEST(AgentBufferBytes, SeeksHoldATransferPerTaskAndTheLayoutPiece) {
  EXPECT_EQ(BufferBytes(R"pb(kind: SEEKS file_name: "f" tasks: 5 total_tasks: 5
                             transfer_bytes: 8192 block_bytes: 1048576 segments: 2
                             seeks_per_task: 10 verify: true)pb"),
            5 * 8192 * 2 + kMiB);
  EXPECT_EQ(BufferBytes(R"pb(kind: SEEKS file_name: "f" tasks: 5 total_tasks: 5
                             transfer_bytes: 8192 block_bytes: 16777216 segments: 1
                             seeks_per_task: 10)pb"),
            5 * 8192 + 4 * kMiB);  // the piece is at most 4 MiB
}

TEST(AgentBufferBytes, AiKindsHoldTheirChunks) {
  // train: 3 readers x 1 MiB (transfer_bytes 0) per task, and the epoch's
  // file order (10) and the rank's samples (ceil(70 / 4) = 18), 8 bytes each.
  EXPECT_EQ(BufferBytes(R"pb(kind: TRAIN file_name: "f" tasks: 2 total_tasks: 4
                             num_files: 10 samples_per_file: 7 read_threads: 3)pb"),
            2 * (3 * kMiB + 8 * (10 + 18)));
  EXPECT_EQ(BufferBytes(R"pb(kind: CHECKPOINT file_name: "f" tasks: 4 total_tasks: 4
                             transfer_bytes: 2097152 shard_bytes: 1)pb"),
            4 * 2 * kMiB);
  // datagen: a chunk, and for NPZ y's zeros built whole (8 a sample) in up
  // to 3 copies.
  EXPECT_EQ(BufferBytes(R"pb(kind: DATAGEN file_name: "f" tasks: 2 total_tasks: 2
                             dataset_format: DATASET_FORMAT_NPZ samples_per_file: 100)pb"),
            2 * (kMiB + 3 * 8 * 100));
  EXPECT_EQ(BufferBytes(R"pb(kind: DATAGEN file_name: "f" tasks: 2 total_tasks: 2
                             dataset_format: DATASET_FORMAT_RECORDS samples_per_file: 100
                             transfer_bytes: 65536)pb"),
            2 * 65536u);
}

TEST(AgentBufferBytes, FindHoldsNoneAndACommandItsTails) {
  EXPECT_EQ(BufferBytes(R"pb(kind: FIND file_name: "f" tasks: 4 total_tasks: 4)pb"), 0u);
  // stdout's and stderr's tails (4 KiB by default), each up to 2 x 4 KiB +
  // 128 KiB before it is trimmed.
  EXPECT_EQ(BufferBytes(R"pb(kind: COMMAND file_name: "f" tasks: 1 total_tasks: 1)pb"),
            2 * (2 * 4096 + 128 * 1024u));
}

TEST(AgentBufferBytes, EveryKindNamesTheKeysThatSizeIt) {
  for (v1::PhaseKind kind : WorkloadKinds()) {
    v1::PhaseSpec s;
    s.set_kind(kind);
    s.set_file_name("f");
    auto w = MakeWorkload(s);
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_NE((*w)->AgentBufferKeys(), "") << v1::PhaseKind_Name(kind);
  }
}

// The bytes in use in glibc's malloc (heap and mmapped chunks).
uint64_t MallocInUseBytes() {
  const struct mallinfo2 m = ::mallinfo2();
  return m.uordblks + m.hblkhd;
}

// What Prepare allocates, against the formula: every kind here allocates
// all its buffers in Prepare (NET's receivers and pings come in RunTask,
// SEEKS' layout piece is freed before Prepare returns). Beyond the formula
// only bookkeeping (paths, vectors) and malloc's rounding may come.
TEST(AgentBufferBytes, IsWhatPrepareAllocates) {
  TempDir tmp;
  const std::string specs[] = {
      R"pb(phase_id: "t0/r0/w" kind: WRITE file_name: "w" file_per_process: true tasks: 3
           total_tasks: 3 transfer_bytes: 1048576 block_bytes: 1048576 segments: 1
           verify_after_write: true)pb",
      R"pb(phase_id: "t0/r0/be" kind: BACKEND file_name: "be" tasks: 3 total_tasks: 3
           backend { method: "file" bytes: 2097152 block_bytes: 2097152 })pb",
      R"pb(phase_id: "t0/r0/md" kind: MDTEST md_op: MD_FILE_CREATE file_name: "md" tasks: 3
           total_tasks: 3 md_items: 1 md_write_bytes: 1048576 md_branching: 1)pb",
      R"pb(phase_id: "t0/r0/sf" kind: SMALL_FILES file_name: "sf" tasks: 3 total_tasks: 3
           small_files: 1 small_file_min_bytes: 8 small_file_max_bytes: 1048576)pb",
      R"pb(phase_id: "t0/r0/ck" kind: CHECKPOINT checkpoint_op: CHECKPOINT_WRITE
           file_name: "ck" tasks: 3 total_tasks: 3 shard_bytes: 1 checkpoints: 1
           transfer_bytes: 2097152)pb",
      R"pb(phase_id: "t0/r0/dg" kind: DATAGEN file_name: "dg" tasks: 3 total_tasks: 3
           dataset_format: DATASET_FORMAT_RECORDS num_files: 3 samples_per_file: 1
           record_bytes: 8 transfer_bytes: 2097152)pb",
  };
  auto held = BeneathDir::OpenRoot(tmp.path());
  ASSERT_OK(held);
  for (const std::string& text : specs) {
    const v1::PhaseSpec spec = SpecText(text);
    auto w = MakeWorkload(spec);
    ASSERT_OK(w);
    ASSERT_OK((*w)->Validate());
    std::vector<v1::TaskResult> results(spec.tasks());
    std::vector<v1::TaskResult*> pointers;
    for (v1::TaskResult& r : results) pointers.push_back(&r);
    const uint64_t before = MallocInUseBytes();
    ASSERT_OK((*w)->Prepare(**held, pointers));
    const uint64_t allocated = MallocInUseBytes() - before;
    if (allocated == 0) GTEST_SKIP() << "malloc is not glibc's (a sanitizer's?)";
    const uint64_t formula = (*w)->AgentBufferBytes();
    EXPECT_GE(allocated + 64 * 1024, formula) << spec.phase_id();
    EXPECT_LE(allocated, formula + 64 * 1024 + 8 * 4096 * spec.tasks()) << spec.phase_id();
    (*w)->RemoveFiles(**held).IgnoreError();
  }
}

// Without a preparer (MakeWorkload alone, as tests use it), a transfer
// kind's Validate weighs its buffers with the same words.
TEST(AgentBufferBytes, CheckTransferLayoutRefusesTheSameWay) {
  v1::PhaseSpec s = SpecText(
      R"pb(phase_id: "t0/r0/w" kind: WRITE file_name: "f" tasks: 4096 total_tasks: 4096
           transfer_bytes: 67108864 block_bytes: 67108864 segments: 1
           verify_after_write: true)pb");
  const absl::Status refused = CheckTransferLayout(s);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(),
              HasSubstr("phase t0/r0/w: kind write: 4096 tasks x transfer size 64 MiB x 2 "
                        "(verification) need 512 GiB of buffers on this agent, more than the "
                        "64 GiB an agent holds for one phase; lower tasks_per_agent or "
                        "transfer_size"));
  auto w = MakeWorkload(s);
  ASSERT_OK(w);
  EXPECT_EQ((*w)->AgentBufferBytes(), uint64_t{512} << 30);
}

}  // namespace
}  // namespace lockstep
