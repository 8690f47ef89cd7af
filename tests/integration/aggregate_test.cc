// End to end: total_size, an aggregate split over the tasks of each test of
// a sweep (the seed 001 report's "2 TB divided equally among the threads").
#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/process_util.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string WritePlan(const TestCluster& tmp, const std::string& tasks) {
  const std::string path = tmp / "aggregate.toml";
  std::filesystem::create_directories(tmp / "agg");
  std::ofstream(path) << "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"" << (tmp / "agg")
                      << "\"\n"
                         "file_per_process = true\ntransfer_size = \"64k\"\n"
                         "total_size = \"3m\"\ntasks_per_agent = "
                      << tasks << "\n";
  return path;
}

TEST(Aggregate, EachTestSplitsTheTotalOverItsTasks) {
  TestCluster tmp;  // no agents: --local
  RunResult r = tmp.Lockstep({"run", "--local", "2", "--out", tmp.results_dir(),
                              WritePlan(tmp, "[1, 2]")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // Test 0: 2 tasks, 1.5 MiB each; test 1: 4 tasks, 768 KiB each. Neither rounds.
  EXPECT_THAT(r.out, Not(HasSubstr("not moved")));
  v1::RunRecord rec = r.Record();
  ASSERT_EQ(rec.tests_size(), 2);
  const uint64_t want[] = {3u << 19, 3u << 18};
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(rec.tests(t).phases(0).spec().block_bytes(), want[t]) << "test " << t;
    EXPECT_EQ(rec.tests(t).phases(0).row().bytes(), 3u << 20) << "test " << t;
  }
  // Three tasks an agent: 6 tasks, 512 KiB each; five: 10 tasks, 307.2 KiB
  // rounded down to 256 KiB (4 transfers), 512 KiB not moved, and said.
  RunResult odd = tmp.Lockstep({"run", "--local", "2", "--out", tmp.results_dir(),
                                WritePlan(tmp, "[3, 5]")});
  ASSERT_EQ(odd.exit_code, 0) << odd.out << odd.err;
  EXPECT_THAT(odd.out, HasSubstr("# phase 'w' test 1: total_size 3 MiB over 10 tasks: block "
                                 "256 KiB each, 524288 bytes (512 KiB) not moved"));
  EXPECT_EQ(odd.Record().tests(1).phases(0).row().bytes(), 10u * (256u << 10));
}

TEST(Aggregate, TooSmallForTheTasksIsRefusedBeforeAnyTest) {
  TestCluster tmp;
  // Test 1: 2 agents x 32 tasks x 64 KiB = 4 MiB > 3 MiB.
  RunResult r = tmp.Lockstep({"run", "--local", "2", "--out", tmp.results_dir(),
                              WritePlan(tmp, "[1, 32]")});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("phase 'w' test 1: total_size 3 MiB is smaller than 64 tasks x "
                               "transfer_size 64 KiB (4 MiB)"));
  EXPECT_THAT(r.err, HasSubstr("raise total_size to 4 MiB or more"));
  EXPECT_EQ(r.Record().tests_size(), 0);  // nothing ran
}

}  // namespace
}  // namespace lockstep::testing
