#include "controller/results/run_report.h"

#include "controller/plan/phase_kind.h"

namespace lockstep {

RunReport::RunReport(const v1::RunRecord& run, ReportText* out) {
  const v1::FrontEndReport& front = run.front_end_report();
  for (const std::string& line : front.note_lines()) out->Print(line);
  const std::string& tool = front.tool();
  if (tool == "mdtest" || tool == "iozone" || tool == "io500") {
    own_ = std::make_unique<LockstepLinesObserver>(out);
    events_.Add(own_.get());
    if (tool == "mdtest") {
      mdtest_ = std::make_unique<MdtestReportObserver>(MdtestCommandInfoOf(front.mdtest()), out);
      events_.Add(mdtest_.get());
    } else if (tool == "iozone") {
      iozone_ = std::make_unique<IozoneReportObserver>(
          IozoneCommandInfoOf(front.iozone(), run.iozone_command_line()), out);
      events_.Add(iozone_.get());
    }
    return;
  }
  ior_ = std::make_unique<IorReportObserver>(run.ior_verbose(), out);
  events_.Add(ior_.get());
}

std::string RenderRunReport(const v1::RunRecord& run, const std::string& run_dir) {
  ReportText text;
  RunReport report(run, &text);
  // The observers print into `text`: they do not fail.
  ReplayRun(run, run_dir, report.observer(), ShowsFailedPhaseOf).IgnoreError();
  return text.text();
}

}  // namespace lockstep
