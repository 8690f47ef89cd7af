// A run's status ("complete", "partial", "failed", "interrupted") from how
// it ended: the one rule, used by the live run (run/coordinator) for
// run.json and by `lockstep report RUN_DIR` for a run rebuilt from its
// journal (results/journal_report), which reads the run's RunEnd back from
// the journal's last line.
#ifndef LOCKSTEP_CONTROLLER_RECORD_RUN_STATUS_H_
#define LOCKSTEP_CONTROLLER_RECORD_RUN_STATUS_H_

#include <string>

#include "lockstep/v1/results.pb.h"

namespace lockstep {

// interrupted: INTERRUPTED. partial: a failure after the first test ran to
// its end (its summary rows stand; not for AU_BELOW_THRESHOLD, which
// invalidates the run), or a run that went on without a lost agent. failed:
// any other failure. complete: otherwise.
std::string RunStatusOf(const v1::RunEnd& end);

// Sets `run`'s status, error and finished_at from how it ended, and the
// status and error of its agents lost on the way (matched by address): the
// live run and a rebuild from the journal's run_end line (record/journal.h).
void ApplyRunEnd(const v1::RunEnd& end, v1::RunRecord* run);

// A failed phase's verification files stay for inspection: they are added
// to run->kept_files (host:/path, as the phase names them); nothing for a
// phase that is ok. The live run (when a verification fails) and the
// rebuild from the journal (each phase line) both apply it.
void KeepFailedVerificationFiles(const v1::PhaseRecord& phase, v1::RunRecord* run);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RECORD_RUN_STATUS_H_
