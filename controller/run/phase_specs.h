// What the run layer adds to a compiled spec (controller/plan/compile.h)
// from what happened before it: find's -newer instant, the stonewall count
// a phase agreed on, a client's clock.
#ifndef LOCKSTEP_CONTROLLER_RUN_PHASE_SPECS_H_
#define LOCKSTEP_CONTROLLER_RUN_PHASE_SPECS_H_

#include <cstdint>
#include <vector>

#include "controller/plan/plan.h"
#include "lockstep/v1/agent.pb.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// A phase whose kind carries an earlier phase's start instant
// (PhaseKindDef::StartInstantOf: find_newer_than, find -newer): that
// phase's start (PhaseRecord.start_at_unix_ns, controller clock) in
// repetition `rep` of `test`, its last attempt (the one accepted), set in
// *base by the kind. The plan runs it earlier in the same repetition;
// without a record of it (it cannot be: a failed phase ends the repetition)
// the spec is unchanged (find without -newer). Other phases: unchanged.
void SetEarlierStart(const PhasePlan& phase, const v1::TestRecord& test, uint32_t rep,
                     v1::PhaseSpec* base);

// The hand-off hook for stonewall_count_from: the count the tasks of a
// stonewalled phase agreed on (the most items, mdtest -W, or pairs, IOR -D
// with wear-out, any task had done at the wall; every task continued to it),
// for PhaseSpec.stonewall_count of the phases that name it. 0 when no task
// of `from` recorded a stonewall.
uint64_t AgreedStonewallCount(const v1::PhaseRecord& from);

// A client's copy of a spec in that client's clock: the instants it carries
// (find_newer_unix_ns) shifted by `offset_ns` (agent clock − controller
// clock, the roster's ClockEstimate), as StartRequest.start_at_unix_ns is.
void ToAgentClock(int64_t offset_ns, v1::PhaseSpec* spec);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_PHASE_SPECS_H_
