#include "controller/record/ior_math.h"

#include "controller/ior/ior_report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

v1::TaskResult Task(int64_t open_start, int64_t open_stop, int64_t rdwr_start, int64_t rdwr_stop,
                    int64_t close_start, int64_t close_stop, uint64_t bytes) {
  v1::TaskResult t;
  t.set_open_start_unix_ns(open_start);
  t.set_open_stop_unix_ns(open_stop);
  t.set_rdwr_start_unix_ns(rdwr_start);
  t.set_rdwr_stop_unix_ns(rdwr_stop);
  t.set_close_start_unix_ns(close_start);
  t.set_close_stop_unix_ns(close_stop);
  t.set_first_io_unix_ns(rdwr_start);
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

// IOR's CheckFileSize: the files' sizes after the phase, summed over a
// task's own files, the largest for a shared one; unknown when an agent did
// not say (an older agent).
TEST(IorMath, StatBytesSumPerProcessFilesAndTakeTheLargestOfASharedOne) {
  v1::TaskResult a = Task(0, 1, 1, 2, 2, 3, 1 << 20);
  v1::TaskResult b = Task(0, 1, 1, 2, 2, 3, 1 << 20);
  v1::PhaseSpec spec = Spec();
  EXPECT_FALSE(ReduceIteration({&a, &b}, spec, 0).has_stat_bytes());
  a.set_file_size_bytes(2 << 20);
  EXPECT_FALSE(ReduceIteration({&a, &b}, spec, 0).has_stat_bytes()) << "b's size is unknown";
  b.set_file_size_bytes(3 << 20);
  EXPECT_EQ(ReduceIteration({&a, &b}, spec, 0).stat_bytes(), 5u << 20);
  spec.set_file_per_process(false);
  EXPECT_EQ(ReduceIteration({&a, &b}, spec, 0).stat_bytes(), 3u << 20);
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
  v1::PhaseRecord r1, r2;
  r1.mutable_row()->set_bytes(128 << 20);
  r1.mutable_row()->set_total_s(1.0);
  r2.mutable_row()->set_bytes(128 << 20);
  r2.mutable_row()->set_total_s(2.0);
  v1::SummaryRow row = SummarizePhase({&r1, &r2}, Spec(), "w", 0, {});
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

// The rows of tests/conformance/golden/ior-stonewall as first captured (-b 2g), character
// for character.
TEST(IorReport, StonewallRowsMatchIorExactly) {
  v1::PhaseRecord p;
  p.set_kind(v1::WRITE);
  v1::PhaseSpec* spec = p.mutable_spec();
  spec->set_kind(v1::WRITE);
  spec->set_total_tasks(2);
  spec->set_tasks(2);
  spec->set_transfer_bytes(1 << 20);
  spec->set_block_bytes(uint64_t{2} << 30);
  spec->set_segments(1);
  spec->set_file_per_process(true);
  spec->set_stonewall_seconds(1);
  spec->set_stonewall_wear_out(true);
  v1::IterationRow* r = p.mutable_row();
  r->set_access("write");
  r->set_bw_mib(1424.99);
  r->set_iops(1425.01);
  r->set_latency_s(0.001403);
  r->set_block_kib(2097152);
  r->set_xfer_kib(1024);
  r->set_open_s(0.000023);
  r->set_wrrd_s(1.89);
  r->set_close_s(0.892378);
  r->set_total_s(1.89475);
  r->set_bytes(2831155200);
  r->set_expected_bytes(4294967296);
  v1::StonewallRecord* w = p.mutable_stonewall();
  w->set_pairs_min(1011);
  w->set_pairs_max(1350);
  w->set_min_bytes(uint64_t{1011} << 20);
  w->set_total_bytes(uint64_t{1011 + 1350} << 20);
  w->set_duration_s(1180.5 / 1177.75);  // IOR: 1180.5 MiB per task moved by the stonewall
  EXPECT_EQ(IorReport().PhaseDone(p),
            "stonewalling pairs accessed min: 1011 max: 1350 -- min data: 1.0 GiB mean data: 1.2 "
            "GiB time: 1.0s\n"
            "WARNING: Expected aggregate file size       = 4294967296\n"
            "WARNING: Stat() of aggregate file size      = 2831155200\n"
            "WARNING: Using actual aggregate bytes moved = 2831155200\n"
            "WARNING: Maybe caused by deadlineForStonewalling\n"
            "write     1424.99    1425.01    0.001403    2097152    1024.00    0.000023   1.89       "
            "0.892378   1.89       0   \n");

  v1::RunRecord run;
  run.set_status("complete");
  v1::TestRecord* t = run.add_tests();
  *t->add_phases() = p;
  *t->add_summary() = SummarizePhase({&t->phases(0)}, *spec, "write", 0, {});
  t->mutable_summary(0)->set_bw_std_mib(0);
  EXPECT_THAT(IorReport().TestDone(*t),
              ::testing::HasSubstr("Pairs deadlineForStonewallingaccessed: 1350\n"));
  EXPECT_THAT(IorReport().Footer(run, ""),
              ::testing::HasSubstr(
                  "write        1424.99    1424.99    1424.99       0.00    1424.99    1424.99    "
                  "1424.99       0.00    1.89475       1.00       1177.75     0      2   2    1   "
                  "1     0        1         0    0      1 2147483648  1048576    2700.0 POSIX      "
                  "0\n"));
}

// A read of files larger than its layout (IOR 4.1, golden ior-read-large-file):
// IOR warns with the stat'd size although every byte of the layout moved;
// without the agents' stat nothing differs and nothing is said.
TEST(IorReport, FilesLargerThanTheLayoutWarnAsIor) {
  v1::PhaseRecord p;
  p.set_kind(v1::READ);
  p.mutable_spec()->set_kind(v1::READ);
  v1::IterationRow* r = p.mutable_row();
  r->set_access("read");
  r->set_bytes(2097152);
  r->set_expected_bytes(2097152);
  EXPECT_THAT(IorReport().PhaseDone(p), ::testing::Not(::testing::HasSubstr("WARNING")));
  r->set_stat_bytes(2097152);
  EXPECT_THAT(IorReport().PhaseDone(p), ::testing::Not(::testing::HasSubstr("WARNING")));
  r->set_stat_bytes(4194304);
  EXPECT_THAT(IorReport().PhaseDone(p),
              ::testing::StartsWith("WARNING: Expected aggregate file size       = 2097152\n"
                                    "WARNING: Stat() of aggregate file size      = 4194304\n"
                                    "WARNING: Using actual aggregate bytes moved = 2097152\n"
                                    "read      "));
}

// IOR prints -C's and -Z's parameters for the whole test: write rows too.
TEST(IorMath, ReorderIsTestWide) {
  v1::TestRecord t;
  v1::PhaseSpec* w = t.add_plan_specs();
  w->set_kind(v1::WRITE);
  v1::PhaseSpec* r = t.add_plan_specs();
  r->set_kind(v1::READ);
  r->set_reorder_random(true);
  r->set_reorder_random_seed(-3);
  TestReorder z = TestReorderOf(t.plan_specs());
  EXPECT_TRUE(z.random);
  EXPECT_EQ(z.random_seed, -3);
  EXPECT_EQ(z.node_offset, 0u);
  v1::SummaryRow row = SummarizePhase({}, *w, "write", 0, z);
  EXPECT_EQ(row.reorder_random(), 1u);
  EXPECT_EQ(row.reorder_random_seed(), -3);
  EXPECT_EQ(row.reorder(), 0u);
  EXPECT_EQ(row.reorder_offset(), 1u);  // IOR's default taskPerNodeOffset

  r->set_reorder_random(false);
  r->set_reorder_node_offset(2);  // -C -Q 2
  TestReorder c = TestReorderOf(t.plan_specs());
  row = SummarizePhase({}, *w, "write", 0, c);
  EXPECT_EQ(row.reorder(), 1u);
  EXPECT_EQ(row.reorder_offset(), 2u);
  EXPECT_EQ(row.reorder_random(), 0u);
}

TEST(IorReport, HumanReadableSizesAsIor) {
  EXPECT_EQ(IorHumanBytes(4096), "4096 bytes");
  EXPECT_EQ(IorHumanBytes(47008), "47008 bytes");
  EXPECT_EQ(IorHumanBytes(1 << 20), "1 MiB");
  EXPECT_EQ(IorHumanBytes(37606400), "35.86 MiB");
  EXPECT_EQ(IorHumanBytes(uint64_t{4} << 30), "4 GiB");
}

TEST(IorReport, LockstepLinesStartWithHash) {
  EXPECT_EQ(IorReport::Note("warning: a\nb"), "# warning: a\n# b\n");
  EXPECT_EQ(IorReport().FilesRemoved(0.25, 1).substr(0, 2), "# ");
}

// With -v IOR prints its removal as a row of the results table
// (PrintRemoveTiming), which a script greps as `^remove`; golden
// ior-verbose-remove holds IOR's own.
TEST(IorReport, VerboseRemoveIsIorsTableRow) {
  EXPECT_EQ(IorReport(true).FilesRemoved(0.001251, 0),
            "remove    -          -          -           -          -          -          -     "
            "     -          0.001251   0   \n# remove    0.001251    iter 0\n");
  EXPECT_EQ(IorReport(true).FilesRemoved(12.5, 3).substr(99, 16), "12.50      3   \n");
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

TEST(IorMath, SupersededByKindOrByTheMessageOfEarlierRuns) {
  v1::PhaseRecord p;
  EXPECT_FALSE(IsSuperseded(p));
  p.set_error_kind(v1::SUPERSEDED);
  EXPECT_TRUE(IsSuperseded(p));
  v1::PhaseRecord old;  // run.json written before PhaseRecord.error_kind
  old.set_error("superseded: start skew 900 us > 500 us");
  EXPECT_TRUE(IsSuperseded(old));
  old.set_error("agent 10.0.0.5:7070 lost during p1");
  EXPECT_FALSE(IsSuperseded(old));
}

}  // namespace
}  // namespace lockstep
