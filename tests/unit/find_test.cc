// The FIND kind (agent/workloads/find.h): the matcher, the split of the
// entries between tasks, and whole scans by several "agents" (one phase
// runner per rank range) checked against a plain walk; mdtest -W on the agent
// side (the wall, the wear-out to the same count, a handed-on count).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fnmatch.h>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "agent/phase_runner.h"
#include "agent/workloads/find.h"
#include "common/clock.h"
#include "common/mdtest_layout.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "unit/run_phase.h"

namespace lockstep {
namespace {

using testing::RunNow;
using testing::RunSpec;

namespace fs = std::filesystem;
using testing::TempDir;

constexpr int64_t kSecondNs = 1'000'000'000;

TEST(FindMatches, EachCriterionAsFindDoes) {
  FindCriteria any;
  EXPECT_TRUE(FindMatches(any, "x", 0, 0));
  FindCriteria c{.newer_unix_ns = 100, .match_size = true, .size_bytes = 3901, .name_glob = "*01*"};
  EXPECT_TRUE(FindMatches(c, "file.mdtest.3.101", 101, 3901));
  EXPECT_FALSE(FindMatches(c, "file.mdtest.3.101", 100, 3901));  // -newer is strict
  EXPECT_FALSE(FindMatches(c, "file.mdtest.3.101", 101, 3900));  // -size 3901c exactly
  EXPECT_FALSE(FindMatches(c, "file.mdtest.3.111", 101, 3901));  // -name
  FindCriteria empty_size{.match_size = true, .size_bytes = 0};
  EXPECT_TRUE(FindMatches(empty_size, "e", 5, 0));
  EXPECT_FALSE(FindMatches(empty_size, "e", 5, 1));
  FindCriteria dot{.name_glob = "*"};
  EXPECT_TRUE(FindMatches(dot, ".hidden", 0, 0));  // find -name '*' matches dot files
}

TEST(FindOwns, EveryPathHasExactlyOneOwnerAndOneHugeDirectoryIsShared) {
  for (uint32_t total : {1u, 2u, 3u, 4u, 7u, 64u}) {
    std::vector<uint64_t> per_rank(total, 0);
    for (int i = 0; i < 20000; ++i) {
      // One directory, mdtest-hard's names: the split is by entry, not by directory.
      const std::string path = absl::StrFormat("test-dir.0-0/mdtest_tree.0/file.mdtest.%d.%d",
                                               i % 4, i);
      int owners = 0;
      for (uint32_t rank = 0; rank < total; ++rank) {
        if (FindOwns(path, rank, total)) {
          ++owners;
          ++per_rank[rank];
        }
      }
      ASSERT_EQ(owners, 1) << path << " of " << total;
    }
    const double fair = 20000.0 / total;
    for (uint32_t rank = 0; rank < total; ++rank) {
      EXPECT_GT(per_rank[rank], fair * 0.8) << rank << " of " << total;
      EXPECT_LT(per_rank[rank], fair * 1.2) << rank << " of " << total;
    }
  }
}

void WriteFile(const std::string& path, size_t bytes, int64_t mtime_unix_ns) {
  std::ofstream(path) << std::string(bytes, 'x');
  const struct timespec ts[2] = {{mtime_unix_ns / kSecondNs, mtime_unix_ns % kSecondNs},
                                 {mtime_unix_ns / kSecondNs, mtime_unix_ns % kSecondNs}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), ts, 0), 0) << path;
}

struct Counts {
  uint64_t scanned = 0;
  uint64_t matched = 0;
};

// The reference: one process, std::filesystem, symlinks not followed.
Counts PlainWalk(const std::string& dir, const FindCriteria& c) {
  Counts out;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_directory() && !e.is_symlink()) continue;
    struct stat st;
    EXPECT_EQ(::lstat(e.path().c_str(), &st), 0);
    ++out.scanned;
    const int64_t mtime_ns = int64_t{st.st_mtim.tv_sec} * kSecondNs + st.st_mtim.tv_nsec;
    const bool newer = c.newer_unix_ns == 0 || mtime_ns > c.newer_unix_ns;
    const bool size = !c.match_size || static_cast<uint64_t>(st.st_size) == c.size_bytes;
    const bool name =
        c.name_glob.empty() || ::fnmatch(c.name_glob.c_str(), e.path().filename().c_str(), 0) == 0;
    if (newer && size && name) ++out.matched;
  }
  return out;
}

// A tree with one huge directory, a deep branch, an empty directory, a
// symlink to a directory (not followed) and files old and new, of 3901
// bytes or not, with "01" in the name or not.
int64_t MakeTree(const std::string& root) {
  const int64_t reference_ns = RealtimeNs() - 100 * kSecondNs;
  fs::create_directories(root + "/huge");
  fs::create_directories(root + "/a/b/c/d");
  fs::create_directories(root + "/empty");
  for (int i = 0; i < 3000; ++i) {
    const int64_t mtime = reference_ns + (i % 3 == 0 ? -kSecondNs : kSecondNs);
    WriteFile(absl::StrFormat("%s/huge/file.mdtest.%d.%d", root, i % 4, i), i % 2 ? 3901 : 10,
              mtime);
  }
  for (int i = 0; i < 40; ++i) {
    WriteFile(absl::StrFormat("%s/a/b/c/d/f%03d", root, i), 3901, reference_ns + 1);
    WriteFile(absl::StrFormat("%s/a/g%03d", root, i), 3901, reference_ns);  // not newer
  }
  fs::create_directory_symlink(root + "/a", root + "/link");
  return reference_ns;
}

// Runs a FIND over `dir` as `agents` agents of `tasks` tasks each.
Counts ParallelFind(const std::string& dir, const FindCriteria& c, uint32_t agents,
                    uint32_t tasks) {
  Counts out;
  for (uint32_t a = 0; a < agents; ++a) {
    v1::PhaseSpec s;
    s.set_phase_id("t0/r0/find");
    s.set_kind(v1::FIND);
    s.set_file_name("f");
    s.set_tasks(tasks);
    s.set_total_tasks(tasks * agents);
    s.set_first_rank(a * tasks);
    s.set_find_newer_unix_ns(c.newer_unix_ns);
    s.set_find_match_size(c.match_size);
    s.set_find_size_bytes(c.size_bytes);
    s.set_find_name_glob(c.name_glob);
    v1::PhaseResult r = RunSpec(s, dir);
    EXPECT_TRUE(r.ok()) << r.error();
    for (const v1::TaskResult& t : r.tasks()) {
      EXPECT_GT(t.rdwr_stop_unix_ns(), 0);
      EXPECT_GE(t.rdwr_stop_unix_ns(), t.rdwr_start_unix_ns());
      out.scanned += t.ops();
      out.matched += t.items_matched();
    }
  }
  return out;
}

TEST(FindWorkload, SharesOfAllTasksAddUpToAPlainWalk) {
  TempDir tmp;
  const std::string root = tmp.path() + "/tree";
  const int64_t reference_ns = MakeTree(root);
  const std::vector<FindCriteria> criteria = {
      {},
      {.newer_unix_ns = reference_ns, .match_size = true, .size_bytes = 3901, .name_glob = "*01*"},
      {.newer_unix_ns = reference_ns},
      {.name_glob = "f0*"},
  };
  for (const FindCriteria& c : criteria) {
    const Counts want = PlainWalk(root, c);
    ASSERT_GT(want.scanned, 3000u);
    const std::vector<std::pair<uint32_t, uint32_t>> shapes = {{1, 1}, {2, 2}, {3, 1}};
    for (auto [agents, tasks] : shapes) {
      const Counts got = ParallelFind(root, c, agents, tasks);
      EXPECT_EQ(got.scanned, want.scanned) << agents << "x" << tasks << " " << c.name_glob;
      EXPECT_EQ(got.matched, want.matched) << agents << "x" << tasks << " " << c.name_glob;
    }
  }
  // The IO500 criteria match some files and not others.
  const Counts io500 = PlainWalk(root, criteria[1]);
  EXPECT_GT(io500.matched, 0u);
  EXPECT_LT(io500.matched, io500.scanned);
}

TEST(FindWorkload, AMissingDirectoryIsAnErrorNotZeroFiles) {
  TempDir tmp;
  v1::PhaseSpec s;
  s.set_phase_id("t0/r0/find");
  s.set_kind(v1::FIND);
  s.set_file_name("f");
  s.set_tasks(1);
  s.set_total_tasks(1);
  auto r = PhaseRunner::Prepare(s, tmp.path() + "/missing");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("cannot search"));
}

v1::PhaseSpec MdSpec(v1::MdtestOp op, uint64_t items, uint32_t tasks) {
  v1::PhaseSpec s;
  s.set_phase_id("t0/r0/md");
  s.set_kind(v1::MDTEST);
  s.set_file_name("mdtest");
  s.set_tasks(tasks);
  s.set_total_tasks(tasks);
  s.set_md_op(op);
  s.set_md_items(items);
  s.set_md_unique_dir(true);
  s.set_md_branching(1);
  return s;
}

// mdtest -W: every task stops at the wall and then all continue to the most
// any task made; the count goes on to a stat that works on exactly that many.
TEST(MdtestStonewall, TasksStopAtTheWallAndEndWithTheSameCount) {
  TempDir tmp;
  ASSERT_TRUE(RunSpec(MdSpec(v1::MD_TREE_CREATE, 0, 3), tmp.path()).ok());
  v1::PhaseSpec create = MdSpec(v1::MD_FILE_CREATE, uint64_t{1} << 30, 3);
  create.set_md_stonewall_seconds(1);
  const int64_t t0 = MonotonicNs();
  v1::PhaseResult res = RunSpec(create, tmp.path());
  ASSERT_TRUE(res.ok()) << res.error();
  EXPECT_LT(MonotonicNs() - t0, 30 * kSecondNs);
  uint64_t most = 0;
  for (const v1::TaskResult& t : res.tasks()) {
    EXPECT_TRUE(t.stonewall_hit()) << t.rank();
    EXPECT_GT(t.stonewall_pairs(), 0u);
    EXPECT_GE(t.stonewall_duration_ns(), kSecondNs);
    most = std::max(most, t.stonewall_pairs());
  }
  for (const v1::TaskResult& t : res.tasks()) EXPECT_EQ(t.ops(), most) << t.rank();
  // Exactly `most` files per task on disk.
  uint64_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(tmp.path())) files += e.is_regular_file();
  EXPECT_EQ(files, 3 * most);

  v1::PhaseSpec stat = MdSpec(v1::MD_FILE_STAT, uint64_t{1} << 30, 3);
  stat.set_stonewall_count(most);
  v1::PhaseResult st = RunSpec(stat, tmp.path());
  ASSERT_TRUE(st.ok()) << st.error();
  for (const v1::TaskResult& t : st.tasks()) EXPECT_EQ(t.ops(), most);
}

TEST(MdtestStonewall, AWallNotReachedChangesNothing) {
  TempDir tmp;
  ASSERT_TRUE(RunSpec(MdSpec(v1::MD_TREE_CREATE, 0, 2), tmp.path()).ok());
  v1::PhaseSpec create = MdSpec(v1::MD_DIR_CREATE, 50, 2);
  create.set_md_stonewall_seconds(60);
  v1::PhaseResult res = RunSpec(create, tmp.path());
  ASSERT_TRUE(res.ok()) << res.error();
  for (const v1::TaskResult& t : res.tasks()) {
    EXPECT_FALSE(t.stonewall_hit());
    EXPECT_EQ(t.stonewall_pairs(), 50u);
    EXPECT_EQ(t.ops(), 50u);
  }
}

}  // namespace
}  // namespace lockstep
