// Whether each host can make the threads a phase asks of it: every task is
// one thread on its agent (and each agent adds one monitor thread), over all
// the agents a host runs (several agents per host: containers, one per NUMA
// domain or mount). Checked from the agents' facts (HostFacts.thread_limit,
// threads_in_use: the tightest of kernel.threads-max, kernel.pid_max and the
// agent's cgroup pids.max) before each Prepare, so that a host out of pids
// is named with its limit instead of failing at thread creation.
//
// Pure functions of the agents' facts; the coordinator's thread.
#ifndef LOCKSTEP_CONTROLLER_RUN_HOST_LIMITS_H_
#define LOCKSTEP_CONTROLLER_RUN_HOST_LIMITS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "controller/run/agent_client.h"
#include "controller/run/run_error.h"

namespace lockstep {

// kBadPlan naming the phase, each host, its agents, the threads the phase
// adds there, those in use when its agents attached, the limit and its name,
// the figure needed and the fix, when in use + added exceeds the limit on a
// host. Hosts are told apart by boot id (HostFacts.clock_id; the host name
// when there is none). A kernel limit (threads-max, pid_max) counts the
// threads of all agents of the host; a cgroup's pids.max those of the agent
// that reported it (containers each have their own). A host whose agents
// report no limit (older agents) is not checked. `tasks_per_agent`: the
// phase's tasks on each client.
RunError CheckHostThreads(const std::string& phase_id, const std::vector<AgentClient*>& clients,
                          uint32_t tasks_per_agent);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_HOST_LIMITS_H_
