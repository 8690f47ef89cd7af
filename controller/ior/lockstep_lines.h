// Lockstep's own lines of a run's report, each starting with '#': the run
// and its agents, a test's O_DIRECT mark, a phase's notes, extra rows, skew,
// wear-out tail and telemetry, the timed removals, a test's start-skew and
// latency table, the status and the results directory.
//
// IOR's report (ior_report.h) interleaves them with IOR's own lines; the
// reports of commands that print another tool's layout (mdtest, IOzone,
// IO500) print them alone through LockstepLinesObserver. Each method returns
// the text for one event of controller/record/run_observer.h.
//
// Not thread-safe: one report's thread calls it.
#ifndef LOCKSTEP_CONTROLLER_IOR_LOCKSTEP_LINES_H_
#define LOCKSTEP_CONTROLLER_IOR_LOCKSTEP_LINES_H_

#include <cstdint>
#include <map>
#include <string>

#include "controller/record/run_observer.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

class LockstepLines {
 public:
  // The run, its directory and every agent with its clock offset.
  // Remembers each agent's host name, for the command phases' and the
  // telemetry lines.
  std::string AgentsReady(const v1::RunRecord& run);
  // "# O_DIRECT : yes" when a phase of the test uses O_DIRECT; the caller
  // says when the test's header is printed (once per test).
  static std::string TestStarted(const v1::TestRecord& test);
  // A phase's notes (ReportNotes of its kind), extra rows, skew mark,
  // wear-out tail and telemetry lines (TelemetryLines of the agents' full
  // telemetry, with the host names from AgentsReady; a record of earlier
  // versions: its telemetry_lines).
  std::string PhaseDone(const v1::PhaseRecord& phase) const;
  // A Lockstep note (a warning, a repeat, an agent lost), '#' per line.
  static std::string Note(const std::string& text);
  // A timed removal of the files (IOR 4.1 prints no row).
  static std::string FilesRemoved(double seconds, uint32_t iter);
  // The start-skew and latency table of a test's phases.
  static std::string TestDone(const v1::TestRecord& test);
  // The status (when not complete) and where the results are.
  static std::string Footer(const v1::RunRecord& run, const std::string& run_dir);

 private:
  std::map<std::string, std::string> host_by_address_;  // from AgentsReady
};

// Lockstep's lines alone, as a report: for the commands whose tool's own
// layout is another observer (lockstep mdtest, iozone, io500). `out` must
// outlive it.
class LockstepLinesObserver : public RunObserver {
 public:
  explicit LockstepLinesObserver(ReportText* out) : out_(out) {}
  absl::Status OnAgentsReady(const v1::RunRecord& run) override;
  absl::Status OnTestStarted(const v1::TestRecord& test, const v1::PhaseRecord& first) override;
  absl::Status OnPhaseDone(const v1::PhaseRecord& phase) override;
  absl::Status OnFilesRemoved(double seconds, uint32_t iter) override;
  absl::Status OnTestDone(const v1::TestRecord& test) override;
  absl::Status OnNote(const std::string& text) override;
  absl::Status OnRunEnd(const v1::RunRecord& run, const std::string& run_dir) override;

 private:
  absl::Status Print(const std::string& text);
  ReportText* const out_;
  LockstepLines lines_;
  int started_test_ = -1;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IOR_LOCKSTEP_LINES_H_
