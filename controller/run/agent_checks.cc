#include "controller/run/agent_checks.h"

#include <set>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/plan/phase_kind.h"

namespace lockstep {

RunError CheckAgentForPhase(const PhasePlan& phase, const AgentClient& agent) {
  const std::string who =
      absl::StrFormat("agent %s (host %s)", agent.address(), agent.facts.hostname());
  std::string refused = KindOf(phase.kind).RefuseAgent(phase, who, agent.facts);
  if (refused.empty()) return {};
  return Fail(RunFailure::kBadPlan, std::move(refused));
}

std::vector<AgentClient*> PhaseTakersOf(v1::PhaseKind kind, const std::vector<AgentClient*>& clients,
                                        const std::vector<AgentClient*>& servers) {
  const PhaseKindDef& k = KindOf(kind);
  std::vector<AgentClient*> out;
  if (k.Takers() != PhaseTakers::kServers) out = clients;
  if (k.Takers() == PhaseTakers::kClients) return out;
  for (AgentClient* s : servers) {
    if (k.TakesServer(s->role())) out.push_back(s);
  }
  return out;
}

std::vector<TakerFacts> TakerFactsOf(const std::vector<AgentClient*>& takers) {
  std::vector<TakerFacts> out;
  for (const AgentClient* a : takers) {
    out.push_back({.address = a->address(), .facts = &a->facts, .server = a->role() != v1::CLIENT});
  }
  return out;
}

RunError CheckPhasesOnAgents(const Plan& plan, const std::vector<AgentClient*>& clients,
                             const std::vector<AgentClient*>& servers) {
  std::vector<std::string> refused;
  for (const PhasePlan& p : plan.phases) {
    const std::vector<AgentClient*> takers = PhaseTakersOf(p.kind, clients, servers);
    std::string whole = KindOf(p.kind).RefuseTakers(p, TakerFactsOf(takers));
    if (!whole.empty()) {
      refused.push_back(std::move(whole));
      continue;
    }
    for (const AgentClient* c : takers) {
      if (RunError e = CheckAgentForPhase(p, *c)) refused.push_back(std::move(e.message));
    }
  }
  if (refused.empty()) return {};
  return Fail(RunFailure::kBadPlan, absl::StrJoin(refused, "\n"));
}

void AdaptSpecForAgent(const v1::HostFacts& facts, v1::PhaseSpec* spec) {
  KindOf(spec->kind()).AdaptForAgent(facts, spec);
}

RunError LocalPrograms(const Plan& plan, std::vector<std::string>* programs) {
  std::set<std::string> found;
  for (const PhasePlan& p : plan.phases) {
    if (absl::Status s = KindOf(p.kind).LocalPrograms(p, &found); !s.ok()) {
      return Fail(RunFailure::kBadPlan, std::string(s.message()));
    }
  }
  programs->assign(found.begin(), found.end());
  return {};
}

}  // namespace lockstep
