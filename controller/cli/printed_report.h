// What a command prints while its run goes, the same for every front end
// (`lockstep run`, ior, mdtest, iozone, io500, dlio): the run's report on
// stdout as it comes, its progress on stderr.
#ifndef LOCKSTEP_CONTROLLER_CLI_PRINTED_REPORT_H_
#define LOCKSTEP_CONTROLLER_CLI_PRINTED_REPORT_H_

#include <string>

#include "controller/record/run_observer.h"
#include "controller/results/run_report.h"
#include "controller/run/coordinator.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// Writes `text` to stdout and flushes it.
void PrintToStdout(const std::string& text);

// The report of a run whose record starts as `fields` (RunOptions.
// record_fields, with the front end's fields set: RunReport picks the
// observers from them), printed to stdout as the run goes, or, with
// to_stdout = false, only kept for summary.txt. Must outlive the run.
class PrintedReport {
 public:
  explicit PrintedReport(const v1::RunRecord& fields, bool to_stdout = true);
  PrintedReport(const PrintedReport&) = delete;
  PrintedReport& operator=(const PrintedReport&) = delete;

  // options->observer and options->report point at this report.
  void Attach(RunOptions* options);
  RunObserver* observer() { return observers_.observer(); }
  const ReportText* text() const { return &text_; }

 private:
  ReportText text_;
  RunReport observers_;
};

// The run's progress on stderr: one line redrawn in place on a terminal;
// otherwise, when `lines_otherwise`, a "progress: ..." line every 10 s.
void ShowProgress(RunOptions* options, bool lines_otherwise);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_CLI_PRINTED_REPORT_H_
