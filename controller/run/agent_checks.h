// What each client agent must be able to do for the plan's phases, asked of
// the phases' kinds (PhaseKindDef::RefuseAgent, AdaptForAgent and
// LocalPrograms, controller/plan/phase_kind.h): the run layer names no kind.
// A command phase's program, for one, is checked here against each agent's
// allow_commands before anything runs (the agent checks again).
//
// Pure functions of the plan and the agents' facts; the coordinator's thread.
#ifndef LOCKSTEP_CONTROLLER_RUN_AGENT_CHECKS_H_
#define LOCKSTEP_CONTROLLER_RUN_AGENT_CHECKS_H_

#include <string>
#include <vector>

#include "controller/plan/phase_kind.h"
#include "controller/plan/plan.h"
#include "controller/run/agent_client.h"
#include "controller/run/run_error.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// kBadPlan, naming the phase, the agent (address and host) and the fix,
// when `agent` cannot run `phase`; empty otherwise.
RunError CheckAgentForPhase(const PhasePlan& phase, const AgentClient& agent);

// The agents that run a phase of `kind` (PhaseKindDef::Takers) among the
// run's `clients` and `servers`, clients first, each in rank order.
std::vector<AgentClient*> PhaseTakersOf(v1::PhaseKind kind, const std::vector<AgentClient*>& clients,
                                        const std::vector<AgentClient*>& servers);
// What the kinds know of those agents.
std::vector<TakerFacts> TakerFactsOf(const std::vector<AgentClient*>& takers);

// Before the first phase, for every phase of `plan`: the kind's judgment of
// the agents that would run it as a whole (RefuseTakers), and
// CheckAgentForPhase for each of them; all refusals in one error, one line
// each.
RunError CheckPhasesOnAgents(const Plan& plan, const std::vector<AgentClient*>& clients,
                             const std::vector<AgentClient*>& servers);

// A client's copy of a phase's spec (a command's argv[0]: the program on
// that agent).
void AdaptSpecForAgent(const v1::HostFacts& facts, v1::PhaseSpec* spec);

// `lockstep run --local`: the programs the plan's phases run, each by its
// absolute path, sorted and once each, for the local agents to allow.
// kBadPlan naming the phase when a program is not found or not executable.
RunError LocalPrograms(const Plan& plan, std::vector<std::string>* programs);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_AGENT_CHECKS_H_
