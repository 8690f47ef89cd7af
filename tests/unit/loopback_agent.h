// A fake agent (a v1::Agent::Service of the test's) served on a real
// loopback gRPC port, and the controller's AgentClient to it (plaintext,
// session "s1"), for the tests of the controller's calls.
#ifndef LOCKSTEP_TESTS_UNIT_LOOPBACK_AGENT_H_
#define LOCKSTEP_TESTS_UNIT_LOOPBACK_AGENT_H_

#include <chrono>
#include <memory>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_format.h"
#include "controller/run/agent_client.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep::testing {

template <typename Service>
struct LoopbackAgent {
  explicit LoopbackAgent(v1::Role role) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&agent);
    server = builder.BuildAndStart();
    client = std::make_unique<AgentClient>(absl::StrFormat("127.0.0.1:%d", port), role,
                                           grpc::InsecureChannelCredentials());
    client->session_id = "s1";
  }
  ~LoopbackAgent() { server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1)); }

  Service agent;
  int port = 0;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<AgentClient> client;
};

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_UNIT_LOOPBACK_AGENT_H_
