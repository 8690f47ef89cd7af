// mdtest's SUMMARY table and its statistics.
#include "controller/mdtest_output.h"

#include "controller/phase_reduce.h"
#include "gtest/gtest.h"

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
  a.set_rdwr_start_ns(1'000'000'000);
  a.set_rdwr_stop_ns(1'500'000'000);
  a.set_ops(1000);
  b.set_rdwr_start_ns(1'000'100'000);
  b.set_rdwr_stop_ns(3'000'000'000);  // the slowest: 2 s after the first start
  b.set_ops(1000);
  v1::PhaseRecord pr;
  ReducePhase({&a, &b}, spec, 0, &pr);
  EXPECT_EQ(pr.md_items(), 2000u);
  EXPECT_DOUBLE_EQ(pr.md_rate(), 1000.0);
  EXPECT_EQ(pr.row().access(), "file_create");
  EXPECT_DOUBLE_EQ(pr.row().total_s(), 2.0);
}

TEST(MdtestOutput, Golden) {
  std::vector<MdtestRates> rows = {
      {v1::MD_DIR_CREATE, {1000, 2000, 3000}},
      {v1::MD_FILE_CREATE, {12345.625, 12000, 11000.5}},
      {v1::MD_TREE_REMOVE, {50, 50, 50}},
  };
  EXPECT_EQ(FormatMdtestSummary(rows, 3),
            "\n"
            "SUMMARY rate (in ops/sec): (of 3 iterations)\n"
            "   Operation                         Max            Min           Mean        Std Dev\n"
            "   ---------                         ---            ---           ----        -------\n"
            "   Directory creation           3000.000       1000.000       2000.000       1000.000\n"
            "   File creation               12345.625      11000.500      11782.042        698.548\n"
            "   Tree removal                   50.000         50.000         50.000          0.000\n");
}

TEST(MdtestOutput, CollectsRatesInMdtestsOrder) {
  v1::RunRecord rec;
  v1::TestRecord* t = rec.add_tests();
  for (uint32_t rep = 0; rep < 2; ++rep) {
    for (v1::MdtestOp op : {v1::MD_TREE_CREATE, v1::MD_FILE_CREATE, v1::MD_DIR_CREATE}) {
      v1::PhaseRecord* p = t->add_phases();
      p->set_kind(v1::MDTEST);
      p->mutable_spec()->set_md_op(op);
      p->set_ok(true);
      p->set_md_rate(100.0 * static_cast<int>(op) + rep);
    }
  }
  auto rates = CollectMdtestRates(rec);
  ASSERT_EQ(rates.size(), 3u);
  EXPECT_EQ(rates[0].op, v1::MD_DIR_CREATE);
  EXPECT_EQ(rates[1].op, v1::MD_FILE_CREATE);
  EXPECT_EQ(rates[2].op, v1::MD_TREE_CREATE);
  EXPECT_EQ(rates[1].rates, (std::vector<double>{500, 501}));
}

}  // namespace
}  // namespace lockstep
