#include "controller/record/run_status.h"

namespace lockstep {

std::string RunStatusOf(const v1::RunEnd& end) {
  switch (end.ending()) {
    case v1::RunEnd::INTERRUPTED:
      return "interrupted";
    case v1::RunEnd::AU_BELOW_THRESHOLD:
      return "failed";
    case v1::RunEnd::FAILED:
      return end.first_test_summarized() ? "partial" : "failed";
    default:
      return end.went_on_after_loss() ? "partial" : "complete";
  }
}

void ApplyRunEnd(const v1::RunEnd& end, v1::RunRecord* run) {
  run->set_status(RunStatusOf(end));
  run->set_error(end.error());
  if (!end.finished_at().empty()) run->set_finished_at(end.finished_at());
  for (const v1::AgentRecord& lost : end.lost_agents()) {
    for (v1::AgentRecord& a : *run->mutable_agents()) {
      if (a.address() != lost.address()) continue;
      a.set_status(lost.status());
      a.set_error(lost.error());
    }
  }
}

void KeepFailedVerificationFiles(const v1::PhaseRecord& phase, v1::RunRecord* run) {
  if (phase.ok()) return;
  for (const std::string& f : phase.verify_failed_files()) run->add_kept_files(f);
}

}  // namespace lockstep
