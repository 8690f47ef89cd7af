// One clock offset per host clock. Agents whose HostFacts.clock_id (the
// kernel's boot id) is the same read one CLOCK_REALTIME: their true offsets
// to the controller are equal, while their estimates are not (each is off by
// up to delay/2 of its best exchange, tens of µs on a loaded host). Starting
// them at start_at + their own estimates would set them that far apart; so
// every agent of such a group is given the group's best estimate (the
// smallest delay), and keeps its own as measured_offset_ns in the record.
//
// Thread: any (a pure function).
#ifndef LOCKSTEP_CONTROLLER_RUN_HOST_CLOCKS_H_
#define LOCKSTEP_CONTROLLER_RUN_HOST_CLOCKS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/run/clock_sync.h"

namespace lockstep {

struct HostClockShare {
  ClockEstimate shared;            // what the agent uses from now on
  int64_t measured_offset_ns = 0;  // its own estimate's offset
  uint32_t agents = 1;             // agents sharing `shared` (1: its own)
};

// `clock_ids[i]` and `estimates[i]` belong to agent i; an empty id or an
// absent estimate (a lost agent) shares with no one. The result has one entry
// per agent, absent where the estimate was.
std::vector<std::optional<HostClockShare>> ShareHostClocks(
    const std::vector<std::string>& clock_ids,
    const std::vector<std::optional<ClockEstimate>>& estimates);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_HOST_CLOCKS_H_
