// The gRPC face of an agent: thin handlers over AgentCore. Unary calls run
// on gRPC's synchronous thread pool (they may touch the disk); Start is a
// callback-API server stream with one reactor per call.
#ifndef LOCKSTEP_AGENT_AGENT_SERVICE_H_
#define LOCKSTEP_AGENT_AGENT_SERVICE_H_

#include <memory>

#include "agent/agent_core.h"
#include "lockstep/v1/agent.grpc.pb.h"

namespace lockstep {

std::unique_ptr<grpc::Service> MakeAgentService(AgentCore* core);

// absl::Status → grpc::Status with the same code and message.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_AGENT_SERVICE_H_
