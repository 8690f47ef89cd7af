// What the coordinator makes of its agents' answers for one phase record:
// agent instants in the controller's clock and the bound on the start skew's
// error. Pure functions.
#ifndef LOCKSTEP_CONTROLLER_RUN_PHASE_RESULTS_H_
#define LOCKSTEP_CONTROLLER_RUN_PHASE_RESULTS_H_

#include <cstdint>
#include <vector>

#include "lockstep/v1/agent.pb.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// Moves every instant `task` has (the *_unix_ns fields the agent set, not
// the zero ones) from the agent's clock to the controller's, given the
// agent's `offset_ns` (agent clock − controller clock).
void ToControllerClock(int64_t offset_ns, v1::TaskResult* task);

// How wrong a start skew measured across agents with these clock offset
// uncertainties may be: the two largest, added (0 with fewer than two).
int64_t StartSkewUncertaintyNs(std::vector<int64_t> clock_uncertainties_ns);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_PHASE_RESULTS_H_
