#include "controller/run/host_limits.h"

#include <algorithm>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace lockstep {

RunError CheckHostThreads(const std::string& phase_id, const std::vector<AgentClient*>& clients,
                          uint32_t tasks_per_agent) {
  struct Host {
    std::string name;
    uint32_t agents = 0;
    uint64_t limit = 0;   // the lowest any of its agents reported
    uint64_t in_use = 0;  // the most any of them saw
    std::string limit_name;
  };
  std::map<std::string, Host> hosts;
  for (const AgentClient* c : clients) {
    const v1::HostFacts& f = c->facts;
    // A kernel limit is the host's, shared by all its agents; a cgroup's
    // pids.max is the agent's own (containers on one host each have theirs,
    // and a cgroup namespace shows each the same path).
    std::string key = f.clock_id().empty() ? f.hostname() : f.clock_id();
    if (f.thread_limit() > 0 && !absl::StartsWith(f.thread_limit_name(), "kernel.")) {
      key += "|" + c->address();
    }
    Host& h = hosts[key];
    h.name = f.hostname();
    ++h.agents;
    if (f.thread_limit() == 0) continue;
    if (h.limit == 0 || f.thread_limit() < h.limit) {
      h.limit = f.thread_limit();
      h.limit_name = f.thread_limit_name();
    }
    h.in_use = std::max<uint64_t>(h.in_use, f.threads_in_use());
  }
  std::vector<std::string> refused;
  for (const auto& [key, h] : hosts) {
    if (h.limit == 0) continue;
    const uint64_t added = static_cast<uint64_t>(h.agents) * (uint64_t{tasks_per_agent} + 1);
    const uint64_t needed = h.in_use + added;
    if (needed <= h.limit) continue;
    // Room to spare: twice the need (threads come and go around a run).
    const uint64_t suggest = std::max<uint64_t>(needed * 2, 65536);
    const std::string raise =
        absl::StartsWith(h.limit_name, "kernel.")
            ? absl::StrFormat("sysctl -w %s=%u", h.limit_name, suggest)
            : absl::StrFormat("set that cgroup's pids.max to %u", suggest);
    refused.push_back(absl::StrFormat(
        "phase %s: host %s would start %u threads (%u agents x (%u tasks + 1)) with %u in use "
        "when its agents attached: %u in all, past its limit of %u (%s); raise it (%s) or run "
        "fewer tasks or agents on %s",
        phase_id, h.name, added, h.agents, tasks_per_agent, h.in_use, needed, h.limit,
        h.limit_name, raise, h.name));
  }
  if (refused.empty()) return {};
  return Fail(RunFailure::kBadPlan, absl::StrJoin(refused, "\n"));
}

}  // namespace lockstep
