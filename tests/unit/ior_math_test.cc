#include "controller/ior_math.h"

#include "controller/ior_output.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

v1::TaskResult Task(int64_t open_start, int64_t open_stop, int64_t rdwr_start, int64_t rdwr_stop,
                    int64_t close_start, int64_t close_stop, uint64_t bytes) {
  v1::TaskResult t;
  t.set_open_start_ns(open_start);
  t.set_open_stop_ns(open_stop);
  t.set_rdwr_start_ns(rdwr_start);
  t.set_rdwr_stop_ns(rdwr_stop);
  t.set_close_start_ns(close_start);
  t.set_close_stop_ns(close_stop);
  t.set_first_io_ns(rdwr_start);
  t.set_bytes(bytes);
  t.set_ops(bytes / (1 << 20));
  return t;
}

v1::PhaseSpec Spec() {
  v1::PhaseSpec s;
  s.set_kind(v1::WRITE);
  s.set_transfer_bytes(1 << 20);
  s.set_block_bytes(64 << 20);
  s.set_segments(1);
  s.set_total_tasks(2);
  s.set_file_per_process(true);
  return s;
}

TEST(IorMath, ReductionTakesMinStartsAndMaxStops) {
  const int64_t s = 1'000'000'000;
  // Task a opens first and closes first; task b starts its I/O last.
  v1::TaskResult a = Task(0, s / 10, s / 10, 2 * s, 2 * s, 2 * s + s / 10, 64 << 20);
  v1::TaskResult b = Task(s / 20, s / 5, s / 4, 3 * s, 3 * s, 4 * s, 64 << 20);
  v1::IterationRow row = ReduceIteration({&a, &b}, Spec(), 3);
  EXPECT_DOUBLE_EQ(row.open_s(), 0.2);          // max(open_stop) − min(open_start)
  EXPECT_DOUBLE_EQ(row.wrrd_s(), 3.0 - 0.1);    // max(rdwr_stop) − min(rdwr_start)
  EXPECT_DOUBLE_EQ(row.close_s(), 4.0 - 2.0);   // max(close_stop) − min(close_start)
  EXPECT_DOUBLE_EQ(row.total_s(), 4.0);         // max(close_stop) − min(open_start)
  EXPECT_EQ(row.bytes(), 128u << 20);
  EXPECT_DOUBLE_EQ(row.bw_mib(), 128.0 / 4.0);
  EXPECT_DOUBLE_EQ(row.iops(), 128.0 / 2.9);
  EXPECT_EQ(row.iter(), 3u);
  EXPECT_EQ(row.access(), "write");
  EXPECT_EQ(StartSkewNs({&a, &b}), s / 4 - s / 10);
}

TEST(IorMath, PopulationStdDevLikeIor) {
  // IOR divides by the number of repetitions, not n − 1.
  RepStats st = PopulationStats({419.58, 412.07});
  EXPECT_DOUBLE_EQ(st.max, 419.58);
  EXPECT_DOUBLE_EQ(st.min, 412.07);
  EXPECT_NEAR(st.mean, 415.825, 1e-9);
  EXPECT_NEAR(st.sd, 3.755, 1e-9);
  RepStats three = PopulationStats({1, 2, 3});
  EXPECT_NEAR(three.sd, std::sqrt(2.0 / 3.0), 1e-12);
}

TEST(IorMath, SummaryOverRepetitions) {
  v1::IterationRow r1, r2;
  r1.set_bytes(128 << 20);
  r1.set_total_s(1.0);
  r2.set_bytes(128 << 20);
  r2.set_total_s(2.0);
  v1::SummaryRow row = SummarizePhase({r1, r2}, Spec(), "w", 0, 1, false);
  EXPECT_DOUBLE_EQ(row.bw_max_mib(), 128);
  EXPECT_DOUBLE_EQ(row.bw_min_mib(), 64);
  EXPECT_DOUBLE_EQ(row.bw_mean_mib(), 96);
  EXPECT_DOUBLE_EQ(row.bw_std_mib(), 32);
  EXPECT_DOUBLE_EQ(row.ops_max(), 128);  // transfers per second of total time
  EXPECT_DOUBLE_EQ(row.mean_time_s(), 1.5);
  EXPECT_DOUBLE_EQ(row.aggregate_mib(), 128);
  EXPECT_EQ(row.repetitions(), 2u);
}

TEST(IorOutput, PPDoubleMatchesIor) {
  EXPECT_EQ(PPDouble(0.5), "0.500000   ");
  EXPECT_EQ(PPDouble(419.58), "419.58     ");
  EXPECT_EQ(PPDouble(5000), "5000       ");
  EXPECT_EQ(PPDouble(-1), "   -       ");
}

TEST(IorOutput, GoldenRows) {
  v1::IterationRow r;
  r.set_access("write");
  r.set_bw_mib(419.58);
  r.set_iops(419.6);
  r.set_latency_s(0.002383);
  r.set_block_kib(62914560);
  r.set_xfer_kib(1024);
  r.set_open_s(0.000123);
  r.set_wrrd_s(146.41);
  r.set_close_s(0.000057);
  r.set_total_s(146.42);
  r.set_iter(0);
  EXPECT_EQ(FormatIterationRow(r),
            "write     419.58     419.60     0.002383   62914560   1024.00    0.000123   146.41     "
            "0.000057   146.42     0   \n");
  EXPECT_EQ(FormatRemoveRow(0.25, 1),
            "remove    -          -          -          -          -          -          -          "
            "0.250000   1   \n");

  v1::SummaryRow s;
  s.set_operation("write");
  s.set_api("POSIX");
  s.set_bw_max_mib(419.58);
  s.set_bw_min_mib(412.07);
  s.set_bw_mean_mib(415.82);
  s.set_bw_std_mib(3.75);
  s.set_ops_max(419.58);
  s.set_ops_min(412.07);
  s.set_ops_mean(415.82);
  s.set_ops_std(3.75);
  s.set_mean_time_s(147.76775);
  s.set_num_tasks(1);
  s.set_tasks_per_node(1);
  s.set_repetitions(2);
  s.set_file_per_process(true);
  s.set_segments(1);
  s.set_block_bytes(64424509440ULL);
  s.set_transfer_bytes(1048576);
  s.set_aggregate_mib(61440);
  EXPECT_EQ(FormatSummaryRow(s),
            "write         419.58     412.07     415.82       3.75     419.58     412.07     415.82"
            "       3.75  147.76775           NA             NA     0      1   1    2   1     0"
            "        0         0    0      1 64424509440  1048576   61440.0 POSIX      0\n");
  EXPECT_EQ(FormatMaxLines({s}), "Max Write: 419.58 MiB/sec (439.96 MB/sec)\n");
  EXPECT_THAT(FormatSummaryHeader(),
              ::testing::HasSubstr("Operation   Max(MiB)   Min(MiB)  Mean(MiB)     StdDev"));
}

}  // namespace
}  // namespace lockstep
