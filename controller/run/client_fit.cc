#include "controller/run/client_fit.h"

#include <string>

#include "absl/strings/str_join.h"
#include "controller/plan/sweep.h"

namespace lockstep {

RunError FitPhasesToClients(const Plan& plan, const std::vector<AgentClient*>& clients,
                            bool force, ClientFit* fit) {
  std::vector<ClientFacts> view;
  view.reserve(clients.size());
  for (const AgentClient* c : clients) view.push_back({c->address(), &c->facts});
  for (const PhasePlan& p : plan.phases) KindOf(p.kind).FitToClients(p, view, fit);
  if (force || view.empty()) return {};
  std::vector<std::string> refused;
  for (const PhasePlan& declared : plan.phases) {
    for (uint32_t t = 0; t < plan.tests(); ++t) {
      KindOf(declared.kind).CheckOnClients(ResolvePhase(plan, declared, t), view, *fit, &refused);
    }
  }
  if (refused.empty()) return {};
  return Fail(RunFailure::kBadPlan, absl::StrJoin(refused, "\n"));
}

}  // namespace lockstep
