// Reports of one or more runs, for people and for other tools:
//
//   RenderHtml        one self-contained page (no external resources, no
//                     JavaScript, report_html.cc) that leads with the
//                     answer: which run is which (named by what differs
//                     between them), the plans' figures (report_figures.h),
//                     and one table with each result's median, spread,
//                     change and significance; then, folded: runs, agents,
//                     every repetition, throughput over time, latency
//                     percentiles. Never wider than the window.
//   RenderCsv         one row per result (SummaryRow), header first; the
//                     last column is the test's sweep point.
//   RenderOpenMetrics OpenMetrics text, ending "# EOF".
//   RenderInfluxLines InfluxDB line protocol, one line per result.
//
// WriteReportFile writes any of them atomically (common/files.h).
#ifndef LOCKSTEP_CONTROLLER_RESULTS_REPORT_H_
#define LOCKSTEP_CONTROLLER_RESULTS_REPORT_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "controller/results/report_labels.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

struct HtmlOptions {
  std::string title;              // default "<plan names>: N runs"
  int max_time_series_plots = 24; // per report; the rest are listed as omitted
  // Empty, or one per run: what the history db recorded with it (legends
  // name runs by site and tags when these differ).
  std::vector<RunTags> run_tags;
};

std::string RenderHtml(const std::vector<v1::RunRecord>& runs, const HtmlOptions& options = {});
std::string RenderCsv(const std::vector<v1::RunRecord>& runs);
std::string RenderOpenMetrics(const std::vector<v1::RunRecord>& runs);
std::string RenderInfluxLines(const std::vector<v1::RunRecord>& runs);

// WriteFileAtomically, with the error naming what was being written.
absl::Status WriteReportFile(const std::string& path, std::string_view content,
                             std::string_view what);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_REPORT_H_
