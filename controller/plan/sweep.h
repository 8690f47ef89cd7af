// Sweeps: a phase key given as a list ([[phase]] stripe_size = ["64k", "2m"])
// makes one test per value, test i taking value i of every list (lists of
// one plan are zipped, so they have one length). Which keys may sweep, the
// values a phase has in one test, and the label of a test.
#ifndef LOCKSTEP_CONTROLLER_PLAN_SWEEP_H_
#define LOCKSTEP_CONTROLLER_PLAN_SWEEP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "controller/plan/plan.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// The phase keys a list may be given for, in the README's order. Keys that
// name things (name, kind, dir, file_name), tie phases together
// (stonewall_count_from, find_newer_than) or steer the controller between
// phases (cache, keep, remove_files, repetitions) cannot sweep.
const std::vector<std::string>& SweepableKeys();
bool IsSweepableKey(const std::string& key);

// Copies the value of swept `key` from `from` (the phase as read for one
// test) into `to`. REQUIRES: IsSweepableKey(key).
void CopySweptKey(const std::string& key, const PhasePlan& from, PhasePlan* to);

// `phase` (one of plan.phases) as it runs in test `test`: its swept keys at
// that test's values, tasks_per_agent = {that test's}, sweep and points
// cleared. Without a sweep: the phase itself.
PhasePlan ResolvePhase(const Plan& plan, const PhasePlan& phase, uint32_t test);

// Every test's phases as they run, each resolved once (ResolvePhase):
// tests[t][i] is plan.phases[i] in test t. A run resolves its plan once,
// before its first check: the file-system checks, the kinds' client fit and
// CompileTest (controller/plan/compile.h) read it, and nothing after them
// resolves a phase again (a recompile after a loss neither). It holds every
// test's phases at once, as the compiled tests do; the dry run, which need
// not, resolves each test's phases as it reaches them (plan_smoke.h).
struct ResolvedPlan {
  std::vector<std::vector<PhasePlan>> tests;
};
ResolvedPlan ResolvePlan(const Plan& plan);

// Sets PhaseSweep::shared on every phase's sweeps, in time linear in the
// plan (ParsePlan does, once the phases are read).
void MarkSharedSweeps(Plan* plan);

// The swept keys' values in test `test`, in plan order: a key that every
// phase of the plan sweeps with the same values once, with phase "";
// otherwise one per phase. Empty without a sweep.
std::vector<v1::SweepValue> SweepValuesOf(const Plan& plan, uint32_t test);

// "stripe_size=64k checksums=false", a phase's own key as
// "w:stripe_size=64k"; "" without a sweep.
std::string SweepLabel(const google::protobuf::RepeatedPtrField<v1::SweepValue>& sweep);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_SWEEP_H_
