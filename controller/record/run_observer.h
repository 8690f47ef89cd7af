// What a run prints, as structured events: the coordinator emits them as the
// run goes, `lockstep report RUN_DIR` replays a stored record as the same
// events (ReplayRun), and each report (IOR's, Lockstep's own '#' lines,
// mdtest's, IOzone's) is a RunObserver that renders them. The events carry
// the records of proto/lockstep/v1/results.proto; no observer reads another's
// text or a file to print.
//
// In record/ because both sides use it: the run layer emits, the tool
// folders observe, results/ replays.
//
// Thread: the caller's (the coordinator's thread during a run); observers
// need no locking.
#ifndef LOCKSTEP_CONTROLLER_RECORD_RUN_OBSERVER_H_
#define LOCKSTEP_CONTROLLER_RECORD_RUN_OBSERVER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// The events of one run, in the order a run emits them:
//   OnRunBegin, [OnAgentsReady, then per test: (OnTestStarted, OnPhaseDone
//   and/or OnPhaseFailed, OnFilesRemoved)*, OnTestDone], OnRunEnd; OnNote
//   anywhere after OnRunBegin. OnTestStarted comes before every phase attempt of a test (a
//   report prints its test header once). An error is the observer's own
//   failure (it could not render or keep what it was given); the run goes
//   on and reports the first such error at its end.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // The run as known before any agent: started_at, command lines, the
  // front end's fields (RunOptions.record_fields).
  virtual absl::Status OnRunBegin(const v1::RunRecord& /*run*/) { return absl::OkStatus(); }
  // Every agent attached, with its facts and clock offset.
  virtual absl::Status OnAgentsReady(const v1::RunRecord& /*run*/) { return absl::OkStatus(); }
  // Before an attempt at a phase of `test` (the first: `first`).
  virtual absl::Status OnTestStarted(const v1::TestRecord& /*test*/,
                                     const v1::PhaseRecord& /*first*/) {
    return absl::OkStatus();
  }
  // One accepted phase (or a failed command phase), still with its
  // per-agent records: tasks and the agents' full telemetry (which run.json
  // leaves to telemetry.pb.gz; a replay has it when that file was read
  // back).
  virtual absl::Status OnPhaseDone(const v1::PhaseRecord& /*phase*/) { return absl::OkStatus(); }
  // A phase given up: its attempt failed and the run stops, or goes on
  // without it. With its per-agent records as OnPhaseDone's; after
  // OnPhaseDone when a command phase. (A superseded attempt, repeated
  // because of its skew, has neither event.)
  virtual absl::Status OnPhaseFailed(const v1::PhaseRecord& /*phase*/) {
    return absl::OkStatus();
  }
  // A repetition's files removed, timed, after its repetition `iter`.
  virtual absl::Status OnFilesRemoved(double /*seconds*/, uint32_t /*iter*/) {
    return absl::OkStatus();
  }
  // After a test's repetitions, with its summary rows.
  virtual absl::Status OnTestDone(const v1::TestRecord& /*test*/) { return absl::OkStatus(); }
  // A Lockstep note: a warning, a repeat, an agent lost; may hold several
  // lines.
  virtual absl::Status OnNote(const std::string& /*text*/) { return absl::OkStatus(); }
  // The run's end: status, finished_at; the per-agent records of its phases
  // are not in `run` (they went with OnPhaseDone). `run_dir` may be empty.
  virtual absl::Status OnRunEnd(const v1::RunRecord& /*run*/, const std::string& /*run_dir*/) {
    return absl::OkStatus();
  }
};

// Fans every event out to its observers, in the order they were added; each
// sees every event, whatever an earlier one returned. Returns (and keeps, in
// status()) the first error any observer returned.
class RunEvents : public RunObserver {
 public:
  // `observer` (not owned; null is ignored) must outlive this.
  void Add(RunObserver* observer);
  // The first error an observer returned, else OK.
  const absl::Status& status() const { return first_error_; }

  absl::Status OnRunBegin(const v1::RunRecord& run) override;
  absl::Status OnAgentsReady(const v1::RunRecord& run) override;
  absl::Status OnTestStarted(const v1::TestRecord& test, const v1::PhaseRecord& first) override;
  absl::Status OnPhaseDone(const v1::PhaseRecord& phase) override;
  absl::Status OnPhaseFailed(const v1::PhaseRecord& phase) override;
  absl::Status OnFilesRemoved(double seconds, uint32_t iter) override;
  absl::Status OnTestDone(const v1::TestRecord& test) override;
  absl::Status OnNote(const std::string& text) override;
  absl::Status OnRunEnd(const v1::RunRecord& run, const std::string& run_dir) override;

 private:
  absl::Status Each(const std::function<absl::Status(RunObserver*)>& event);
  std::vector<RunObserver*> observers_;
  absl::Status first_error_;
};

// The emitting side (the coordinator, ReplayRun): each event to one
// observer (a RunEvents to reach several; null: none). An observer's error
// is kept, the first one, rather than returned: the run goes on and reports
// it at its end.
class RunEmitter {
 public:
  explicit RunEmitter(RunObserver* observer) : observer_(observer) {}
  void RunBegin(const v1::RunRecord& run);
  void AgentsReady(const v1::RunRecord& run);
  void TestStarted(const v1::TestRecord& test, const v1::PhaseRecord& first);
  void PhaseDone(const v1::PhaseRecord& phase);
  void PhaseFailed(const v1::PhaseRecord& phase);
  void FilesRemoved(double seconds, uint32_t iter);
  void TestDone(const v1::TestRecord& test);
  void Note(const std::string& text);
  void RunEnd(const v1::RunRecord& run, const std::string& run_dir);
  // The first error an observer returned, else OK.
  const absl::Status& status() const { return first_error_; }

 private:
  void Keep(absl::Status s);
  RunObserver* const observer_;
  absl::Status first_error_;
};

// A stored run (run.json, or rebuilt from its journal) as the events its run
// emitted: phases as they were accepted (superseded attempts left out; a
// failed phase as OnPhaseFailed and the note "ID failed: ERROR", preceded
// by its OnPhaseDone where `shows_failed(kind)` says the run showed it: the
// kind's PhaseKindDef::ShowsFailedPhase, a command's hosts), the late-start
// warning said before an instant
// (PhaseRecord.start_late_warning), the missed-start notes, the timed
// removals. Notes the run printed that its record does not keep (other
// warnings) are not replayed.
// Returns the first observer error.
absl::Status ReplayRun(const v1::RunRecord& run, const std::string& run_dir,
                       RunObserver* observer,
                       const std::function<bool(v1::PhaseKind)>& shows_failed);

// The per-agent records of the phases it saw (OnPhaseDone, OnPhaseFailed),
// for reports and result files that read them at the run's end (mdtest's,
// IOzone's, IO500's): OnRunEnd's record no longer has them (RunStore keeps
// memory bounded by moving them to the run directory), and nothing reads
// them back from run.json. The agents' full telemetry is kept only with
// `keep_telemetry` (IO500's phase files print its lines).
class PhaseAgents : public RunObserver {
 public:
  explicit PhaseAgents(bool keep_telemetry = false) : keep_telemetry_(keep_telemetry) {}
  absl::Status OnPhaseDone(const v1::PhaseRecord& phase) override;
  absl::Status OnPhaseFailed(const v1::PhaseRecord& phase) override;
  void Keep(const v1::PhaseRecord& phase);
  // `run` with the kept records in place of its phases' own (matched by
  // phase id and attempt); phases not kept are left as they are.
  v1::RunRecord Full(const v1::RunRecord& run) const;

 private:
  const bool keep_telemetry_;
  std::map<std::string, google::protobuf::RepeatedPtrField<v1::AgentPhaseRecord>> agents_;
};

// What a run's reports printed, in order: each piece is kept and passed on
// to `out` (may be empty). Its text is what summary.txt holds.
class ReportText {
 public:
  explicit ReportText(std::function<void(const std::string&)> out = nullptr)
      : out_(std::move(out)) {}
  void Print(const std::string& text);
  const std::string& text() const { return text_; }

 private:
  const std::function<void(const std::string&)> out_;
  std::string text_;
};

// RUN_DIR/summary.txt, written atomically: the one place it is written.
// Errors name the file.
absl::Status WriteSummaryTxt(const std::string& run_dir, const std::string& text);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RECORD_RUN_OBSERVER_H_
