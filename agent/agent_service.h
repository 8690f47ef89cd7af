// The gRPC face of an agent: thin handlers over AgentCore. Unary calls run
// on gRPC's synchronous thread pool (they may touch the disk); Start is a
// callback-API server stream with one reactor per call.
#ifndef LOCKSTEP_AGENT_AGENT_SERVICE_H_
#define LOCKSTEP_AGENT_AGENT_SERVICE_H_

#include <atomic>
#include <memory>
#include <string>

#include <grpcpp/server_builder.h>

#include "agent/agent_core.h"
#include "lockstep/v1/agent.grpc.pb.h"

namespace lockstep {

struct AgentServiceOptions {
  // With TLS: every call's peer certificate must name one of these (CN or
  // SAN); empty = any certificate that chains to the CA.
  bool require_tls_peer = false;
  std::vector<std::string> allowed_controllers;
  // Plaintext on loopback as root (--insecure): when set, every call must
  // come from a socket of root or of this agent's account (its owner read
  // from the kernel's socket table: agent/loopback_peer.h), to the port
  // this holds (stored once the server listens; 0 until then refuses all)
  // on `local_accounts_ip` (the listen address; empty: 127.0.0.1 or ::1).
  std::shared_ptr<const std::atomic<int>> local_accounts_port;
  std::string local_accounts_ip;
};

// The server settings every agent process uses (lockstep-agent and the test
// swarm alike): message sizes, the controller's keepalive pings allowed, no
// SO_REUSEPORT (one agent per port).
void ApplyAgentServerOptions(grpc::ServerBuilder* builder);

std::unique_ptr<grpc::Service> MakeAgentService(AgentCore* core,
                                                const AgentServiceOptions& options);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_AGENT_SERVICE_H_
