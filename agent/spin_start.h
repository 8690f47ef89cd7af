// The start of a phase whose tasks fit on the cores this agent may use (the
// controller asked for a spin, and the host's tasks — this agent's times the
// agents on the host — are no more than the usable cores: online CPUs, the
// agent's CPU affinity and its cgroup's CPU quota, whichever is least).
//
// Each task thread raises itself to SCHED_FIFO priority 1 where permitted
// (root or CAP_SYS_NICE), sleeps until spin_duration before the instant
// (timer slack 1 ns), spins to the instant, and stays at real-time priority
// through its open and its first transfer: dropping to normal scheduling
// before them (as earlier versions did) makes the kernel reschedule at once,
// and any thread that became runnable on that core during the spin (gRPC's,
// the controller's, another agent's) ran before the task's first write. It
// goes back to normal scheduling when its first transfer (or first mdtest,
// find, seeks operation) returned, a command's task as it starts the program,
// or when it ends, whatever happened (the phase runner calls Lower). Where
// SCHED_FIFO is refused the task still spins and note() says what the start
// could not do. With a first-transfer instant (AlignFirstTransfer) the task
// spins, still raised, from its open's end to that instant: at most 1 ms.
//
// Threads: Wait, Lower from task threads (each for its own index); note from
// any thread after the tasks ended.
#ifndef LOCKSTEP_AGENT_SPIN_START_H_
#define LOCKSTEP_AGENT_SPIN_START_H_

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lockstep {

// What the agent sees of its host when a phase starts.
struct StartHost {
  uint32_t online_cores = 1;
  uint32_t allowed_cores = 1;  // in the agent's CPU affinity mask
  double quota_cores = 0;      // cgroup v2 cpu.max quota / period; 0: no quota
  double load1 = 0;            // /proc/loadavg, one minute
  // The cores the tasks can run on at once.
  uint32_t usable_cores() const;
};

StartHost ReadStartHost();

class SpinStart {
 public:
  // `first_transfer_after_ns`: see AlignFirstTransfer (0: none).
  SpinStart(uint32_t tasks, int64_t spin_duration_ns, bool allow_realtime,
            int64_t first_transfer_after_ns = 0);

  // From the thread that starts the phase, before it releases the parked
  // task threads `threads` (by index): raises them to SCHED_FIFO where
  // permitted, so that their wake-up from the park preempts normal work
  // instead of waiting for a core behind it (under load that wait was
  // longer than a short lead). A task not raised here raises itself in Wait.
  void RaiseParked(const std::vector<pthread_t>& threads);
  // Waits for `at_unix_ns` (this host's wall clock) as above; false when
  // `abort` was set first. The task stays raised either way: call Lower.
  bool Wait(uint32_t index, int64_t at_unix_ns, const std::atomic<bool>* abort);
  // Back to normal scheduling, once (later calls do nothing).
  void Lower(uint32_t index);
  // After the task's open: spins until `at_unix_ns` + first_transfer_after
  // (none: returns at once), so that every task's first transfer goes at one
  // instant whatever its open took; an open that ended later is counted.
  void AlignFirstTransfer(int64_t at_unix_ns, const std::atomic<bool>* abort);

  // "2 tasks spun 500 us at SCHED_FIFO 1 ..." or what was refused.
  std::string note() const;

 private:
  std::string Note() const;  // the spin and priority part of note()
  const uint32_t tasks_;
  const int64_t spin_duration_ns_;
  const bool allow_realtime_;
  std::unique_ptr<std::atomic<bool>[]> raised_;
  std::atomic<uint32_t> raised_count_{0};
  std::atomic<int> refused_errno_{0};
  const int64_t after_ns_;
  std::atomic<uint32_t> aligned_{0};  // tasks whose open ended before the instant
  std::atomic<uint32_t> late_{0};     // and those whose did not

};

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_SPIN_START_H_
