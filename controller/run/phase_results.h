// What the coordinator makes of its agents' answers for one phase record:
// agent instants in the controller's clock, the telemetry lines printed
// under a result, and the bound on the start skew's error. Pure functions.
#ifndef LOCKSTEP_CONTROLLER_RUN_PHASE_RESULTS_H_
#define LOCKSTEP_CONTROLLER_RUN_PHASE_RESULTS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lockstep/v1/agent.pb.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// Moves every instant `task` has (the *_unix_ns fields the agent set, not
// the zero ones) from the agent's clock to the controller's, given the
// agent's `offset_ns` (agent clock − controller clock).
void ToControllerClock(int64_t offset_ns, v1::TaskResult* task);

// One line per role, like the seed reports:
//   "  clients (2 hosts): cpu 40% user, 12% sys, 3% iowait; busy 1.2 of 8 cores; ..."
// averaging the agents' telemetry over the phase; a host with several agents
// counts once. `host_by_address`: each agent's host name. Then one line per
// host with its busiest processes ("  n01 top cpu: lmdd 100% (1 CPU),
// ptlrpcd 5%"), as seed report 003 lists the client loads.
std::vector<std::string> TelemetryLines(const v1::PhaseRecord& phase,
                                        const std::map<std::string, std::string>& host_by_address);

// How wrong a start skew measured across agents with these clock offset
// uncertainties may be: the two largest, added (0 with fewer than two).
int64_t StartSkewUncertaintyNs(std::vector<int64_t> clock_uncertainties_ns);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_PHASE_RESULTS_H_
