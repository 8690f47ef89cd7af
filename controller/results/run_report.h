// The report a run printed, as the observers that print it, chosen from the
// run's record: the front end builds them from the record it starts its run
// with (RunOptions.record_fields), `lockstep report` from the stored record,
// so a report printed again is the one the run printed (summary.txt).
//
//   RunRecord.front_end_report.tool   observers
//   "mdtest"                          Lockstep's '#' lines, mdtest's text
//   "iozone"                          Lockstep's '#' lines, IOzone's text
//   "io500"                           Lockstep's '#' lines (IO500's summary
//                                     is not in the report: result files)
//   anything else, absent             IOR's report at ior_verbose (`lockstep
//                                     run`, `lockstep ior`, `lockstep dlio`)
#ifndef LOCKSTEP_CONTROLLER_RESULTS_RUN_REPORT_H_
#define LOCKSTEP_CONTROLLER_RESULTS_RUN_REPORT_H_

#include <memory>
#include <string>

#include "controller/ior/ior_report.h"
#include "controller/ior/lockstep_lines.h"
#include "controller/iozone/iozone_output.h"
#include "controller/mdtest/mdtest_output.h"
#include "controller/record/run_observer.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

class RunReport {
 public:
  // Prints the front end's note lines (front_end_report.note_lines) into
  // `out` at once: they come before the run's own lines. `out` must outlive
  // this.
  RunReport(const v1::RunRecord& run, ReportText* out);
  RunReport(const RunReport&) = delete;
  RunReport& operator=(const RunReport&) = delete;

  // Every event to the report's observers, in the order they print.
  RunObserver* observer() { return &events_; }

 private:
  std::unique_ptr<LockstepLinesObserver> own_;
  std::unique_ptr<MdtestReportObserver> mdtest_;
  std::unique_ptr<IozoneReportObserver> iozone_;
  std::unique_ptr<IorReportObserver> ior_;
  RunEvents events_;
};

// The text a finished (or journal-rebuilt) run's report printed: its record
// replayed (ReplayRun) through RunReport.
std::string RenderRunReport(const v1::RunRecord& run, const std::string& run_dir);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_RUN_REPORT_H_
