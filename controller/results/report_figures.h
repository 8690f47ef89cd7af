// The figures of the HTML report (report.cc), built from stored runs alone:
//
//   PlanFigures      per plan (runs grouped by name), the figure its report
//                    drew: throughput against tasks (one line per run and
//                    operation, as IOzone's throughput-vs-threads figure)
//                    when its tests differ in tasks only; otherwise a bar
//                    per configuration (sweep point) per run and operation.
//                    Both at the median over the repetitions, whiskers from
//                    min to max.
//   TimeSeriesPlots  per run, test and phase: throughput over time, one line
//                    per repetition and agent (per repetition, all agents
//                    summed, beyond 4 agents).
//   LatencyPlots     per phase: percentiles of the merged latency histograms
//                    (TaskResult.latency) of every task, agent and repetition
//                    of a test, a line per run and test.
//
// Legends name the run and the operation (or repetition and agent).
#ifndef LOCKSTEP_CONTROLLER_RESULTS_REPORT_FIGURES_H_
#define LOCKSTEP_CONTROLLER_RESULTS_REPORT_FIGURES_H_

#include <string>
#include <vector>

#include "common/histogram.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

std::vector<std::string> PlanFigures(const std::vector<v1::RunRecord>& runs);

// At most `max_plots`; *omitted counts the plots left out.
std::vector<std::string> TimeSeriesPlots(const std::vector<v1::RunRecord>& runs, int max_plots,
                                         int* omitted);

std::vector<std::string> LatencyPlots(const std::vector<v1::RunRecord>& runs);

// The tasks' latency histograms of phase `phase` merged over every agent and
// repetition of `test` (accepted attempts only: ok, not superseded).
LatencyHistogram MergedLatency(const v1::TestRecord& test, const std::string& phase);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_REPORT_FIGURES_H_
