// The keys of the layered baselines' kinds (issue 42), read by
// controller/plan/kinds/net.cc and backend.cc into PhasePlan::Own<T>().
#ifndef LOCKSTEP_CONTROLLER_PLAN_KINDS_LAYERS_PLAN_H_
#define LOCKSTEP_CONTROLLER_PLAN_KINDS_LAYERS_PLAN_H_

#include <cstdint>
#include <string>

#include "controller/plan/kind_params.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// kind = "net": streams from each client agent to each server agent (or,
// without server agents, from each client to the next), for duration_seconds.
struct NetPlan : KindParamsOf<NetPlan> {
  uint32_t streams = 1;              // per pair of agents
  uint64_t message_bytes = 1 << 20;  // per send
  uint32_t duration_seconds = 10;
  uint32_t ping_count = 100;         // round trips per stream after its data
  uint64_t ping_bytes = 64;
  std::string interface;             // "" = the agents' own addresses
};

// kind = "backend": each server agent's storage without the network.
struct BackendPlan : KindParamsOf<BackendPlan> {
  std::string method = "file";       // "file" or "osd_bench"
  uint64_t bytes = 1ull << 30;       // per task (file) or per OSD (osd_bench)
  uint64_t block_bytes = 4ull << 20;
};

// The refusal of an agent older than wire minor kLayersWireMinor for a phase
// `p` of kind `kind` ("net", "backend") run by `who`; "" when it can.
std::string RefuseBeforeLayers(const char* kind, const std::string& phase, const std::string& who,
                               const v1::HostFacts& facts);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_KINDS_LAYERS_PLAN_H_
