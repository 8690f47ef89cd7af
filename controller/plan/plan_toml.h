// A plan rendered back as the TOML `lockstep run` takes: what the front ends
// (ior, mdtest, iozone, io500, bonnie) store as plan.toml for the plans they
// translate. ParsePlan of the text gives the plan back, each key at its
// first test's value: a sweep (a list) is not written back as one (front
// ends build none).
#ifndef LOCKSTEP_CONTROLLER_PLAN_PLAN_TOML_H_
#define LOCKSTEP_CONTROLLER_PLAN_PLAN_TOML_H_

#include <string>

#include "absl/status/status.h"
#include "controller/plan/plan.h"

namespace lockstep {

// [run] name, repetitions, seed and the cache barrier; every [[agent]];
// every [[phase]] with its shared keys and its kind's (PhaseKindDef::
// WriteToml), strings escaped (TomlQuoted).
std::string PlanToToml(const Plan& plan);

// A front end's plan: plan->text = PlanToToml(*plan), then that text put
// through every check `lockstep run` makes of a plan file (ParsePlan), so
// that a front end cannot run what `lockstep run plan.toml` of its own
// run directory would refuse. InvalidArgument naming `tool` ("ior") and
// ParsePlan's message (whose line numbers are of the run's plan.toml).
absl::Status SetPlanText(Plan* plan, const std::string& tool);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_PLAN_TOML_H_
