// Clock offsets between the controller and an agent (RFC 5905 arithmetic):
// for an exchange sent at T1, received at T2, answered at T3 (agent clock)
// and received back at T4,
//   offset = ((T2 − T1) + (T3 − T4)) / 2     delay = (T4 − T1) − (T3 − T2)
// The sample with the smallest delay is trusted; its error is ≤ delay/2.
#ifndef LOCKSTEP_CONTROLLER_RUN_CLOCK_SYNC_H_
#define LOCKSTEP_CONTROLLER_RUN_CLOCK_SYNC_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace lockstep {

class AgentClient;

struct ClockSample {
  int64_t t1 = 0, t2 = 0, t3 = 0, t4 = 0;
};

struct ClockEstimate {
  int64_t offset_ns = 0;  // agent clock − controller clock
  int64_t delay_ns = 0;   // round trip of the trusted sample
  uint32_t samples = 0;
};

// REQUIRES: !samples.empty().
ClockEstimate EstimateFromSamples(const std::vector<ClockSample>& samples);

// Takes `count` samples from the agent's Clock RPC (attached session).
absl::StatusOr<ClockEstimate> EstimateClock(AgentClient* agent, int count);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_CLOCK_SYNC_H_
