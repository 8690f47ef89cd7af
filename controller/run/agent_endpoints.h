// Which agents a run talks to, and how: the plan's agents over TLS (or
// plaintext with --insecure, loopback addresses only), or agents started
// here on loopback (--local N, or a plan that lists none).
// Called once by the coordinator's thread before any agent is contacted.
#ifndef LOCKSTEP_CONTROLLER_RUN_AGENT_ENDPOINTS_H_
#define LOCKSTEP_CONTROLLER_RUN_AGENT_ENDPOINTS_H_

#include <memory>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "controller/plan/plan.h"
#include "controller/run/coordinator.h"
#include "controller/run/local_agents.h"
#include "controller/run/run_error.h"

namespace lockstep {

struct AgentEndpoints {
  std::vector<AgentPlan> agents;  // address and role, in the plan's order
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  TlsFiles tls_files;  // empty for plaintext
  // The agents started here, if any; destroying it stops them.
  std::unique_ptr<LocalAgents> local;
  // The programs the local agents allow: the plan's command phases' (absolute).
  std::vector<std::string> local_allow_commands;
};

// Fills *out. kBadPlan: a relative phase dir that climbs out of the local
// agents' root, --insecure with a non-loopback agent, or no TLS material;
// kConnect: the local agents did not start; kBadPlan too for a command
// phase's program that is not on this host, with local agents.
RunError ResolveAgentEndpoints(const Plan& plan, const RunOptions& options,
                               AgentEndpoints* out);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_AGENT_ENDPOINTS_H_
