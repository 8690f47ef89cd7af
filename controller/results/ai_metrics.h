// The figures of the AI phases (issue 30) beside a result's bandwidth, for
// history, compare and gate: what a train or checkpoint phase's
// PhaseRecord.ai holds, one value per accepted repetition, under the
// ResultKey of the phase's SummaryRow.
//
//   train       au                   the phase's AU (AiSummary.au_mean), pass/fail
//                                    against its au_threshold
//               au_min               the lowest accelerator's AU
//               au_host_min          the lowest host's AU (AgentPhaseRecord.au)
//               samples_per_s        samples / the phase's window
//   checkpoint  checkpoint_{write,read}_min_mib_per_s        slowest rank (MLPerf)
//               checkpoint_{write,read}_aggregate_mib_per_s  all ranks
//               checkpoint_{write,read}_max_duration_s       longest rank (lower is better)
//   write, read efficiency           end-to-end / min(network, back end) of a
//                                    test with net or backend phases
//                                    (controller/record/layers.h)
//
// The MiB/s of a train phase is its SummaryRow's bandwidth, compared as
// every result's is.
#ifndef LOCKSTEP_CONTROLLER_RESULTS_AI_METRICS_H_
#define LOCKSTEP_CONTROLLER_RESULTS_AI_METRICS_H_

#include <string>
#include <string_view>
#include <vector>

#include "controller/results/compare.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

struct AiMetricDef {
  const char* name;
  const char* unit;      // "%", "samples/s", "MiB/s", "s"
  bool lower_is_better;  // durations
};

// Every metric, in the order above.
const std::vector<AiMetricDef>& AiMetricDefs();
// Null for a name not in AiMetricDefs().
const AiMetricDef* FindAiMetric(std::string_view name);
// "au, au_min, ..." for messages.
std::string AiMetricNames();

// One metric of one result of a run.
struct AiMetric {
  ResultKey key;
  std::string metric;
  std::vector<double> values;  // one per accepted repetition; AU as a fraction
  double threshold = 0;        // au: the phase's au_threshold (0: not judged)
  int passed = -1;             // au: 1 every repetition passed, 0 one failed, -1 not judged
};

// The metrics of every train and checkpoint result of `run`, in test, then
// summary-row, then AiMetricDefs() order. A result whose repetitions have no
// AI figures (a run.json from before issue 30) has none.
std::vector<AiMetric> AiMetricsOf(const v1::RunRecord& run);

// The metrics both sides have (every repetition of every run of a side,
// pooled as CompareGroups pools bandwidths), in (key, metric) order.
std::vector<MetricComparison> CompareAiMetrics(const std::vector<v1::RunRecord>& a,
                                               const std::vector<v1::RunRecord>& b);

// The section `lockstep compare` prints under the bandwidth table ("" when
// there is no metric): one line per result and metric with the medians of
// both sides, the change, the significance and, for AU, pass/fail.
std::string FormatAiMetrics(const std::vector<MetricComparison>& metrics);

// A value of `metric` for people: AU in percent, others with 2 decimals.
std::string FormatAiValue(const std::string& metric, double value);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_AI_METRICS_H_
