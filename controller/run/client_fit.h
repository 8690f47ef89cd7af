// Before the first phase, what the phases' kinds choose and refuse from the
// client agents' facts (HostFacts at Attach), asked through
// PhaseKindDef::FitToClients and CheckOnClients (controller/plan/phase_kind.h;
// CompileTest applies the choices with ApplyFit): today the AI kinds' dataset, sized to the
// clients' memory (dataset_memory_multiple) and checked against their free
// space. The run layer names no kind here either.
//
// Pure functions of the plan and the facts; the coordinator's thread.
#ifndef LOCKSTEP_CONTROLLER_RUN_CLIENT_FIT_H_
#define LOCKSTEP_CONTROLLER_RUN_CLIENT_FIT_H_

#include <vector>

#include "controller/plan/phase_kind.h"
#include "controller/plan/plan.h"
#include "controller/plan/sweep.h"
#include "controller/run/agent_client.h"
#include "controller/run/run_error.h"

namespace lockstep {

// FitToClients of every phase of `plan` into *fit, then, unless `force`,
// CheckOnClients of every phase in every test (`resolved`: ResolvePlan of
// `plan`): kBadPlan with every refusal, one line each. Empty otherwise.
RunError FitPhasesToClients(const Plan& plan, const ResolvedPlan& resolved,
                            const std::vector<AgentClient*>& clients, bool force, ClientFit* fit);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_CLIENT_FIT_H_
