// A plan rendered back as the TOML `lockstep run` takes: what the front ends
// (ior, mdtest, iozone, io500, bonnie) store as plan.toml for the plans they
// translate. ParsePlan of the text gives the plan back.
#ifndef LOCKSTEP_CONTROLLER_PLAN_PLAN_TOML_H_
#define LOCKSTEP_CONTROLLER_PLAN_PLAN_TOML_H_

#include <string>

#include "controller/plan/plan.h"

namespace lockstep {

// [run] name, repetitions, seed; every [[agent]]; every [[phase]] with its
// shared keys and its kind's (PhaseKindDef::WriteToml).
std::string PlanToToml(const Plan& plan);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_PLAN_TOML_H_
