// How a phase's parked tasks leave for the start instant on this host,
// chosen once, at Start (agent/phase_runner.h). The controller asks for a
// spin where its count of the host's tasks fits the online cores; the agent
// also knows its affinity, its cgroup's CPU quota and the load (StartHost,
// agent/spin_start.h) and spins only where the host's tasks fit the cores
// it can use: spinners beyond those would take the cores from each other.
//   - where they fit and the controller asked for a spin: a SpinStart;
//   - where they fit and --start_spin is never: each task sleeps to the
//     instant (neither object);
//   - else a StartGate (agent/start_gate.h).
#ifndef LOCKSTEP_AGENT_START_CHOICE_H_
#define LOCKSTEP_AGENT_START_CHOICE_H_

#include <pthread.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agent/spin_start.h"
#include "agent/start_gate.h"

namespace lockstep {

struct StartChoice {
  // At most one is set; neither: each task sleeps to the instant.
  std::unique_ptr<SpinStart> spin;  // the parked threads already raised
  std::unique_ptr<StartGate> gate;  // begun for the instant
  // What the agent saw of its host and chose, for the result's start_note:
  // "host: 4 tasks on 8 usable cores (8 online, 8 allowed, quota none),
  // load 0.12: spin".
  std::string host_note;
};

// Reads this host (ReadStartHost) and chooses. `parked`: the phase's task
// threads, parked, by task index (one per task); `at_unix_ns`: the instant
// (this host's wall clock); `spin_duration_ns`: the StartRequest's (0: the
// controller asked for no spin); `host_agents`: the agents on this host
// (the controller's count; 0 or 1: this one alone); `first_transfer_after_ns`:
// the StartRequest's, kept within 0..5 ms; `spin_start`: --start_spin;
// `allow_realtime`: whether the spin or the gate may use SCHED_FIFO.
StartChoice ChooseStartOnHost(const std::vector<pthread_t>& parked, int64_t at_unix_ns,
                              int64_t spin_duration_ns, uint32_t host_agents,
                              int64_t first_transfer_after_ns, bool spin_start,
                              bool allow_realtime);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_START_CHOICE_H_
