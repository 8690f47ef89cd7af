#include "controller/record/ior_math.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/match.h"
#include "common/histogram.h"
#include "common/layout.h"
#include "common/names.h"

namespace lockstep {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

double Seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

}  // namespace

v1::IterationRow ReduceIteration(const std::vector<const v1::TaskResult*>& tasks,
                                 const v1::PhaseSpec& spec, uint32_t iter) {
  v1::IterationRow row;
  row.set_access(PhaseKindName(spec.kind()));
  row.set_iter(iter);
  row.set_block_kib(static_cast<double>(spec.block_bytes()) / 1024.0);
  row.set_xfer_kib(static_cast<double>(spec.transfer_bytes()) / 1024.0);
  row.set_expected_bytes(AggregateBytes(spec));
  if (tasks.empty()) return row;
  int64_t open_start = std::numeric_limits<int64_t>::max(), open_stop = 0;
  int64_t rdwr_start = std::numeric_limits<int64_t>::max(), rdwr_stop = 0;
  int64_t close_start = std::numeric_limits<int64_t>::max(), close_stop = 0;
  uint64_t bytes = 0, ops = 0, op_ns = 0;
  uint64_t stat_sum = 0, stat_max = 0;
  bool stat_all = true;
  for (const v1::TaskResult* t : tasks) {
    stat_all = stat_all && t->has_file_size_bytes();
    stat_sum += t->file_size_bytes();
    stat_max = std::max(stat_max, t->file_size_bytes());
    open_start = std::min(open_start, t->open_start_unix_ns());
    open_stop = std::max(open_stop, t->open_stop_unix_ns());
    rdwr_start = std::min(rdwr_start, t->rdwr_start_unix_ns());
    rdwr_stop = std::max(rdwr_stop, t->rdwr_stop_unix_ns());
    close_start = std::min(close_start, t->close_start_unix_ns());
    close_stop = std::max(close_stop, t->close_stop_unix_ns());
    bytes += t->bytes();
    ops += t->ops();
    op_ns += t->latency().sum_ns();
  }
  row.set_open_s(Seconds(open_stop - open_start));
  row.set_wrrd_s(Seconds(rdwr_stop - rdwr_start));
  row.set_close_s(Seconds(close_stop - close_start));
  row.set_total_s(Seconds(close_stop - open_start));
  row.set_bytes(bytes);
  // IOR's CheckFileSize: with file_per_process the sum of the tasks' files;
  // a shared file is the same for every task, and the largest size an agent
  // saw is the one after the last task's close (agents stat when their own
  // tasks are done, not when all are).
  if (stat_all) row.set_stat_bytes(spec.file_per_process() ? stat_sum : stat_max);
  if (row.total_s() > 0) row.set_bw_mib(static_cast<double>(bytes) / kMiB / row.total_s());
  if (row.wrrd_s() > 0 && spec.transfer_bytes() > 0) {
    row.set_iops(static_cast<double>(bytes) / static_cast<double>(spec.transfer_bytes()) /
                 row.wrrd_s());
  }
  if (ops > 0) row.set_latency_s(static_cast<double>(op_ns) / static_cast<double>(ops) / 1e9);
  return row;
}

int64_t StartSkewNs(const std::vector<const v1::TaskResult*>& tasks) {
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const v1::TaskResult* t : tasks) {
    if (t->first_io_unix_ns() == 0) continue;
    lo = std::min(lo, t->first_io_unix_ns());
    hi = std::max(hi, t->first_io_unix_ns());
  }
  return hi >= lo ? hi - lo : 0;
}

int64_t ReleaseSkewNs(const std::vector<const v1::TaskResult*>& tasks) {
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const v1::TaskResult* t : tasks) {
    if (t->release_unix_ns() == 0) continue;
    lo = std::min(lo, t->release_unix_ns());
    hi = std::max(hi, t->release_unix_ns());
  }
  return hi >= lo ? hi - lo : 0;
}

RepStats PopulationStats(const std::vector<double>& values) {
  RepStats s;
  if (values.empty()) return s;
  s.max = *std::max_element(values.begin(), values.end());
  s.min = *std::min_element(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  double var = 0;
  for (double v : values) var += (v - s.mean) * (v - s.mean);
  s.sd = std::sqrt(var / static_cast<double>(values.size()));
  return s;
}

TestReorder TestReorderOf(const google::protobuf::RepeatedPtrField<v1::PhaseSpec>& specs) {
  TestReorder r;
  for (const v1::PhaseSpec& s : specs) {
    if (s.reorder_random()) {
      r.random = true;
      r.random_seed = s.reorder_random_seed();
      r.task_offset = std::max<uint32_t>(s.reorder_node_offset(), 1);
    } else if (s.reorder_node_offset() > 0) {
      r.node_offset = s.reorder_node_offset();
      r.task_offset = r.node_offset;
    }
  }
  return r;
}

TestReorder TestReorderOf(const v1::RunRecord& run, const v1::TestRecord& test) {
  if (run.ior_task_offset() == 0) return TestReorderOf(test.plan_specs());
  TestReorder r;
  r.task_offset = run.ior_task_offset();
  r.node_offset = run.ior_reorder_constant() ? r.task_offset : 0;
  r.random = run.ior_reorder_random();
  r.random_seed = run.ior_reorder_random_seed();
  return r;
}

v1::SummaryRow SummarizePhase(const std::vector<const v1::PhaseRecord*>& reps,
                              const v1::PhaseSpec& spec, const std::string& phase_name,
                              uint32_t test_id, const TestReorder& reorder) {
  v1::SummaryRow out;
  out.set_operation(PhaseKindName(spec.kind()));
  out.set_phase(phase_name);
  out.set_api("POSIX");
  std::vector<double> bw, ops, times, wall_s, wall_mib;
  for (const v1::PhaseRecord* p : reps) {
    const v1::IterationRow& r = p->row();
    double t = r.total_s();
    double b = t > 0 ? static_cast<double>(r.bytes()) / t : 0;
    bw.push_back(b / kMiB);
    ops.push_back(t > 0 && spec.transfer_bytes() > 0
                      ? static_cast<double>(r.bytes()) / static_cast<double>(spec.transfer_bytes()) / t
                      : 0);
    times.push_back(t);
    out.add_bw_mib_per_rep(b / kMiB);
    if (p->has_stonewall()) {
      // IOR: the data per task moved by the stonewall, over its duration.
      const v1::StonewallRecord& w = p->stonewall();
      const double per_task = static_cast<double>(w.total_bytes()) /
                              std::max<double>(spec.total_tasks(), 1) / kMiB;
      wall_s.push_back(w.duration_s());
      wall_mib.push_back(w.duration_s() > 0 ? per_task / w.duration_s() : 0);
    }
  }
  RepStats b = PopulationStats(bw), o = PopulationStats(ops), tm = PopulationStats(times);
  out.set_bw_max_mib(b.max);
  out.set_bw_min_mib(b.min);
  out.set_bw_mean_mib(b.mean);
  out.set_bw_std_mib(b.sd);
  out.set_ops_max(o.max);
  out.set_ops_min(o.min);
  out.set_ops_mean(o.mean);
  out.set_ops_std(o.sd);
  out.set_mean_time_s(tm.mean);
  if (!wall_s.empty()) {
    out.set_stonewall(true);
    out.set_stonewall_s(PopulationStats(wall_s).mean);
    out.set_stonewall_mib(PopulationStats(wall_mib).mean);
  }
  out.set_test_id(test_id);
  out.set_num_tasks(spec.total_tasks());
  out.set_tasks_per_node(spec.tasks());
  out.set_repetitions(static_cast<uint32_t>(reps.size()));
  out.set_file_per_process(spec.file_per_process());
  out.set_reorder(reorder.node_offset > 0 ? 1 : 0);
  out.set_reorder_offset(reorder.task_offset);
  out.set_reorder_random(reorder.random ? 1 : 0);
  out.set_reorder_random_seed(reorder.random_seed);
  out.set_segments(spec.segments());
  out.set_block_bytes(spec.block_bytes());
  out.set_transfer_bytes(spec.transfer_bytes());
  // IOR: what the first repetition moved (less than the layout after a stonewall).
  const uint64_t agg = !reps.empty() && reps[0]->row().bytes() > 0
                           ? reps[0]->row().bytes()
                           : spec.block_bytes() * spec.segments() * spec.total_tasks();
  out.set_aggregate_mib(static_cast<double>(agg) / kMiB);
  return out;
}

v1::LatencySummary SummarizeLatency(const std::vector<const v1::TaskResult*>& tasks) {
  LatencyHistogram h;
  for (const v1::TaskResult* t : tasks) h.MergeProto(t->latency());
  return SummarizeHistogram(h);
}

v1::LatencySummary SummarizeHistogram(const LatencyHistogram& h) {
  v1::LatencySummary s;
  s.set_ops(h.count());
  if (h.count() == 0) return s;
  s.set_p50_us(static_cast<double>(h.Quantile(0.50)) / 1e3);
  s.set_p90_us(static_cast<double>(h.Quantile(0.90)) / 1e3);
  s.set_p99_us(static_cast<double>(h.Quantile(0.99)) / 1e3);
  s.set_p999_us(static_cast<double>(h.Quantile(0.999)) / 1e3);
  s.set_max_us(static_cast<double>(h.max()) / 1e3);
  s.set_mean_us(h.mean() / 1e3);
  return s;
}

bool IsSuperseded(const v1::PhaseRecord& phase) {
  return phase.error_kind() == v1::SUPERSEDED ||
         absl::StartsWith(phase.error(), "superseded");
}

}  // namespace lockstep
