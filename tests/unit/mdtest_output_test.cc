// mdtest's text: header lines, SUMMARY tables and their statistics, against
// the layout of real mdtest 4.1 output.
#include "controller/mdtest/mdtest_output.h"

#include "absl/strings/str_split.h"
#include "controller/mdtest/mdtest_cli.h"
#include "controller/plan/phase_kind.h"
#include "controller/record/phase_reduce.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "controller/plan/kinds/mdtest_plan.h"

namespace lockstep {
namespace {

TEST(MdtestOutput, SampleStandardDeviation) {
  SampleStats s = SampleStatistics({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_NEAR(s.sd, 1.2909944487, 1e-9);  // sqrt(5/3): ÷ (n−1), not ÷ n
  EXPECT_DOUBLE_EQ(SampleStatistics({7}).sd, 0.0);
  EXPECT_DOUBLE_EQ(SampleStatistics({}).max, 0.0);
}

TEST(MdtestOutput, RateIsItemsOverTheSlowestWindow) {
  v1::PhaseSpec spec;
  spec.set_kind(v1::MDTEST);
  spec.set_md_op(v1::MD_FILE_CREATE);
  v1::TaskResult a, b;
  a.set_rdwr_start_unix_ns(1'000'000'000);
  a.set_rdwr_stop_unix_ns(1'500'000'000);
  a.set_ops(1000);
  b.set_rdwr_start_unix_ns(1'000'100'000);
  b.set_rdwr_stop_unix_ns(3'000'000'000);  // the slowest: 2 s after the first start
  b.set_ops(1000);
  v1::PhaseRecord pr;
  ReducePhase({&a, &b}, spec, 0, &pr);
  EXPECT_EQ(pr.md_items(), 2000u);
  EXPECT_DOUBLE_EQ(pr.md_rate(), 1000.0);
  EXPECT_EQ(pr.row().access(), "file_create");
  EXPECT_DOUBLE_EQ(pr.row().total_s(), 2.0);
}

TEST(MdtestOutput, TreeRatesCountOneTreeAsMdtestDoes) {
  // -u: each of the 2 tasks made a tree of 7 directories; mdtest's rate is
  // one tree's directories over the time.
  v1::PhaseSpec spec;
  spec.set_kind(v1::MDTEST);
  spec.set_md_op(v1::MD_TREE_CREATE);
  spec.set_md_branching(2);
  spec.set_md_depth(2);
  v1::TaskResult a, b;
  a.set_rdwr_start_unix_ns(0);
  a.set_rdwr_stop_unix_ns(500'000'000);
  a.set_ops(7);
  b.set_rdwr_start_unix_ns(0);
  b.set_rdwr_stop_unix_ns(1'000'000'000);
  b.set_ops(7);
  v1::PhaseRecord pr;
  ReducePhase({&a, &b}, spec, 0, &pr);
  EXPECT_EQ(pr.md_items(), 7u);
  EXPECT_DOUBLE_EQ(pr.md_rate(), 7.0);
}

// The header of mdtest-easy-like (golden: mdtest -n 200 -u -L -F -P -N 1 -d
// /data/md, 2 ranks), with its statfs figures.
TEST(MdtestOutput, HeaderAsMdtestPrintsIt) {
  MdtestCommandInfo info;
  auto cmd = ParseMdtestCommandLine(
      absl::StrSplit("-n 200 -u -L -F -P -N 1 -d /data/md --local 1 --tasks 2", ' '),
      [](const std::string&) { return absl::NotFoundError("none"); }, &info);
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  v1::FsStats fs;
  fs.set_block_bytes(4096);
  fs.set_blocks(6160384);       // 23.5 GiB
  fs.set_blocks_free(6160000);  // 0.0 % used
  fs.set_files(3040000);        // 2.9 Mi
  fs.set_files_free(3039990);
  EXPECT_EQ(FormatMdtestHeader(info, "11/30/2026 16:49:07", fs),
            "-- started at 11/30/2026 16:49:07 --\n"
            "\n"
            "mdtest-4.1.0+dev was launched with 2 total task(s) on 1 node(s)\n"
            "Command line used: mdtest '-n' '200' '-u' '-L' '-F' '-P' '-N' '1' '-d' '/data/md'\n"
            "WARNING: Read bytes is 0, thus, a read test will actually just open/close\n"
            "Nodemap: 11\n"
            "Path                : /data/md\n"
            "FS                  : 23.5 GiB   Used FS: 0.0%   Inodes: 2.9 Mi   Used Inodes: 0.0%\n"
            "V-0: Rank   0 Line  2594 Shifting ranks by 1 for each phase.\n"
            "2 tasks, 400 files\n");
  EXPECT_TRUE(info.print_rate && info.print_time);

  // Two agents of two tasks each: the node map marks agent 0's ranks, -N
  // shifts by a node's tasks, -e/-w: no warning; files and directories.
  auto two = ParseMdtestCommandLine(
      absl::StrSplit("-n 10 -N 1 -w 8 -e 8 --agents a:1,b:2 --tasks 4", ' '),
      [](const std::string&) { return absl::NotFoundError("none"); }, &info);
  ASSERT_TRUE(two.ok()) << two.status();
  std::string h = FormatMdtestHeader(info, "x", std::nullopt);
  EXPECT_NE(h.find("launched with 4 total task(s) on 2 node(s)\n"), std::string::npos) << h;
  EXPECT_NE(h.find("Nodemap: 1100\n"), std::string::npos) << h;
  EXPECT_NE(h.find("Shifting ranks by 2 for each phase.\n"), std::string::npos) << h;
  EXPECT_NE(h.find("WARNING: Backend returned error during statfs\n"), std::string::npos) << h;
  EXPECT_EQ(h.find("Read bytes is 0"), std::string::npos) << h;
  EXPECT_NE(h.find("4 tasks, 40 files/directories\n"), std::string::npos) << h;
  EXPECT_EQ(two->plan.phases.front().Own<MdtestPlan>().md_neighbor_shift, 2u);
}

TEST(MdtestOutput, FsLineUnits) {
  v1::FsStats fs;
  fs.set_block_bytes(1 << 20);
  fs.set_blocks(3u << 20);  // 3 TiB
  fs.set_blocks_free(3u << 19);
  fs.set_files(1 << 20);
  fs.set_files_free(1 << 18);
  EXPECT_EQ(FormatMdtestFsLine(fs),
            "FS                  : 3.0 TiB   Used FS: 50.0%   Inodes: 1.0 Mi   Used Inodes: 75.0%\n");
}

v1::RunRecord RecordWith(uint32_t reps, std::initializer_list<v1::MdtestOp> ops) {
  v1::RunRecord rec;
  v1::TestRecord* t = rec.add_tests();
  for (uint32_t rep = 0; rep < reps; ++rep) {
    for (v1::MdtestOp op : ops) {
      v1::PhaseRecord* p = t->add_phases();
      p->set_kind(v1::MDTEST);
      p->set_repetition(rep);
      p->mutable_spec()->set_md_op(op);
      p->set_ok(true);
      p->set_md_rate(1000.0 * static_cast<int>(op) + rep);
      p->mutable_row()->set_total_s(0.001 * static_cast<int>(op) + 0.0002);
    }
  }
  return rec;
}

TEST(MdtestOutput, RowsInMdtestsOrderWithZerosForStepsThatDidNotRun) {
  MdtestCommandInfo info;
  info.iterations = 2;
  v1::RunRecord rec = RecordWith(2, {v1::MD_TREE_CREATE, v1::MD_FILE_CREATE, v1::MD_DIR_CREATE});
  auto rows = CollectMdtestRows(info, rec, false);
  std::vector<v1::MdtestOp> order;
  for (const MdtestRow& r : rows) order.push_back(r.op);
  EXPECT_EQ(order, (std::vector<v1::MdtestOp>{
                       v1::MD_DIR_CREATE, v1::MD_DIR_STAT, v1::MD_DIR_RENAME, v1::MD_DIR_REMOVE,
                       v1::MD_FILE_CREATE, v1::MD_FILE_STAT, v1::MD_FILE_READ,
                       v1::MD_FILE_REMOVE, v1::MD_TREE_CREATE, v1::MD_TREE_REMOVE}));
  EXPECT_EQ(rows[0].values, (std::vector<double>{2000, 2001}));
  EXPECT_EQ(rows[1].values, (std::vector<double>{0, 0}));
  info.dirs = false;  // -F: no directory rows
  EXPECT_EQ(CollectMdtestRows(info, rec, false).size(), 6u);
  info.dirs = true;
  info.files = false;  // -D
  EXPECT_EQ(CollectMdtestRows(info, rec, true)[4].op, v1::MD_TREE_CREATE);
}

// The SUMMARY tables of mdtest-hard-like (golden) with this run's figures:
// same lines, every field in mdtest's columns.
TEST(MdtestOutput, TablesAsMdtestPrintsThem) {
  MdtestCommandInfo info;
  info.dirs = false;
  info.print_time = true;
  v1::RunRecord rec =
      RecordWith(1, {v1::MD_TREE_CREATE, v1::MD_FILE_CREATE, v1::MD_FILE_STAT, v1::MD_FILE_READ,
                     v1::MD_FILE_REMOVE, v1::MD_TREE_REMOVE});
  EXPECT_EQ(FormatMdtestSummary(info, rec, "11/30/2026 16:49:10"),
            "\n"
            "SUMMARY rate (in ops/sec): (of 1 iterations)\n"
            "   Operation                     Max            Min           Mean        Std Dev\n"
            "   ---------                     ---            ---           ----        -------\n"
            "   File creation                5000.000       5000.000       5000.000          0.000\n"
            "   File stat                    6000.000       6000.000       6000.000          0.000\n"
            "   File read                    7000.000       7000.000       7000.000          0.000\n"
            "   File removal                 8000.000       8000.000       8000.000          0.000\n"
            "   Tree creation                1000.000       1000.000       1000.000          0.000\n"
            "   Tree removal                 9000.000       9000.000       9000.000          0.000\n"
            "\n"
            "SUMMARY time (in ms/op): (of 1 iterations)\n"
            "   Operation                     Max            Min           Mean        Std Dev\n"
            "   ---------                     ---            ---           ----        -------\n"
            "   File creation                   0.005          0.005          0.005          0.000\n"
            "   File stat                       0.006          0.006          0.006          0.000\n"
            "   File read                       0.007          0.007          0.007          0.000\n"
            "   File removal                    0.008          0.008          0.008          0.000\n"
            "   Tree creation                   0.001          0.001          0.001          0.000\n"
            "   Tree removal                    0.009          0.009          0.009          0.000\n"
            "-- finished at 11/30/2026 16:49:10 --\n"
            "\n");
}

TEST(MdtestOutput, SampleDeviationOverIterations) {
  std::vector<MdtestRow> rows = {{v1::MD_DIR_CREATE, {1000, 2000, 3000}},
                                 {v1::MD_FILE_CREATE, {12345.625, 12000, 11000.5}}};
  EXPECT_EQ(FormatMdtestTable(rows, 3, false),
            "\n"
            "SUMMARY rate (in ops/sec): (of 3 iterations)\n"
            "   Operation                     Max            Min           Mean        Std Dev\n"
            "   ---------                     ---            ---           ----        -------\n"
            "   Directory creation           3000.000       1000.000       2000.000       1000.000\n"
            "   File creation               12345.625      11000.500      11782.042        698.548\n");
}

TEST(MdtestOutput, FsStatsOfRankZero) {
  v1::RunRecord rec = RecordWith(1, {v1::MD_TREE_CREATE});
  EXPECT_FALSE(MdtestFsStats(rec).has_value());
  v1::TaskResult* t = rec.mutable_tests(0)->mutable_phases(0)->add_agents()->add_tasks();
  t->set_rank(0);
  t->mutable_dir_fs()->set_files(5);
  ASSERT_TRUE(MdtestFsStats(rec).has_value());
  EXPECT_EQ(MdtestFsStats(rec)->files(), 5u);
}

}  // namespace
}  // namespace lockstep
