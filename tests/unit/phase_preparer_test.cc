// PhasePreparer on real directories: the agent's limits, the roots, the
// free space and the workload's own checks refuse a phase before anything
// is made; a good phase comes back parked and described.
#include "agent/phase_preparer.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "absl/strings/str_format.h"
#include "agent/fs/lustre_tools.h"
#include "common/errors.h"
#include "common/limits.h"
#include "common/sizes.h"
#include "google/protobuf/text_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::TempDir;

// Two tasks, one file each, of 2 segments x 1 MiB in 64 KiB transfers.
v1::PhaseSpec WriteSpec() {
  v1::PhaseSpec s;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(phase_id: "t0/r0/write" kind: WRITE dir: "." file_name: "testfile"
           file_per_process: true tasks: 2 total_tasks: 2 transfer_bytes: 65536
           block_bytes: 1048576 segments: 2 pattern_seed: 9)pb",
      &s));
  return s;
}

// A preparer for `root` with the given limits, and what it points to.
class Preparer {
 public:
  Preparer(const std::string& root, uint32_t max_tasks, uint64_t max_bytes)
      : roots_(*AllowedRoots::Create({root})),
        mounts_(roots_.roots()),
        lustre_(LustreToolsOptions{}),
        preparer_(&roots_, &mounts_, &fs_,
                  PhasePreparerOptions{.max_tasks = max_tasks,
                                       .max_bytes_per_phase = max_bytes,
                                       .host = "test-host"}) {
    fs_.lustre = &lustre_;
  }
  absl::StatusOr<PreparedPhase> Prepare(const v1::PhaseSpec& spec, std::string* created = nullptr) {
    std::shared_ptr<const BeneathDir> held;
    auto phase = preparer_.Prepare(spec, &held);
    if (created != nullptr && held != nullptr) *created = held->path();
    return phase;
  }

 private:
  AllowedRoots roots_;
  RootMounts mounts_;
  LustreTools lustre_;
  FileSystemContext fs_;
  PhasePreparer preparer_;
};

TEST(PhasePreparer, AGoodPhaseIsParkedAndDescribed) {
  TempDir tmp;
  Preparer p(tmp.path(), 16, 0);
  auto phase = p.Prepare(WriteSpec());
  ASSERT_OK(phase);
  ASSERT_NE(phase->runner, nullptr);
  EXPECT_FALSE(phase->runner->Started());
  EXPECT_EQ(phase->dir, tmp.path());
  EXPECT_EQ(phase->reply.resolved_dir(), tmp.path());
  EXPECT_EQ(phase->reply.threads_parked(), 2u);
  EXPECT_EQ(phase->reply.files_size(), 2);
  EXPECT_GT(phase->reply.dir_fs().blocks(), 0u);
  EXPECT_EQ(phase->reply.fs_name(), "posix");
  EXPECT_TRUE(phase->creates_files);
  EXPECT_FALSE(phase->removes_trees);
  EXPECT_EQ(phase->checksums, nullptr);  // the spec leaves them unchanged
  phase->runner->Abort("test over");
}

TEST(PhasePreparer, RefusesMoreTasksThanTheAgentsLimit) {
  TempDir tmp;
  Preparer p(tmp.path(), 1, 0);
  auto phase = p.Prepare(WriteSpec());
  EXPECT_EQ(phase.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(phase.status().message(),
              HasSubstr("phase t0/r0/write asks for 2 tasks on this agent; its limit is 1"));
}

TEST(PhasePreparer, RefusesMoreBytesThanThePerPhaseLimit) {
  TempDir tmp;
  Preparer p(tmp.path(), 16, 1024 * 1024);  // the phase writes 2 x 2 MiB
  auto phase = p.Prepare(WriteSpec());
  EXPECT_EQ(phase.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(phase.status().message(), HasSubstr("limits.max_bytes_per_phase"));
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));  // nothing made
}

// Every kind that writes is weighed against the limit, not only transfers:
// mdtest -w's files, small files (at their mean size), and a BACKEND whose
// bytes x tasks would wrap past 64 bits.
TEST(PhasePreparer, EveryWritingKindIsWeighedAgainstTheByteLimit) {
  TempDir tmp;
  Preparer p(tmp.path(), 16, 1024 * 1024);
  v1::PhaseSpec md;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(phase_id: "t0/r0/md" kind: MDTEST md_op: MD_FILE_CREATE dir: "." file_name: "f"
           tasks: 2 total_tasks: 2 md_items: 100 md_write_bytes: 8192 md_branching: 1)pb",
      &md));  // 2 x 100 x 8 KiB = 1.6 MB
  EXPECT_THAT(p.Prepare(md).status().message(), HasSubstr("limits.max_bytes_per_phase"));
  v1::PhaseSpec sf;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(phase_id: "t0/r0/sf" kind: SMALL_FILES dir: "." file_name: "f" tasks: 2
           total_tasks: 2 small_files: 64 small_file_min_bytes: 16384
           small_file_max_bytes: 16384 small_files_per_dir: 64)pb",
      &sf));  // 2 x 64 x 16 KiB = 2 MiB
  EXPECT_THAT(p.Prepare(sf).status().message(), HasSubstr("limits.max_bytes_per_phase"));
  v1::PhaseSpec be;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(phase_id: "t0/r0/be" kind: BACKEND dir: "." file_name: "f" tasks: 2
           total_tasks: 2 backend { method: "file" bytes: 9223372036854775808
           block_bytes: 1048576 })pb",
      &be));  // 2 x 2^63 wrapped to 0 before
  EXPECT_THAT(p.Prepare(be).status().message(), HasSubstr("limits.max_bytes_per_phase"));
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));  // nothing made
}

// A spec from its text format.
v1::PhaseSpec SpecText(const std::string& text) {
  v1::PhaseSpec s;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &s)) << text;
  return s;
}

// Every kind's buffers are weighed before anything is made, not only a
// transfer's (security review): each kind's largest item is allowed alone,
// but 4,096 tasks of 64 MiB need 256 GiB, more than an agent holds for one
// phase (64 GiB; and than this host has). Without the check the NET phase
// parked 4,096 receivers, the mdtest one made its -d directory, and the
// others allocated (or ran out of space) before they failed.
TEST(PhasePreparer, EveryKindsBuffersAreWeighedBeforeAnythingIsMade) {
  TempDir tmp;
  Preparer p(tmp.path(), kMaxAgentTasks, 0);
  struct Case {
    std::string text;
    const char* bytes;  // as the refusal prints them
    const char* keys;
  };
  const Case cases[] = {
      // 4,096 receiving streams x a 64 MiB frame buffer each.
      {R"pb(phase_id: "t0/r0/net" kind: NET file_name: "net" tasks: 4096 total_tasks: 4096
            net { streams_per_peer: 1 message_bytes: 67108864 duration_ms: 1000
                  ping_bytes: 64 receive_streams: 4096
                  token: "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk" })pb",
       "256 GiB", "lower streams, message_size or ping_size"},
      // 4,096 x a 64 MiB O_DIRECT block.
      {R"pb(phase_id: "t0/r0/be" kind: BACKEND dir: "." file_name: "f" tasks: 4096
            total_tasks: 4096 backend { method: "file" bytes: 67108864
            block_bytes: 67108864 })pb",
       "256 GiB", "lower tasks_per_agent or transfer_size"},
      // 4,096 x mdtest -e 64 MiB (and 64 bytes of tree path each) in a
      // missing -d that rank 0's agent would create.
      {R"pb(phase_id: "t0/r0/md" kind: MDTEST md_op: MD_FILE_READ dir: "md" file_name: "f"
            tasks: 4096 total_tasks: 4096 md_items: 1 md_read_bytes: 67108864
            md_branching: 1)pb",
       "256.00 GiB", "lower tasks_per_agent, md_write_size or md_read_size"},
      // 4,096 x (a 32 MiB largest file + its scratch buffer).
      {R"pb(phase_id: "t0/r0/sf" kind: SMALL_FILES dir: "." file_name: "f" tasks: 4096
            total_tasks: 4096 small_files: 1 small_file_min_bytes: 8
            small_file_max_bytes: 33554432 small_files_per_dir: 1)pb",
       "256 GiB", "lower tasks_per_agent or small_file_max_size"},
      // 4,096 x 64 reader threads x a 1 MiB chunk (and 16 bytes of sample
      // indexes each).
      {R"pb(phase_id: "t0/r0/train" kind: TRAIN dir: "." file_name: "f" tasks: 4096
            total_tasks: 4096 dataset_format: DATASET_FORMAT_RECORDS num_files: 1
            samples_per_file: 4096 record_bytes: 4096 batch_size: 1 epochs: 1
            read_threads: 64 prefetch_batches: 1)pb",
       "256.00 GiB", "read_threads"},
  };
  for (const Case& c : cases) {
    const v1::PhaseSpec spec = SpecText(c.text);
    auto phase = p.Prepare(spec);
    EXPECT_EQ(phase.status().code(), absl::StatusCode::kInvalidArgument)
        << spec.phase_id() << ": " << phase.status();
    EXPECT_THAT(phase.status().message(),
                AllOf(HasSubstr("phase " + spec.phase_id() + ": kind "),
                      HasSubstr(absl::StrFormat("%u tasks need %s of buffers on this agent",
                                                spec.tasks(), c.bytes)),
                      HasSubstr("more than the 64 GiB an agent holds for one phase"),
                      HasSubstr(c.keys)));
  }
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));  // nothing made, -d included
}

// Below the agent's bound, the host's memory is the limit: a NET phase whose
// receivers need a 64 MiB buffer each, one more than this host's memory holds.
TEST(PhasePreparer, BuffersBeyondTheHostsMemoryAreRefused) {
  const uint64_t memory_bytes =
      static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE);
  const uint64_t buffer_bytes = uint64_t{64} << 20;
  const uint64_t tasks = memory_bytes / buffer_bytes + 1;
  if (tasks * buffer_bytes > kMaxAgentBufferBytes || tasks > kMaxAgentTasks) {
    GTEST_SKIP() << "this host's memory (" << HumanBytes(memory_bytes)
                 << ") is above the agent's bound: the test above covers it";
  }
  TempDir tmp;
  Preparer p(tmp.path(), kMaxAgentTasks, 0);
  v1::PhaseSpec net = SpecText(
      R"pb(phase_id: "t0/r0/net" kind: NET file_name: "net"
           net { streams_per_peer: 1 message_bytes: 67108864 duration_ms: 1000
                 ping_bytes: 64 token: "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk" })pb");
  net.set_tasks(static_cast<uint32_t>(tasks));
  net.set_total_tasks(static_cast<uint32_t>(tasks));
  net.mutable_net()->set_receive_streams(static_cast<uint32_t>(tasks));
  auto phase = p.Prepare(net);
  EXPECT_EQ(phase.status().code(), absl::StatusCode::kInvalidArgument) << phase.status();
  EXPECT_THAT(phase.status().message(),
              AllOf(HasSubstr(absl::StrFormat("%u tasks need %s of buffers", tasks,
                                              HumanBytes(tasks * buffer_bytes))),
                    HasSubstr(absl::StrFormat("more than this host's memory (%s)",
                                              HumanBytes(memory_bytes)))));
}

// A seeks phase writes at Prepare what is missing of its file (its layout):
// weighed against the limit then, so that a file already laid out passes.
TEST(PhasePreparer, ASeeksLayoutIsWeighedAgainstTheByteLimit) {
  TempDir tmp;
  Preparer p(tmp.path(), 16, 1024 * 1024);
  v1::PhaseSpec seeks;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(phase_id: "t0/r0/seeks" kind: SEEKS dir: "." file_name: "f" tasks: 3
           total_tasks: 3 transfer_bytes: 8192 block_bytes: 262144 segments: 2
           seeks_per_task: 10 seek_rewrite_pct: 10)pb",
      &seeks));  // 3 x 2 x 256 KiB = 1.5 MiB
  const auto refused = p.Prepare(seeks);
  EXPECT_THAT(refused.status().message(),
              AllOf(HasSubstr("limits.max_bytes_per_phase"), HasSubstr("1.50 MiB")));
  EXPECT_FALSE(std::filesystem::exists(tmp / "f"));
  std::ofstream(tmp / "f").close();
  std::filesystem::resize_file(tmp / "f", 3 * 2 * 262144);
  EXPECT_TRUE(p.Prepare(seeks).ok());  // laid out already: nothing to write
}

TEST(PhasePreparer, RefusesADirectoryOutsideTheRootsOrMissing) {
  TempDir tmp;
  std::filesystem::create_directories(tmp / "root");
  Preparer p(tmp / "root", 16, 0);
  v1::PhaseSpec outside = WriteSpec();
  outside.set_dir(tmp.path());
  EXPECT_EQ(KindOf(p.Prepare(outside).status()), v1::PATH_REFUSED);
  v1::PhaseSpec missing = WriteSpec();
  missing.set_dir("nope");
  EXPECT_EQ(p.Prepare(missing).status().code(), absl::StatusCode::kNotFound);
}

TEST(PhasePreparer, RefusesASpecItsWorkloadRefuses) {
  TempDir tmp;
  Preparer p(tmp.path(), 16, 0);
  v1::PhaseSpec bad = WriteSpec();
  bad.set_transfer_bytes(0);
  auto phase = p.Prepare(bad);
  EXPECT_EQ(phase.status().code(), absl::StatusCode::kInvalidArgument) << phase.status();
  EXPECT_THAT(phase.status().message(), HasSubstr("t0/r0/write"));
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
}

TEST(PhasePreparer, RefusesAPhaseThatDoesNotFitTheFreeSpace) {
  TempDir tmp;
  Preparer p(tmp.path(), 16, 0);
  v1::PhaseSpec huge = WriteSpec();
  huge.set_block_bytes(uint64_t{1} << 50);  // 4 PiB per task
  huge.set_transfer_bytes(uint64_t{1} << 20);
  huge.set_segments(1);
  auto phase = p.Prepare(huge);
  EXPECT_EQ(KindOf(phase.status()), v1::NO_SPACE) << phase.status();
  EXPECT_THAT(phase.status().message(), HasSubstr("run with --force"));
}

TEST(PhasePreparer, RankZeroCreatesAMissingMdtestDirectoryAndSaysSo) {
  TempDir tmp;
  Preparer p(tmp.path(), 16, 0);
  v1::PhaseSpec md = WriteSpec();
  md.set_kind(v1::MDTEST);
  md.set_file_per_process(false);
  md.set_md_op(v1::MD_TREE_CREATE);
  md.set_md_items(3);
  md.set_dir("md");
  std::string created;
  auto phase = p.Prepare(md, &created);
  ASSERT_OK(phase);
  EXPECT_EQ(created, tmp / "md");
  EXPECT_TRUE(std::filesystem::is_directory(tmp / "md"));
  phase->runner->Abort("test over");
  // Another agent's ranks (not rank 0) never create it.
  phase->runner.reset();
  std::filesystem::remove_all(tmp / "md");
  md.set_first_rank(2);
  md.set_total_tasks(4);
  created.clear();
  auto other = p.Prepare(md, &created);
  if (other.ok()) other->runner->Abort("test over");
  EXPECT_EQ(created, "");
  EXPECT_FALSE(std::filesystem::exists(tmp / "md"));
}

}  // namespace
}  // namespace lockstep
