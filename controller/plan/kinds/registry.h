// The table of controller-side phase kinds (controller/plan/phase_kind.h):
// one maker per kind, each defined in its own file of this folder and
// declared and listed in registry.cc.
#ifndef LOCKSTEP_CONTROLLER_PLAN_KINDS_REGISTRY_H_
#define LOCKSTEP_CONTROLLER_PLAN_KINDS_REGISTRY_H_

#include <vector>

#include "controller/plan/phase_kind.h"

namespace lockstep::kinds {

// Every kind, in wire order; made once, never destroyed.
const std::vector<const PhaseKindDef*>& Registry();

}  // namespace lockstep::kinds

#endif  // LOCKSTEP_CONTROLLER_PLAN_KINDS_REGISTRY_H_
