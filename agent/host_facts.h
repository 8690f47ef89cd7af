// What an agent reports about its host (Identify / Attach).
#ifndef LOCKSTEP_AGENT_HOST_FACTS_H_
#define LOCKSTEP_AGENT_HOST_FACTS_H_

#include <string>
#include <vector>

#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// Gathers host name, kernel, OS, cores, memory, the allowed roots' file
// systems and free space, whether drop_caches is permitted, and the clock
// discipline when it can tell. Never fails: unknown facts stay empty.
v1::HostFacts GatherHostFacts(v1::Role role, const std::vector<std::string>& roots,
                              const std::string& instance_id);

// The hardware facts of the host under `root` ("/" on a real host; a temp
// directory holding proc/ and sys/ in tests): cpu_model from
// ROOT/proc/cpuinfo, nics from ROOT/sys/class/net (up, not loopback: speed,
// MTU, kind), block_devices from ROOT/sys/block (not loop, ram, zram, dm-:
// model, size, rotational). Unreadable facts stay empty; never fails.
void GatherHardwareFacts(const std::string& root, v1::HostFacts* facts);

// The host's thread limit under `root` (as above): of kernel.threads-max and
// kernel.pid_max against the threads of the whole system (ROOT/proc/loadavg)
// and the agent's cgroup pids.max against its pids.current (cgroup v2,
// ROOT/proc/self/cgroup), the one with the least room left goes to
// thread_limit, thread_limit_name and threads_in_use. Unreadable: left 0.
void GatherThreadLimit(const std::string& root, v1::HostFacts* facts);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_HOST_FACTS_H_
