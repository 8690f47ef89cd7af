// What a phase asks of its client agents: the PhaseSpec of one phase of one
// test and repetition, and each client's copy with the first of its ranks.
// Pure functions of the plan.
#ifndef LOCKSTEP_CONTROLLER_RUN_PHASE_SPECS_H_
#define LOCKSTEP_CONTROLLER_RUN_PHASE_SPECS_H_

#include <cstdint>
#include <vector>

#include "controller/plan/plan.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// The spec of `phase` in test `test_id`, repetition `rep`, run by
// `client_count` clients; phase_id "t<test>/r<rep>/<name>".
// `ignore_free_space`: --force.
v1::PhaseSpec BaseSpecOf(const Plan& plan, const PhasePlan& phase, uint32_t test_id,
                         uint32_t rep, size_t client_count, bool ignore_free_space);

// `base` for each of `client_count` clients in rank order: client i runs
// ranks i × tasks … (i + 1) × tasks − 1.
std::vector<v1::PhaseSpec> ClientSpecsOf(const v1::PhaseSpec& base, size_t client_count);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_PHASE_SPECS_H_
