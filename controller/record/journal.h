// journal.jsonl, the run's one truth: the lines a run appends as it goes
// (run/run_store.h writes them, each fsynced) and the one reading of them
// that gives a run's tests back (results/journal_report.h: `lockstep report`
// of a run whose controller died, and the run.json it writes back).
//   {"test_start": TestRecord}  as each test begins: the test's record as
//                               the run began it (layout, repetitions, sweep,
//                               started_at, plan_specs), no phases;
//   PhaseRecord                 as each phase attempt ends;
//   {"files_removed": ...}      after a repetition's timed removal: IOR's
//                               remove row, of the phase journaled last;
//   {"run_end": RunEnd}         as the run ends, its last line.
// A journal from before test_start has phase and end lines only: its tests
// are begun from their first phase line (ReplayedJournal.inferred_tests).
#ifndef LOCKSTEP_CONTROLLER_RECORD_JOURNAL_H_
#define LOCKSTEP_CONTROLLER_RECORD_JOURNAL_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/string_view.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// The test_start line of `test` (no newline): its phases, summary and
// layers are left out whatever `test` holds.
std::string JournalTestStartLine(const v1::TestRecord& test);

// The files_removed line of `phase`'s remove_row (no newline).
std::string JournalFilesRemovedLine(const v1::PhaseRecord& phase);

// The run_end line (no newline).
std::string JournalEndLine(const v1::RunEnd& end);

// The RunEnd of a line JournalEndLine wrote; nullopt for any other line.
std::optional<v1::RunEnd> ParseJournalEndLine(absl::string_view line);

// Whether a live controller holds RUN_DIR/journal.jsonl (its RunStore's
// flock): the run is still going. False when the file cannot be opened, or
// its controller died (the kernel released the lock).
bool JournalIsHeld(const std::string& run_dir);

// Lines are read with a later version's unknown fields left out; a line
// that does not parse, or is no phase and no mark this version knows, is
// counted in torn_lines.
struct ReplayedJournal {
  std::optional<v1::RunEnd> end;      // the run_end line's; none: the controller died first
  int torn_lines = 0;                 // lines left out (a crash mid-append)
  std::set<uint32_t> inferred_tests;  // begun from a phase line: no test_start line
};

// Appends the journal's tests to `run` in the order they began, each with
// its phase lines in journal order (a remove row on the phase it names), and
// the files a failed verification kept to run.kept_files, as the live run
// does. A test with a test_start line has that
// header as the live run recorded it; one without (an older journal) gets
// its layout from its first phase line, started_at from its Prepare, one
// plan spec per phase name from its first record, and the repetitions its
// lines reached (the caller may know better: the plan the run kept).
// Summary rows and layers are not made here: the caller folds each test
// (record/fold.h) once it has its header complete.
ReplayedJournal ReplayJournal(absl::string_view text, v1::RunRecord* run);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RECORD_JOURNAL_H_
