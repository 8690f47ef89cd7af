#include "controller/record/run_observer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/files.h"
#include "controller/record/ior_math.h"
#include "controller/record/phase_reduce.h"

namespace lockstep {

void RunEvents::Add(RunObserver* observer) {
  if (observer != nullptr) observers_.push_back(observer);
}

absl::Status RunEvents::Each(const std::function<absl::Status(RunObserver*)>& event) {
  absl::Status first;
  for (RunObserver* o : observers_) {
    absl::Status s = event(o);
    if (!s.ok() && first.ok()) first = std::move(s);
  }
  if (!first.ok() && first_error_.ok()) first_error_ = first;
  return first;
}

absl::Status RunEvents::OnRunBegin(const v1::RunRecord& run) {
  return Each([&](RunObserver* o) { return o->OnRunBegin(run); });
}
absl::Status RunEvents::OnAgentsReady(const v1::RunRecord& run) {
  return Each([&](RunObserver* o) { return o->OnAgentsReady(run); });
}
absl::Status RunEvents::OnTestStarted(const v1::TestRecord& test, const v1::PhaseRecord& first) {
  return Each([&](RunObserver* o) { return o->OnTestStarted(test, first); });
}
absl::Status RunEvents::OnPhaseDone(const v1::PhaseRecord& phase) {
  return Each([&](RunObserver* o) { return o->OnPhaseDone(phase); });
}
absl::Status RunEvents::OnPhaseFailed(const v1::PhaseRecord& phase) {
  return Each([&](RunObserver* o) { return o->OnPhaseFailed(phase); });
}
absl::Status RunEvents::OnFilesRemoved(double seconds, uint32_t iter) {
  return Each([&](RunObserver* o) { return o->OnFilesRemoved(seconds, iter); });
}
absl::Status RunEvents::OnTestDone(const v1::TestRecord& test) {
  return Each([&](RunObserver* o) { return o->OnTestDone(test); });
}
absl::Status RunEvents::OnNote(const std::string& text) {
  return Each([&](RunObserver* o) { return o->OnNote(text); });
}
absl::Status RunEvents::OnRunEnd(const v1::RunRecord& run, const std::string& run_dir) {
  return Each([&](RunObserver* o) { return o->OnRunEnd(run, run_dir); });
}

void RunEmitter::Keep(absl::Status s) {
  if (!s.ok() && first_error_.ok()) first_error_ = std::move(s);
}
void RunEmitter::RunBegin(const v1::RunRecord& run) {
  if (observer_) Keep(observer_->OnRunBegin(run));
}
void RunEmitter::AgentsReady(const v1::RunRecord& run) {
  if (observer_) Keep(observer_->OnAgentsReady(run));
}
void RunEmitter::TestStarted(const v1::TestRecord& test, const v1::PhaseRecord& first) {
  if (observer_) Keep(observer_->OnTestStarted(test, first));
}
void RunEmitter::PhaseDone(const v1::PhaseRecord& phase) {
  if (observer_) Keep(observer_->OnPhaseDone(phase));
}
void RunEmitter::PhaseFailed(const v1::PhaseRecord& phase) {
  if (observer_) Keep(observer_->OnPhaseFailed(phase));
}
void RunEmitter::FilesRemoved(double seconds, uint32_t iter) {
  if (observer_) Keep(observer_->OnFilesRemoved(seconds, iter));
}
void RunEmitter::TestDone(const v1::TestRecord& test) {
  if (observer_) Keep(observer_->OnTestDone(test));
}
void RunEmitter::Note(const std::string& text) {
  if (observer_) Keep(observer_->OnNote(text));
}
void RunEmitter::RunEnd(const v1::RunRecord& run, const std::string& run_dir) {
  if (observer_) Keep(observer_->OnRunEnd(run, run_dir));
}

absl::Status ReplayRun(const v1::RunRecord& run, const std::string& run_dir,
                       RunObserver* observer,
                       const std::function<bool(v1::PhaseKind)>& shows_failed) {
  RunEmitter events(observer);
  events.RunBegin(run);
  events.AgentsReady(run);
  for (const v1::TestRecord& t : run.tests()) {
    for (const v1::PhaseRecord& p : t.phases()) {
      if (IsSuperseded(p)) continue;
      events.TestStarted(t, p);
      // Said during the phase, before its instant (controller/run/phase_attempt.cc).
      if (!p.start_late_warning().empty()) events.Note(p.start_late_warning());
      // As the run emitted them (controller/run/coordinator.cc): a failed
      // command phase still shows each host's times and status.
      if (p.ok() || shows_failed(p.kind())) events.PhaseDone(p);
      if (!p.ok()) events.PhaseFailed(p);
      if (!p.ok()) events.Note(absl::StrFormat("%s failed: %s", p.phase_id(), p.error()));
      if (const std::string late = p.ok() ? MissedStartNote(p) : ""; !late.empty()) {
        events.Note(late);
      }
      if (p.has_remove_row()) {
        events.FilesRemoved(p.remove_row().total_s(), p.remove_row().iter());
      }
    }
    events.TestDone(t);
  }
  events.RunEnd(run, run_dir);
  return events.status();
}

namespace {
std::string PhaseKey(const v1::PhaseRecord& phase) {
  return absl::StrCat(phase.phase_id(), "#", phase.attempts());
}
}  // namespace

absl::Status PhaseAgents::OnPhaseDone(const v1::PhaseRecord& phase) {
  Keep(phase);
  return absl::OkStatus();
}

absl::Status PhaseAgents::OnPhaseFailed(const v1::PhaseRecord& phase) {
  Keep(phase);
  return absl::OkStatus();
}

void PhaseAgents::Keep(const v1::PhaseRecord& phase) {
  google::protobuf::RepeatedPtrField<v1::AgentPhaseRecord>& kept = agents_[PhaseKey(phase)];
  kept = phase.agents();
  if (!keep_telemetry_) {
    for (v1::AgentPhaseRecord& a : kept) a.clear_telemetry();
  }
}

v1::RunRecord PhaseAgents::Full(const v1::RunRecord& run) const {
  v1::RunRecord full = run;
  for (v1::TestRecord& t : *full.mutable_tests()) {
    for (v1::PhaseRecord& p : *t.mutable_phases()) {
      auto it = agents_.find(PhaseKey(p));
      if (it != agents_.end()) *p.mutable_agents() = it->second;
    }
  }
  return full;
}

void ReportText::Print(const std::string& text) {
  text_ += text;
  if (out_) out_(text);
}

absl::Status WriteSummaryTxt(const std::string& run_dir, const std::string& text) {
  return WriteFileAtomically(run_dir + "/summary.txt", text);
}

}  // namespace lockstep
