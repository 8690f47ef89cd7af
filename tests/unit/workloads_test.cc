// IOR's finer options in the phase runner (-z, -D with wear-out, -W, -g),
// the rewrite, small_files and mdtest kinds, on real files.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "agent/phase_runner.h"
#include "agent/workloads/mdtest.h"
#include "agent/workloads/small_files.h"
#include "agent/workloads/workload.h"
#include "common/clock.h"
#include "common/layout.h"
#include "common/mdtest_layout.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "unit/run_phase.h"

namespace lockstep {
namespace {

using testing::RunNow;
using testing::RunSpec;

using ::testing::HasSubstr;
using testing::TempDir;

v1::PhaseSpec Spec(v1::PhaseKind kind) {
  v1::PhaseSpec s;
  s.set_phase_id("t0/r0/p");
  s.set_kind(kind);
  s.set_file_name("f");
  s.set_file_per_process(true);
  s.set_tasks(2);
  s.set_total_tasks(2);
  s.set_transfer_bytes(64 * 1024);
  s.set_block_bytes(1024 * 1024);
  s.set_segments(2);
  s.set_pattern_seed(5);
  s.set_random_seed(5);
  return s;
}

TEST(Permutation, EveryIndexExactlyOnce) {
  for (uint64_t n : {1u, 2u, 3u, 7u, 64u, 1000u, 4097u, 65536u}) {
    Permutation p(n, 42);
    std::vector<bool> seen(n, false);
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t v = p(i);
      ASSERT_LT(v, n);
      ASSERT_FALSE(seen[v]) << "n=" << n << " value " << v << " twice";
      seen[v] = true;
    }
  }
  // Shuffled, and differently for another key.
  Permutation a(1000, 1), b(1000, 2);
  int fixed = 0, same = 0;
  for (uint64_t i = 0; i < 1000; ++i) {
    fixed += a(i) == i;
    same += a(i) == b(i);
  }
  EXPECT_LT(fixed, 50);
  EXPECT_LT(same, 50);
}

TEST(RandomOffsets, LayoutCoversEachTransferOnceForBothLayouts) {
  for (bool fpp : {true, false}) {
    v1::PhaseSpec s = Spec(v1::WRITE);
    s.set_file_per_process(fpp);
    s.set_random_offsets(true);
    for (uint32_t rank = 0; rank < 2; ++rank) {
      Permutation p(TransfersPerTask(s), RandomOffsetsKey(s, rank));
      std::set<uint64_t> want, got;
      std::vector<uint64_t> order;
      for (uint64_t seg = 0; seg < s.segments(); ++seg) {
        for (uint64_t j = 0; j < TransfersPerBlock(s); ++j) want.insert(TransferOffset(s, rank, seg, j));
      }
      for (uint64_t k = 0; k < TransfersPerTask(s); ++k) {
        uint64_t off = OrderedTransferOffset(s, rank, &p, TransfersPerBlock(s), k);
        order.push_back(off);
        EXPECT_TRUE(got.insert(off).second) << "offset " << off << " twice";
      }
      EXPECT_EQ(got, want);
      EXPECT_FALSE(std::is_sorted(order.begin(), order.end()));
    }
  }
}

TEST(RandomOffsets, WrittenShuffledReadsBackSequentiallyAndVerified) {
  TempDir tmp;
  v1::PhaseSpec w = Spec(v1::WRITE);
  w.set_random_offsets(true);
  w.set_verify_after_write(true);
  v1::PhaseResult wr = RunSpec(w, tmp.path());
  ASSERT_TRUE(wr.ok()) << wr.error();
  EXPECT_EQ(wr.tasks(0).bytes(), 2u << 20);
  v1::PhaseSpec r = Spec(v1::READ);
  r.set_verify(true);
  v1::PhaseResult rr = RunSpec(r, tmp.path());
  EXPECT_TRUE(rr.ok()) << rr.error();
}

// After a transfer phase each task reports its file's size (stat, once all
// of the agent's tasks closed it): what IOR's CheckFileSize compares with the
// layout. A read of a layout smaller than the files reads the layout alone
// and reports the files' real size.
TEST(FileSize, EachTaskReportsItsFilesSizeAfterThePhase) {
  TempDir tmp;
  v1::PhaseSpec w = Spec(v1::WRITE);
  v1::PhaseResult wr = RunSpec(w, tmp.path());
  ASSERT_TRUE(wr.ok()) << wr.error();
  ASSERT_EQ(wr.tasks_size(), 2);
  for (const v1::TaskResult& t : wr.tasks()) {
    ASSERT_TRUE(t.has_file_size_bytes()) << t.file();
    EXPECT_EQ(t.file_size_bytes(), 2u << 20) << t.file();
  }
  v1::PhaseSpec r = Spec(v1::READ);
  r.set_segments(1);
  v1::PhaseResult rr = RunSpec(r, tmp.path());
  ASSERT_TRUE(rr.ok()) << rr.error();
  for (const v1::TaskResult& t : rr.tasks()) {
    EXPECT_EQ(t.bytes(), 1u << 20) << t.file();
    EXPECT_EQ(t.file_size_bytes(), 2u << 20) << t.file();
  }
  // A shared file: both tasks see the one file, whole.
  TempDir shared;
  w.set_file_per_process(false);
  wr = RunSpec(w, shared.path());
  ASSERT_TRUE(wr.ok()) << wr.error();
  for (const v1::TaskResult& t : wr.tasks()) EXPECT_EQ(t.file_size_bytes(), 4u << 20);
}

TEST(VerifyAfterWrite, CatchesAByteCorruptedAfterTheWrite) {
  TempDir tmp;
  v1::PhaseSpec w = Spec(v1::WRITE);
  w.set_tasks(1);
  w.set_total_tasks(1);
  w.set_segments(1);
  w.set_transfer_bytes(1 << 20);
  w.set_block_bytes(64 << 20);
  w.set_verify_after_write(true);
  const std::string path = tmp / "f.00000000";
  const uint64_t bad = (64 << 20) - 1000;
  auto runner = PhaseRunner::Prepare(w, tmp.path());
  ASSERT_OK(runner);
  // Flip one byte near the end as soon as the writer has written it; the
  // untimed re-read starts at offset 0, so it reaches the byte afterwards.
  std::atomic<bool> flipped{false};
  std::thread corrupt([&] {
    const int64_t deadline = MonotonicNs() + 30'000'000'000;
    while (MonotonicNs() < deadline) {
      struct stat st;
      if (::stat(path.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_size) == (64u << 20)) {
        int fd = ::open(path.c_str(), O_RDWR);
        char c = 0;
        if (::pread(fd, &c, 1, bad) == 1) {
          c ^= 0x10;
          flipped = ::pwrite(fd, &c, 1, bad) == 1;
        }
        ::close(fd);
        return;
      }
    }
  });
  v1::PhaseResult res = RunNow(runner->get());
  corrupt.join();
  ASSERT_TRUE(flipped.load());
  EXPECT_FALSE(res.ok());
  EXPECT_TRUE(res.tasks(0).verify_failed());
  EXPECT_EQ(res.tasks(0).error_offset(), bad);
  EXPECT_THAT(res.error(), HasSubstr("verification after write failed"));
  EXPECT_THAT(res.error(), HasSubstr("f.00000000"));
  EXPECT_THAT(res.error(), HasSubstr(absl::StrFormat("data differs at offset %u", bad)));
  EXPECT_THAT(res.error(), HasSubstr("expected word 0x"));
}

TEST(Stonewall, WearOutEvensOutTheTasksPairs) {
  TempDir tmp;
  v1::PhaseSpec w = Spec(v1::WRITE);
  w.set_transfer_bytes(4096);
  w.set_block_bytes(32 << 20);
  w.set_segments(1);
  w.set_fsync_per_transfer(true);  // slow enough to reach the wall on a disk
  w.set_stonewall_seconds(1);
  w.set_stonewall_wear_out(true);
  v1::PhaseResult res = RunSpec(w, tmp.path());
  ASSERT_TRUE(res.ok()) << res.error();
  ASSERT_EQ(res.tasks_size(), 2);
  uint64_t most = std::max(res.tasks(0).stonewall_pairs(), res.tasks(1).stonewall_pairs());
  for (const auto& t : res.tasks()) {
    EXPECT_EQ(t.ops(), most) << "every task continues to the most pairs done";
    EXPECT_EQ(t.bytes(), most * 4096);
    if (!t.stonewall_hit()) {
      EXPECT_EQ(t.stonewall_pairs(), (32u << 20) / 4096);
    }
  }
}

TEST(Rewrite, ReadsModifiesAndWritesBackVerifiably) {
  TempDir tmp;
  ASSERT_TRUE(RunSpec(Spec(v1::WRITE), tmp.path()).ok());
  v1::PhaseSpec rw = Spec(v1::REWRITE);
  rw.set_verify(true);
  v1::PhaseResult res = RunSpec(rw, tmp.path());
  ASSERT_TRUE(res.ok()) << res.error();
  EXPECT_EQ(res.tasks(0).bytes(), 2u << 20);
  EXPECT_EQ(res.tasks(0).ops(), 32u);
  v1::PhaseSpec r = Spec(v1::READ);
  r.set_verify(true);
  EXPECT_TRUE(RunSpec(r, tmp.path()).ok());
  // A rewrite needs the file.
  std::filesystem::remove(tmp / "f.00000001");
  EXPECT_EQ(PhaseRunner::Prepare(rw, tmp.path()).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(IntraBarriers, RunWithTheAgentsTasks) {
  TempDir tmp;
  v1::PhaseSpec w = Spec(v1::WRITE);
  w.set_tasks(4);
  w.set_total_tasks(4);
  w.set_intra_barriers(true);
  v1::PhaseResult res = RunSpec(w, tmp.path());
  ASSERT_TRUE(res.ok()) << res.error();
  // Nobody starts transferring before everybody opened.
  int64_t max_open = 0, min_rdwr = INT64_MAX;
  for (const auto& t : res.tasks()) {
    max_open = std::max(max_open, t.open_stop_unix_ns());
    min_rdwr = std::min(min_rdwr, t.rdwr_start_unix_ns());
  }
  EXPECT_GE(min_rdwr, max_open);
}

TEST(SmallFiles, CreatesATreeOfVariedSizesAndReadsItBack) {
  TempDir tmp;
  v1::PhaseSpec s = Spec(v1::SMALL_FILES);
  s.set_small_files(250);
  s.set_small_file_min_bytes(100);
  s.set_small_file_max_bytes(20000);
  s.set_small_files_per_dir(100);
  v1::PhaseResult res = RunSpec(s, tmp.path());
  ASSERT_TRUE(res.ok()) << res.error();
  uint64_t expect = 0;
  std::set<uint64_t> sizes;
  for (uint64_t i = 0; i < 250; ++i) {
    uint64_t size = SmallFileSize(s, 1, i);
    EXPECT_GE(size, 96u);
    EXPECT_LE(size, 20000u);
    sizes.insert(size);
    expect += size;
  }
  EXPECT_GT(sizes.size(), 100u);
  EXPECT_EQ(res.tasks(1).ops(), 250u);
  EXPECT_EQ(res.tasks(1).bytes(), expect);
  EXPECT_EQ(res.tasks(1).readback_bytes(), expect);
  EXPECT_GE(res.tasks(1).readback_start_unix_ns(), res.tasks(1).rdwr_stop_unix_ns());
  EXPECT_EQ(std::filesystem::file_size(tmp / "f.small.00000001/d000002/f00000249"),
            SmallFileSize(s, 1, 249));
  ASSERT_OK(RemovePhaseFiles(s, tmp.path()));
  EXPECT_FALSE(std::filesystem::exists(tmp / "f.small.00000000"));
}

TEST(Mdtest, TreeSizeAndNames) {
  EXPECT_EQ(MdtestTreeDirs(1, 0), 1u);
  EXPECT_EQ(MdtestTreeDirs(1, 5), 6u);
  EXPECT_EQ(MdtestTreeDirs(2, 3), 15u);   // (2^4-1)/(2-1)
  EXPECT_EQ(MdtestTreeDirs(10, 2), 111u); // (10^3-1)/9
  EXPECT_EQ(MdtestTreeDirs(3, 0), 1u);
  EXPECT_EQ(MdtestLeafDirs(2, 3), 8u);
  EXPECT_EQ(MdtestLeafDirs(1, 3), 1u);
  auto paths = MdtestTreePaths("/r", "mdtest_tree.4", 2, 2);
  ASSERT_EQ(paths.size(), 7u);
  EXPECT_EQ(paths[0], "/r");
  EXPECT_EQ(paths[2], "/r/mdtest_tree.4.2");
  EXPECT_EQ(paths[5], "/r/mdtest_tree.4.2/mdtest_tree.4.5");
  EXPECT_EQ(MdtestTestDir("/d", 3), "/d/test-dir.3-0");
  EXPECT_EQ(MdtestTestDir("/d/", 0), "/d/test-dir.0-0");
  EXPECT_EQ(MdtestItemName(false, 1, 17), "file.mdtest.1.17");
  EXPECT_EQ(MdtestItemName(true, 0, 3), "dir.mdtest.0.3");
  // mdtest's rounding: -n 120 -b 2 -z 2: 17 per directory, 119 items.
  MdtestItems l = MdtestItemLayout(120, 0, 2, 2, false);
  EXPECT_EQ(l.per_dir, 17u);
  EXPECT_EQ(l.items, 119u);
  EXPECT_EQ(l.first, 0u);
  // -L: 4 leaves (directories 3..6), items numbered from 3 × per_dir.
  l = MdtestItemLayout(10, 0, 2, 2, true);
  EXPECT_EQ(l.per_dir, 2u);
  EXPECT_EQ(l.items, 8u);
  EXPECT_EQ(l.first, 6u);
  EXPECT_EQ(MdtestItemLayout(0, 5, 3, 1, false).items, 20u);  // -I 5 over 4 dirs
  EXPECT_EQ(MdtestItemLayout(3, 0, 2, 2, false).items, 0u);   // fewer items than dirs
}

TEST(Mdtest, NeighbourShiftPicksOwnerAndTreeAsMdtest) {
  v1::PhaseSpec s = Spec(v1::MDTEST);
  s.set_total_tasks(4);
  s.set_md_neighbor_shift(1);
  s.set_md_unique_dir(true);
  s.set_repetition(2);
  // create: own items in the next rank's tree; stat: rank+1's items in
  // rank+2's tree; read: rank+2's in rank+3's; remove: rank+3's in rank+4's.
  const std::pair<v1::MdtestOp, uint32_t> steps[] = {{v1::MD_FILE_CREATE, 0},
                                                     {v1::MD_FILE_STAT, 1},
                                                     {v1::MD_DIR_RENAME, 1},
                                                     {v1::MD_FILE_READ, 2},
                                                     {v1::MD_FILE_REMOVE, 3}};
  for (auto [op, k] : steps) {
    s.set_md_op(op);
    EXPECT_EQ(MdtestItemOwner(s, 3), (3 + k) % 4) << op;
    EXPECT_EQ(MdtestTaskTree("/d", s, 3).front(),
              absl::StrFormat("/d/test-dir.2-0/mdtest_tree.%u.0", (3 + k + 1) % 4))
        << op;
  }
  s.set_md_op(v1::MD_TREE_CREATE);
  EXPECT_EQ(MdtestItemOwner(s, 3), 3u);
  EXPECT_EQ(MdtestTaskTree("/d", s, 3).front(), "/d/test-dir.2-0/mdtest_tree.3.0");
  s.set_md_unique_dir(false);
  s.set_md_op(v1::MD_FILE_READ);
  EXPECT_EQ(MdtestTaskTree("/d", s, 3).front(), "/d/test-dir.2-0/mdtest_tree.0");
  EXPECT_TRUE(MdtestOwnsTree(s, 0));
  EXPECT_FALSE(MdtestOwnsTree(s, 3));
}

std::vector<std::string> Listing(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    out.push_back(std::filesystem::relative(e.path(), root).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Mdtest, EverySubPhaseForUniqueAndSharedTrees) {
  for (bool unique : {true, false}) {
    TempDir tmp;
    v1::PhaseSpec s = Spec(v1::MDTEST);
    s.set_md_branching(2);
    s.set_md_depth(1);
    s.set_md_items(30);
    s.set_md_unique_dir(unique);
    s.set_md_write_bytes(3000);
    s.set_md_read_bytes(3000);
    for (v1::MdtestOp op : {v1::MD_TREE_CREATE, v1::MD_DIR_CREATE, v1::MD_DIR_STAT,
                            v1::MD_DIR_RENAME, v1::MD_DIR_REMOVE, v1::MD_FILE_CREATE,
                            v1::MD_FILE_STAT, v1::MD_FILE_READ, v1::MD_FILE_REMOVE,
                            v1::MD_TREE_REMOVE}) {
      s.set_md_op(op);
      v1::PhaseResult res = RunSpec(s, tmp.path());
      ASSERT_TRUE(res.ok()) << "op " << op << ": " << res.error();
      uint64_t ops = res.tasks(0).ops() + res.tasks(1).ops();
      if (op == v1::MD_TREE_CREATE || op == v1::MD_TREE_REMOVE) {
        EXPECT_EQ(ops, unique ? 6u : 3u) << op;
      } else {
        EXPECT_EQ(ops, 60u) << op;
      }
      if (op == v1::MD_TREE_CREATE) {
        // mdtest's names: test-dir.0-0/mdtest_tree[.<rank>].0/...
        EXPECT_TRUE(std::filesystem::is_directory(
            tmp / (unique ? "test-dir.0-0/mdtest_tree.1.0/mdtest_tree.1.2"
                          : "test-dir.0-0/mdtest_tree.0/mdtest_tree.2")));
        EXPECT_TRUE(res.tasks(0).has_dir_fs());  // rank 0's statfs, for mdtest's FS line
        EXPECT_GT(res.tasks(0).dir_fs().blocks(), 0u);
      }
      if (op == v1::MD_FILE_CREATE) {
        EXPECT_EQ(res.tasks(0).bytes(), 30u * 3000);
        // 10 items per directory: item 17 of rank 1 in directory 1.
        const std::string item = unique
            ? "test-dir.0-0/mdtest_tree.1.0/mdtest_tree.1.1/file.mdtest.1.17"
            : "test-dir.0-0/mdtest_tree.0/mdtest_tree.1/file.mdtest.1.17";
        EXPECT_EQ(std::filesystem::file_size(tmp / item), 3000u);
      }
    }
    // tree_remove removed the iteration's test-dir too.
    EXPECT_TRUE(std::filesystem::is_empty(tmp.path())) << "unique=" << unique;
  }
}

// mdtest -X: a read checks each item against its owner's pattern; items of
// another run (another seed) fail with the file, as verification failures.
TEST(Mdtest, VerifiedReadCatchesDataOfAnotherRun) {
  TempDir tmp;
  v1::PhaseSpec s = Spec(v1::MDTEST);
  s.set_md_items(20);
  s.set_md_write_bytes(3901);
  s.set_md_read_bytes(3901);
  s.set_md_neighbor_shift(1);  // -N 1: read the other task's items
  for (v1::MdtestOp op : {v1::MD_TREE_CREATE, v1::MD_FILE_CREATE}) {
    s.set_md_op(op);
    ASSERT_TRUE(RunSpec(s, tmp.path()).ok()) << op;
  }
  s.set_md_op(v1::MD_FILE_READ);
  s.set_verify(true);
  v1::PhaseResult good = RunSpec(s, tmp.path());
  ASSERT_TRUE(good.ok()) << good.error();
  EXPECT_EQ(good.tasks(0).ops() + good.tasks(1).ops(), 40u);
  s.set_pattern_seed(s.pattern_seed() + 1);  // a later run reading stale items
  v1::PhaseResult stale = RunSpec(s, tmp.path());
  ASSERT_FALSE(stale.ok());
  EXPECT_THAT(stale.error(), HasSubstr("data differs from what mdtest -w wrote"));
  EXPECT_TRUE(stale.tasks(0).verify_failed() || stale.tasks(1).verify_failed());
}

// mdtest opens an item by name in a directory it holds (not OpenFile): a
// FIFO planted at an item fails that item at once instead of blocking the
// task in open(2) (the agent then could not abort or stop), and a hard link
// to a file outside is not written. A regression is released by opening the
// FIFO's other end after a deadline, and fails instead of hanging.
TEST(Mdtest, AFifoOrAHardLinkAtAnItemFailsItAndChangesNothingOutside) {
  TempDir tmp, outside;
  v1::PhaseSpec s = Spec(v1::MDTEST);
  s.set_md_items(4);
  s.set_md_write_bytes(100);
  s.set_md_read_bytes(100);
  for (v1::MdtestOp op : {v1::MD_TREE_CREATE, v1::MD_FILE_CREATE}) {
    s.set_md_op(op);
    ASSERT_TRUE(RunSpec(s, tmp.path()).ok()) << op;
  }
  std::vector<std::filesystem::path> items;
  for (const auto& e : std::filesystem::recursive_directory_iterator(tmp.path())) {
    if (e.is_regular_file()) items.push_back(e.path());
  }
  ASSERT_GE(items.size(), 2u);
  std::filesystem::remove(items[0]);
  ASSERT_EQ(::mkfifo(items[0].c_str(), 0666), 0);
  for (v1::MdtestOp op : {v1::MD_FILE_READ, v1::MD_FILE_CREATE}) {
    s.set_md_op(op);
    auto run = std::async(std::launch::async, [&] { return RunSpec(s, tmp.path()); });
    if (run.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
      const int other = ::open(items[0].c_str(), O_RDWR | O_NONBLOCK);
      run.wait();
      if (other >= 0) ::close(other);
      FAIL() << "mdtest blocked on a FIFO at an item, op " << op;
    }
    const v1::PhaseResult r = run.get();
    EXPECT_FALSE(r.ok()) << op;
    EXPECT_THAT(r.error(), HasSubstr("not a regular file")) << op;
  }
  std::filesystem::remove(items[0]);
  std::ofstream(outside / "victim") << "precious";
  std::filesystem::remove(items[1]);
  std::filesystem::create_hard_link(outside / "victim", items[1]);
  s.set_md_op(v1::MD_FILE_CREATE);
  const v1::PhaseResult linked = RunSpec(s, tmp.path());
  EXPECT_FALSE(linked.ok());
  EXPECT_THAT(linked.error(), HasSubstr("more than one name"));
  EXPECT_EQ(std::filesystem::file_size(outside / "victim"), 8u);
}

TEST(Mdtest, RenameChainsTheItemsAsMdtest) {
  TempDir tmp;
  v1::PhaseSpec s = Spec(v1::MDTEST);
  s.set_tasks(1);
  s.set_total_tasks(1);
  s.set_md_items(4);
  for (v1::MdtestOp op : {v1::MD_TREE_CREATE, v1::MD_DIR_CREATE}) {
    s.set_md_op(op);
    ASSERT_TRUE(RunSpec(s, tmp.path()).ok());
  }
  // Tag each directory with a file naming its original item.
  const std::string tree = tmp / "test-dir.0-0/mdtest_tree.0";
  for (int i = 0; i < 4; ++i) {
    std::ofstream(absl::StrFormat("%s/dir.mdtest.0.%d/was", tree, i)) << i;
  }
  s.set_md_op(v1::MD_DIR_RENAME);
  v1::PhaseResult res = RunSpec(s, tmp.path());
  ASSERT_TRUE(res.ok()) << res.error();
  EXPECT_EQ(res.tasks(0).ops(), 4u);  // 0→0-XX, 1→0, 2→1, 0-XX→2
  auto was = [&](int i) {
    std::ifstream f(absl::StrFormat("%s/dir.mdtest.0.%d/was", tree, i));
    std::string v;
    f >> v;
    return v;
  };
  EXPECT_EQ(was(0), "1");
  EXPECT_EQ(was(1), "2");
  EXPECT_EQ(was(2), "0");
  EXPECT_EQ(was(3), "3");  // the last item keeps its name
  EXPECT_FALSE(std::filesystem::exists(tree + "/dir.mdtest.0.0-XX"));
}

TEST(Mdtest, LeafOnlyItemsLiveInTheLeaves) {
  TempDir tmp;
  v1::PhaseSpec s = Spec(v1::MDTEST);
  s.set_tasks(1);
  s.set_total_tasks(1);
  s.set_md_branching(2);
  s.set_md_depth(1);
  s.set_md_items(4);  // 2 leaves × 2
  s.set_md_leaf_only(true);
  for (v1::MdtestOp op : {v1::MD_TREE_CREATE, v1::MD_FILE_CREATE}) {
    s.set_md_op(op);
    ASSERT_TRUE(RunSpec(s, tmp.path()).ok());
  }
  EXPECT_EQ(Listing(tmp.path()),
            (std::vector<std::string>{
                "test-dir.0-0", "test-dir.0-0/mdtest_tree.0",
                "test-dir.0-0/mdtest_tree.0/mdtest_tree.1",
                "test-dir.0-0/mdtest_tree.0/mdtest_tree.1/file.mdtest.0.2",
                "test-dir.0-0/mdtest_tree.0/mdtest_tree.1/file.mdtest.0.3",
                "test-dir.0-0/mdtest_tree.0/mdtest_tree.2",
                "test-dir.0-0/mdtest_tree.0/mdtest_tree.2/file.mdtest.0.4",
                "test-dir.0-0/mdtest_tree.0/mdtest_tree.2/file.mdtest.0.5"}));
  for (v1::MdtestOp op : {v1::MD_FILE_STAT, v1::MD_FILE_READ, v1::MD_FILE_REMOVE,
                          v1::MD_TREE_REMOVE}) {
    s.set_md_op(op);
    v1::PhaseResult res = RunSpec(s, tmp.path());
    ASSERT_TRUE(res.ok()) << op << ": " << res.error();
  }
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
}

TEST(Mdtest, NeighbourShiftStatsAnotherRanksItems) {
  TempDir tmp;
  v1::PhaseSpec s = Spec(v1::MDTEST);
  s.set_md_items(5);
  s.set_md_unique_dir(true);
  s.set_md_neighbor_shift(1);
  for (v1::MdtestOp op : {v1::MD_TREE_CREATE, v1::MD_FILE_CREATE}) {
    s.set_md_op(op);
    ASSERT_TRUE(RunSpec(s, tmp.path()).ok());
  }
  // Rank 0's files went into rank 1's tree, as mdtest -u -N 1 puts them.
  EXPECT_TRUE(std::filesystem::exists(tmp / "test-dir.0-0/mdtest_tree.1.0/file.mdtest.0.4"));
  EXPECT_TRUE(std::filesystem::exists(tmp / "test-dir.0-0/mdtest_tree.0.0/file.mdtest.1.4"));
  // A stat without the shift would look for rank 0's files in its own tree.
  s.set_md_op(v1::MD_FILE_STAT);
  v1::PhaseResult shifted = RunSpec(s, tmp.path());
  EXPECT_TRUE(shifted.ok()) << shifted.error();
  s.set_md_neighbor_shift(0);
  v1::PhaseResult own = RunSpec(s, tmp.path());
  EXPECT_FALSE(own.ok());
  EXPECT_THAT(own.error(), HasSubstr("cannot stat"));
  s.set_md_neighbor_shift(1);
  for (v1::MdtestOp op : {v1::MD_FILE_READ, v1::MD_FILE_REMOVE, v1::MD_TREE_REMOVE}) {
    s.set_md_op(op);
    ASSERT_TRUE(RunSpec(s, tmp.path()).ok()) << op;
  }
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
}

TEST(Mdtest, RemovePhaseFilesTakesTheTreesAndTheTestDir) {
  TempDir tmp;
  v1::PhaseSpec s = Spec(v1::MDTEST);
  s.set_md_items(6);
  s.set_md_unique_dir(true);
  for (v1::MdtestOp op : {v1::MD_TREE_CREATE, v1::MD_FILE_CREATE}) {
    s.set_md_op(op);
    ASSERT_TRUE(RunSpec(s, tmp.path()).ok());
  }
  auto removed = RemovePhaseFiles(s, tmp.path());
  ASSERT_OK(removed);
  EXPECT_EQ(*removed, 2u);
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// IOzone's Min xfer: each task records the bytes it had moved when the
// agent's first task ended. Task 1 has moved one transfer when task 0
// ends: task 0 waits before its second transfer until task 1 has done its
// first, and task 1 waits before its second until task 0 has ended (the
// hook after its end is noted). Task 0 counts all of its own. (Task 1 once
// waited only for task 0's file to be whole: task 0 could be descheduled
// between its last write and its end, and task 1 end first.)
TEST(FirstDone, EachTaskCountsItsBytesAtTheFirstEnd) {
  TempDir tmp;
  v1::PhaseSpec s = Spec(v1::WRITE);
  s.set_segments(1);
  s.set_block_bytes(8 << 20);
  absl::Notification task1_second, task0_done;
  RunnerOptions options;
  options.test_on_done = [&](uint32_t index) {
    if (index == 0) task0_done.Notify();
  };
  options.test_on_issue = [&](uint32_t index, uint64_t op, int64_t) {
    if (op != 1) return;
    if (index == 0) task1_second.WaitForNotificationWithTimeout(absl::Seconds(30));
    if (index != 1) return;
    task1_second.Notify();
    task0_done.WaitForNotificationWithTimeout(absl::Seconds(30));
  };
  auto runner = PhaseRunner::Prepare(s, tmp.path(), options);
  ASSERT_OK(runner);
  v1::PhaseResult r = RunNow(runner->get());
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r.tasks_size(), 2);
  const v1::TaskResult& t0 = r.tasks(0).rank() == 0 ? r.tasks(0) : r.tasks(1);
  const v1::TaskResult& t1 = r.tasks(0).rank() == 0 ? r.tasks(1) : r.tasks(0);
  EXPECT_EQ(t0.bytes(), 8u << 20);
  EXPECT_EQ(t0.bytes_at_first_done(), t0.bytes());
  EXPECT_EQ(t1.bytes(), 8u << 20);
  EXPECT_EQ(t1.bytes_at_first_done(), 64u << 10);  // its first transfer, before the wait
}

}  // namespace
}  // namespace lockstep
