// One [[phase]] table of a plan: its keys read and checked against each
// other and against the phase's kind. What the phases of a plan must agree
// on (the sweep length, the repetitions) is gathered here and checked across
// phases by ParsePlan (plan.cc), the only caller.
#ifndef LOCKSTEP_CONTROLLER_PLAN_PHASE_TABLE_H_
#define LOCKSTEP_CONTROLLER_PLAN_PHASE_TABLE_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "controller/plan/plan.h"

#include <toml++/toml.h>

namespace lockstep {

// What the phases read so far set that later phases must agree with.
struct PhaseAgreement {
  // Phase name -> the repetitions it sets itself (IOR repeats all phases of
  // a test together, so they must be equal).
  std::map<std::string, uint64_t> repetitions;
  size_t sweep_len = 1;     // the length of the list-valued keys (1: no sweep)
  std::string sweep_owner;  // "phase 'w' key 'stripe_size'": who set sweep_len
  std::set<std::string> names;  // of the phases read so far (unique: checked in O(log n))
};

// Reads [[phase]] number `index` (from 0) of `source` and appends it to
// plan->phases; its name must differ from those already there, and a sweep
// must have agreement->sweep_len values. InvalidArgument names the position,
// the phase, the key and the fix.
absl::Status ParsePhase(const toml::table& table, const std::string& source, int index,
                        Plan* plan, PhaseAgreement* agreement);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_PHASE_TABLE_H_
