// Fold: the one rule by which a test's figures come from its phase records.
// The live run applies it when a test ends (controller/run/coordinator.cc),
// `lockstep report` when it rebuilds a run from its journal
// (controller/results/journal_report.cc): the same records give the same
// summary rows and layers table, whichever wrote them.
#ifndef LOCKSTEP_CONTROLLER_RECORD_FOLD_H_
#define LOCKSTEP_CONTROLLER_RECORD_FOLD_H_

#include "lockstep/v1/results.pb.h"

namespace lockstep {

// Whether a phase record counts in a figure (summary rows, layers, reports,
// history's metrics): it is ok and not superseded (an attempt repeated for
// its start skew, record/ior_math.h IsSuperseded, which also reads the
// message of runs older than the error kind).
bool Counts(const v1::PhaseRecord& phase);

// Replaces `test`'s summary rows and layers table with those folded from its
// phase records:
// - a record counts as Counts says;
// - each phase of test.plan_specs gets one row, in the plan's order, a phase
//   with no counted record too (0 repetitions, as the live run prints it);
//   a phase that has records but no planned spec (an older run) follows, in
//   the order of its first record;
// - a row's layout (transfer, block, segments, tasks) is its last counted
//   record's spec: the clients a loss left; without one, the planned spec.
// `run` gives IOR's reorder options (TestReorderOf).
void FoldTest(const v1::RunRecord& run, v1::TestRecord* test);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RECORD_FOLD_H_
