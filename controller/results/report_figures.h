// The figures of the HTML report (report_html.cc), built from stored runs alone:
//
//   PlanFigures        per plan (runs grouped by name), the figure its report
//                      drew: throughput against tasks (one line per run and
//                      operation, as IOzone's throughput-vs-threads figure)
//                      when its tests differ in tasks only; otherwise a bar
//                      per configuration (the test as it ran, TestName) per
//                      run and operation. Both at the median over the
//                      repetitions, whiskers from min to max.
//   TimeSeriesFigures  per run, test and phase that spans several sampling
//                      intervals: throughput over time, one line per
//                      repetition and agent (per repetition, all agents
//                      summed, beyond 4 agents). A shorter phase has no
//                      series worth drawing; its rate is its result.
//   LatencyPlots       per phase: percentiles of the merged latency
//                      histograms (TaskResult.latency) of every task, agent
//                      and repetition of a test, a line per run and test.
//
// Legends name the run (`run_names`, report_labels.h RunNames: "" for a
// single run) and the operation, or the repetition and agent.
#ifndef LOCKSTEP_CONTROLLER_RESULTS_REPORT_FIGURES_H_
#define LOCKSTEP_CONTROLLER_RESULTS_REPORT_FIGURES_H_

#include <string>
#include <vector>

#include "common/histogram.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

std::vector<std::string> PlanFigures(const std::vector<v1::RunRecord>& runs,
                                     const std::vector<std::string>& run_names);

struct TimeSeriesOptions {
  int max_plots = 24;   // per report
  int min_samples = 3;  // a phase with fewer samples per agent gets no plot
};
struct TimeSeriesPlots {
  std::vector<std::string> plots;
  int omitted = 0;    // phases with a series beyond max_plots
  int too_short = 0;  // phases (per run and test) with fewer than min_samples
};
TimeSeriesPlots TimeSeriesFigures(const std::vector<v1::RunRecord>& runs,
                                  const std::vector<std::string>& run_names,
                                  const TimeSeriesOptions& options);

std::vector<std::string> LatencyPlots(const std::vector<v1::RunRecord>& runs,
                                      const std::vector<std::string>& run_names);

// The layers (issue 42) of each run whose tests have them (TestRecord.layers):
// per write or read phase, a bar plot with three bars per client count
// (end-to-end, network, back end; whiskers span each figure's spread over the
// repetitions) and a line plot of the efficiency against the client count.
// Empty when no run has layers.
std::vector<std::string> LayersFigures(const std::vector<v1::RunRecord>& runs,
                                       const std::vector<std::string>& run_names);

// The tasks' latency histograms of phase `phase` merged over every agent and
// repetition of `test` (accepted attempts only: ok, not superseded).
LatencyHistogram MergedLatency(const v1::TestRecord& test, const std::string& phase);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_REPORT_FIGURES_H_
