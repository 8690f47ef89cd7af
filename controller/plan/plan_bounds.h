// The bounds of a plan as a whole (controller/plan/limits.h), checked on the
// TOML document before any table is read, so that a huge plan is refused in
// time linear in its size, with the key, its line and the limit: every
// string and key at most kMaxPlanStringBytes (a command's argv/env entries
// kMaxCommandArgBytes), every list at most kMaxSweepPoints values (argv/env
// kMaxCommandArgs), at most kMaxPlanPhases [[phase]] and kMaxPlanAgents
// [[agent]] tables; and, once read, tests × phases × repetitions at most
// kMaxPhaseRuns.
#ifndef LOCKSTEP_CONTROLLER_PLAN_PLAN_BOUNDS_H_
#define LOCKSTEP_CONTROLLER_PLAN_PLAN_BOUNDS_H_

#include <string>

#include "absl/status/status.h"
#include "controller/plan/plan.h"

#include <toml++/toml.h>

namespace lockstep {

// InvalidArgument "SOURCE:LINE:COL: KEY: WHAT is N, the most is LIMIT; FIX".
absl::Status CheckPlanBounds(const toml::table& root, const std::string& source);

// tests × phases × repetitions of a parsed plan, at most kMaxPhaseRuns.
absl::Status CheckPhaseRuns(const Plan& plan);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_PLAN_BOUNDS_H_
