#include "controller/run/client_fit.h"

#include <string>

#include "absl/strings/str_join.h"

namespace lockstep {

RunError FitPhasesToClients(const Plan& plan, const ResolvedPlan& resolved,
                            const std::vector<AgentClient*>& clients, bool force, ClientFit* fit) {
  std::vector<ClientFacts> view;
  view.reserve(clients.size());
  for (const AgentClient* c : clients) view.push_back({c->address(), &c->facts});
  for (const PhasePlan& p : plan.phases) KindOf(p.kind).FitToClients(p, view, fit);
  if (force || view.empty()) return {};
  std::vector<std::string> refused;
  for (size_t i = 0; i < plan.phases.size(); ++i) {
    for (const std::vector<PhasePlan>& test : resolved.tests) {
      KindOf(plan.phases[i].kind).CheckOnClients(test[i], view, *fit, &refused);
    }
  }
  if (refused.empty()) return {};
  return Fail(RunFailure::kBadPlan, absl::StrJoin(refused, "\n"));
}

}  // namespace lockstep
