// `lockstep report RUN_DIR`: the summary of a run rebuilt from its journal,
// for a run whose controller died before writing run.json (or to print a
// finished run again).
#ifndef LOCKSTEP_CONTROLLER_RESULTS_JOURNAL_REPORT_H_
#define LOCKSTEP_CONTROLLER_RESULTS_JOURNAL_REPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

struct RebuiltRun {
  v1::RunRecord record;   // from run.json when present, else from the journal
  std::string text;       // the run's report (RenderRunReport), then FormatPhaseStarts
  int torn_lines = 0;     // journal lines that did not parse (a crash mid-write)
  bool from_journal = false;
  // From the journal of a run still going (its controller holds the journal:
  // record/journal.h JournalIsHeld): status "running", and nothing written.
  bool running = false;
  // What a damaged telemetry side file left out of `record` (its phases'
  // telemetry lines); "" when whole or absent.
  std::string warning;
};

// Reads RUN_DIR/journal.jsonl (and run.json if present) and the agents' full
// telemetry from its telemetry.pb.gz. Errors name the file and line. A
// complete run.json wins over the journal.
absl::StatusOr<RebuiltRun> RebuildRun(const std::string& run_dir);

// When `run` came from the journal (run.json missing) of a run that is not
// running: writes run.json (the status the run's end line gives, by the live
// run's rule (record/run_status.h); "interrupted" when the journal has no end
// line: the controller stopped first) and summary.txt atomically; nothing
// otherwise (a live run's controller writes its own run.json: one written
// now would later win over the whole journal if that controller died).
absl::Status WriteRebuiltRun(const std::string& run_dir, const RebuiltRun& run);

// Per phase with a recorded start (lead, start margins) or role telemetry:
//   "#   t0-r0-w: lead 29.1 ms, slowest agent's start margin 16.0 ms (ADDR), ..."
//   "#     clients (4 agents, 1 host): busy 1.2 of 2 cores (max 1.9); cpu ..."
// after a header line; empty when no phase has either (older runs).
// RebuildRun's text ends with it.
std::string FormatPhaseStarts(const v1::RunRecord& run);

// The text of a run's report as it printed it (RenderRunReport).
std::string FormatRunSummary(const v1::RunRecord& run);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_JOURNAL_REPORT_H_
