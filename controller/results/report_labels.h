// How the HTML report (report_html.cc, report_figures.cc) names what it
// shows: runs by what differs between them, tests by what actually ran.
#ifndef LOCKSTEP_CONTROLLER_RESULTS_REPORT_LABELS_H_
#define LOCKSTEP_CONTROLLER_RESULTS_REPORT_LABELS_H_

#include <string>
#include <vector>

#include "lockstep/v1/results.pb.h"

namespace lockstep {

// What the history db recorded with a run (lockstep run --site/--tag).
struct RunTags {
  std::string site;
  std::vector<std::string> tags;
};

// One short name per run, made of the attributes whose values differ
// between the runs, in this order: plan name, site, tags, Lustre version,
// kernel, file system types, agent count, lockstep version. A single run
// has the name "" (legends then name operations only); runs alike in all of
// them are "run 1", "run 2", ... (RunLegend says which is which). `tags`
// is empty or has one entry per run.
std::vector<std::string> RunNames(const std::vector<v1::RunRecord>& runs,
                                  const std::vector<RunTags>& tags = {});

// The configuration of `test` as it ran, for axis labels and table rows:
// its sweep point (SweepLabel) with the values the run changed shown as
// they ran: striping keys are left out where no phase spec of the test set
// a layout (a smoke run off Lustre drops them), block_size and
// transfer_size are the sizes sent, client_agents and tasks_per_agent the
// agents and tasks that took part. "" without a sweep.
std::string RanLabel(const v1::TestRecord& test);

// RanLabel, or "test N (M tasks)" where it is empty or where another test
// of `run` has the same label (so that every test keeps its own name).
std::string TestName(const v1::RunRecord& run, const v1::TestRecord& test);

// "write", or "seq-write/write" when the phase is not named after its
// operation.
std::string OperationName(const v1::SummaryRow& row);

// The runs' changes to their plans (RunRecord.smoke_changes), once each,
// in order.
std::vector<std::string> PlanChanges(const std::vector<v1::RunRecord>& runs);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_REPORT_LABELS_H_
