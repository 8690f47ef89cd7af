#include "agent/start_choice.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace lockstep {

StartChoice ChooseStartOnHost(const std::vector<pthread_t>& parked, int64_t at_unix_ns,
                              int64_t spin_duration_ns, uint32_t host_agents,
                              int64_t first_transfer_after_ns, bool spin_start,
                              bool allow_realtime) {
  StartChoice choice;
  const StartHost host = ReadStartHost();
  const uint32_t host_tasks = std::max<uint32_t>(host_agents, 1) * parked.size();
  const bool cores_fit = host_tasks <= host.usable_cores();
  const bool fits = spin_start && spin_duration_ns > 0 && cores_fit;
  const bool sleep = !spin_start && cores_fit;
  choice.host_note = absl::StrFormat(
      "host: %u tasks on %u usable cores (%u online, %u allowed, quota %s), load %.2f: %s",
      host_tasks, host.usable_cores(), host.online_cores, host.allowed_cores,
      host.quota_cores > 0 ? absl::StrFormat("%.2f", host.quota_cores) : "none", host.load1,
      fits    ? "spin"
      : sleep ? "sleep to the instant (--start_spin never)"
      : spin_duration_ns > 0 ? "no spin (the controller asked for one): gate"
                             : "gate");
  if (fits) {
    choice.spin = std::make_unique<SpinStart>(
        parked.size(), spin_duration_ns, allow_realtime,
        std::clamp<int64_t>(first_transfer_after_ns, 0, 5'000'000));
    choice.spin->RaiseParked(parked);
    return choice;
  }
  if (sleep) return choice;  // the runner sleeps each task to the instant
  choice.gate = std::make_unique<StartGate>(parked.size(), host.usable_cores(), host_agents);
  choice.gate->Begin(at_unix_ns, parked, allow_realtime);
  return choice;
}

}  // namespace lockstep
