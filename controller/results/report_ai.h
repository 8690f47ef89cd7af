// The figures of the HTML report (report_html.cc) for the AI phases
// (issue 30), from stored runs alone:
//
//   AiScalingFigures  when the train results of the runs (a sweep of
//                     tasks_per_agent, or the runs of `lockstep dlio
//                     --find-max-accelerators`, one per step) span two or
//                     more accelerator counts: samples/s against
//                     accelerators and AU against accelerators with the AU
//                     threshold, one line per plan and train phase, at the
//                     median over the repetitions with whiskers from min to
//                     max.
//   AuOverTimeFigures per run, test and train phase of two or more epochs:
//                     each host's AU (the mean of its accelerators' AU in
//                     the epoch) at the end of each epoch,
//                     seconds since the phase started; one line per host
//                     (and repetition, when there are several).
#ifndef LOCKSTEP_CONTROLLER_RESULTS_REPORT_AI_H_
#define LOCKSTEP_CONTROLLER_RESULTS_REPORT_AI_H_

#include <string>
#include <vector>

#include "lockstep/v1/results.pb.h"

namespace lockstep {

std::vector<std::string> AiScalingFigures(const std::vector<v1::RunRecord>& runs);

struct AuOverTime {
  std::vector<std::string> plots;
  int single_epoch = 0;  // train phases (per run and test) of one epoch: no line to draw
};
AuOverTime AuOverTimeFigures(const std::vector<v1::RunRecord>& runs,
                             const std::vector<std::string>& run_names);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_REPORT_AI_H_
