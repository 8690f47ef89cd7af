// IOR's arithmetic: reduction of task timers into one iteration's figures,
// and statistics over repetitions (ior-semantics.md).
#ifndef LOCKSTEP_CONTROLLER_RECORD_IOR_MATH_H_
#define LOCKSTEP_CONTROLLER_RECORD_IOR_MATH_H_

#include <vector>

#include "lockstep/v1/agent.pb.h"
#include "common/histogram.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// One iteration of one phase from all its tasks (timestamps in one time base):
//   open  = max(open_stop)  − min(open_start)
//   wrrd  = max(rdwr_stop)  − min(rdwr_start)
//   close = max(close_stop) − min(close_start)
//   total = max(close_stop) − min(open_start)
//   bw    = bytes / total;  iops = bytes / transfer / wrrd
// `spec` gives transfer, block, segments and total_tasks.
v1::IterationRow ReduceIteration(const std::vector<const v1::TaskResult*>& tasks,
                                 const v1::PhaseSpec& spec, uint32_t iter);

// max − min of the tasks' first-I/O instants.
int64_t StartSkewNs(const std::vector<const v1::TaskResult*>& tasks);
// max − min of the instants the tasks were released (before their open).
int64_t ReleaseSkewNs(const std::vector<const v1::TaskResult*>& tasks);

struct RepStats {
  double max = 0, min = 0, mean = 0, sd = 0;  // sd: population (÷ n), as IOR
};
RepStats PopulationStats(const std::vector<double>& values);

// How a test reorders the tasks of its reads: IOR prints this for the whole
// test (its Options block, and the reord/reordoff/reordrand/seed columns of
// write rows too).
struct TestReorder {
  uint32_t node_offset = 0;  // IOR -C's taskPerNodeOffset (-Q); 0 without -C
  bool random = false;       // IOR -Z
  int32_t random_seed = 0;   // IOR -X
  uint32_t task_offset = 1;  // IOR -Q: the reordoff column, and -Z's "task offset"
};
TestReorder TestReorderOf(const google::protobuf::RepeatedPtrField<v1::PhaseSpec>& specs);
// The run's IOR options when it came from an IOR command line (RunRecord's
// ior_reorder_*, which a write-only test has too), else the test's specs.
TestReorder TestReorderOf(const v1::RunRecord& run, const v1::TestRecord& test);

// One row of "Summary of all tests" from the accepted iterations of one
// phase (`spec` is its layout, at repetition 0).
v1::SummaryRow SummarizePhase(const std::vector<const v1::PhaseRecord*>& reps,
                              const v1::PhaseSpec& spec, const std::string& phase_name,
                              uint32_t test_id, const TestReorder& reorder);

// Latency percentiles of the merged histograms of all tasks.
v1::LatencySummary SummarizeLatency(const std::vector<const v1::TaskResult*>& tasks);
// The same figures of one merged histogram.
v1::LatencySummary SummarizeHistogram(const LatencyHistogram& h);

// A phase attempt that a later attempt replaced (on_skew = "repeat"): kept in
// run.json, left out of every row and summary. By its error kind; run.json
// of earlier versions says so only in the message ("superseded: ...").
bool IsSuperseded(const v1::PhaseRecord& phase);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RECORD_IOR_MATH_H_
