// End to end: IO500's find as a plan phase over a tree mdtest made in a
// directory all agents share (2 agents × 2 tasks), checked against a plain
// single-process walk; mdtest -W on local agents.
#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct Counts {
  uint64_t scanned = 0;
  uint64_t matched = 0;
};

// find DIR -newer (an instant) -size 3901c -name '*01*', non-directories counted.
Counts PlainFind(const std::string& dir, int64_t newer_unix_ns) {
  Counts out;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_directory() && !e.is_symlink()) continue;
    struct stat st;
    EXPECT_EQ(::lstat(e.path().c_str(), &st), 0) << e.path();
    ++out.scanned;
    const int64_t mtime_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
    if (mtime_ns > newer_unix_ns && st.st_size == 3901 &&
        ::fnmatch("*01*", e.path().filename().c_str(), 0) == 0) {
      ++out.matched;
    }
  }
  return out;
}

PlanPhase Mdtest(const std::string& name, const std::string& op, const std::string& dir,
                 int items, int size) {
  PlanPhase p(name, "mdtest");
  p.Set("dir", dir).Set("md_op", op).Set("md_items", items).Set("md_unique_dir", true);
  p.Set("tasks_per_agent", 2).Set("keep", true);
  if (size > 0) p.Set("md_write_size", size);
  return p;
}

TEST(Find, AgentsSharesAddUpToAPlainWalk) {
  TestCluster cluster;
  const std::string shared = cluster.MakeDir("shared");
  const AgentSpec spec{.flags = {"--root", shared}};
  ASSERT_OK(cluster.Start({.agents = {spec, spec}}));
  // Old files of the right size and name, then the reference phase, then new
  // files of the right size and of another size: only the new ones of 3901
  // bytes named *01* match.
  PlanBuilder plan = cluster.Plan();
  plan.AddPhase(Mdtest("old_tree", "tree_create", shared + "/old", 0, 0))
      .AddPhase(Mdtest("old_files", "file_create", shared + "/old", 150, 3901))
      .AddPhase(Mdtest("mark", "tree_create", shared + "/new", 0, 0))
      .AddPhase(Mdtest("new_files", "file_create", shared + "/new", 300, 3901))
      .AddPhase(Mdtest("small_tree", "tree_create", shared + "/small", 0, 0))
      .AddPhase(Mdtest("small_files", "file_create", shared + "/small", 120, 100))
      .AddPhase(PlanPhase("find", "find")
                    .Set("dir", shared)
                    .Set("tasks_per_agent", 2)
                    .Set("find_newer_than", "mark")
                    .Set("find_size", "3901")
                    .Set("find_name", "*01*"));
  RunResult r = cluster.Run(cluster.WritePlan(plan));
  ASSERT_EQ(r.exit_code, 0) << r.Output();
  v1::RunRecord rec = r.Record();
  ASSERT_EQ(rec.tests_size(), 1);
  int64_t mark_ns = 0;
  const v1::PhaseRecord* find = nullptr;
  for (const v1::PhaseRecord& p : rec.tests(0).phases()) {
    ASSERT_TRUE(p.ok()) << p.phase() << ": " << p.error();
    if (p.phase() == "mark") mark_ns = p.start_at_unix_ns();
    if (p.phase() == "find") find = &p;
  }
  ASSERT_NE(find, nullptr);
  ASSERT_GT(mark_ns, 0);
  EXPECT_EQ(find->spec().find_newer_unix_ns(), mark_ns);  // the record keeps the controller's clock

  Counts got;
  ASSERT_EQ(find->agents_size(), 2);
  for (const v1::AgentPhaseRecord& a : find->agents()) {
    ASSERT_EQ(a.tasks_size(), 2);
    for (const v1::TaskResult& t : a.tasks()) {
      EXPECT_GT(t.ops(), 0u) << "rank " << t.rank() << " scanned nothing";
      got.scanned += t.ops();
      got.matched += t.items_matched();
    }
  }
  const Counts want = PlainFind(shared, mark_ns);
  EXPECT_EQ(want.scanned, 4u * (150 + 300 + 120));  // 4 ranks' items of every create
  EXPECT_EQ(got.scanned, want.scanned);
  EXPECT_EQ(got.matched, want.matched);
  EXPECT_GT(want.matched, 0u);
  // Only new files of 3901 bytes: file.mdtest.<rank>.<n> with "01" in it.
  uint64_t expected = 0;
  for (int rank = 0; rank < 4; ++rank) {
    for (int n = 0; n < 300; ++n) {
      expected += absl::StrFormat("file.mdtest.%d.%d", rank, n).find("01") != std::string::npos;
    }
  }
  EXPECT_EQ(want.matched, expected);
  EXPECT_EQ(find->md_items(), want.scanned);
  EXPECT_GT(find->md_rate(), 0);
  EXPECT_THAT(r.out, HasSubstr(absl::StrFormat("# find: %u files scanned, %u found", want.scanned,
                                               want.matched)));
}

// mdtest -W: the creates stop at the wall and every task ends with the same
// count; mdtest's "Continue stonewall hit" line says so.
TEST(Find, MdtestStonewallEndsEveryTaskWithTheSameCount) {
  TestCluster tmp;  // no agents: mdtest starts its own
  fs::create_directories(tmp / "md");
  // -T and -r after -W: the stat and remove work on the agreed count (the
  // controller hands it on), not on the 50,000,000 items of -n.
  RunResult r = tmp.Lockstep({"mdtest", "-n", "50000000", "-u", "-F", "-C", "-T", "-r", "-W",
                              "1", "-d", tmp / "md", "--tasks", "2", "--local", "2", "--out",
                              tmp.results_dir()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Continue stonewall hit min: "));
  v1::RunRecord rec = r.Record();
  bool seen = false;
  uint64_t agreed = 0;
  for (const v1::PhaseRecord& p : rec.tests(0).phases()) {
    ASSERT_TRUE(p.ok()) << p.error();
    if (p.spec().md_op() != v1::MD_FILE_CREATE) continue;
    seen = true;
    EXPECT_EQ(p.spec().md_stonewall_seconds(), 1u);
    uint64_t most = 0;
    std::vector<uint64_t> ops;
    for (const v1::AgentPhaseRecord& a : p.agents()) {
      for (const v1::TaskResult& t : a.tasks()) {
        EXPECT_TRUE(t.stonewall_hit());
        most = std::max(most, t.stonewall_pairs());
        ops.push_back(t.ops());
      }
    }
    ASSERT_EQ(ops.size(), 2u);
    for (uint64_t n : ops) EXPECT_EQ(n, most);
    EXPECT_TRUE(p.has_stonewall());
    EXPECT_EQ(p.stonewall().pairs_max(), most);
    EXPECT_EQ(p.md_items(), 2 * most);
    agreed = most;
  }
  for (const v1::PhaseRecord& p : rec.tests(0).phases()) {
    if (p.spec().md_op() != v1::MD_FILE_STAT && p.spec().md_op() != v1::MD_FILE_REMOVE) continue;
    EXPECT_EQ(p.spec().stonewall_count(), agreed) << p.phase_id();
    for (const v1::AgentPhaseRecord& a : p.agents()) {
      for (const v1::TaskResult& t : a.tasks()) EXPECT_EQ(t.ops(), agreed) << p.phase_id();
    }
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace lockstep::testing
