#include "controller/run/host_clocks.h"

#include <map>

namespace lockstep {

std::vector<std::optional<HostClockShare>> ShareHostClocks(
    const std::vector<std::string>& clock_ids,
    const std::vector<std::optional<ClockEstimate>>& estimates) {
  // The best estimate of each clock, and how many agents read it.
  struct Best {
    ClockEstimate estimate;
    uint32_t agents = 0;
  };
  std::map<std::string, Best> best;
  for (size_t i = 0; i < estimates.size(); ++i) {
    if (!estimates[i] || clock_ids[i].empty()) continue;
    Best& b = best[clock_ids[i]];
    if (b.agents == 0 || estimates[i]->delay_ns < b.estimate.delay_ns) b.estimate = *estimates[i];
    ++b.agents;
  }
  std::vector<std::optional<HostClockShare>> out(estimates.size());
  for (size_t i = 0; i < estimates.size(); ++i) {
    if (!estimates[i]) continue;
    HostClockShare share{.shared = *estimates[i], .measured_offset_ns = estimates[i]->offset_ns};
    if (!clock_ids[i].empty()) {
      const Best& b = best.at(clock_ids[i]);
      share.shared = b.estimate;
      share.agents = b.agents;
    }
    out[i] = share;
  }
  return out;
}

}  // namespace lockstep
