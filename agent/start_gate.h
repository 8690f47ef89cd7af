// The start of a phase whose tasks outnumber the cores (the controller sent
// no spin: agent/phase_runner.h Start). Two promises:
//
//  1. Ordering (always, with or without privileges): every task of this
//     agent issues its first operation before any of them issues its second.
//     A task whose first operation returned waits, at normal priority, until
//     every task issued its first one, ended without one, or the phase
//     stopped.
//  2. Tightness (where the agent may use SCHED_FIFO: root or CAP_SYS_NICE):
//     the first operations are issued close together, although only as many
//     tasks as there are cores can run at once. The guard raises every task
//     to SCHED_FIFO priority 1 while they are still parked (so that waking
//     them one by one for the start does not wait for cores behind everything
//     at normal priority), and at the instant the woken tasks take the cores
//     ahead of everything at normal priority. A guard
//     thread at SCHED_FIFO priority 2 wakes every guard period from the
//     instant on (kGuardPeriod, stretched where the host's agents outnumber
//     its cores: below) and puts back to normal scheduling each task that it saw
//     issuing its first operation at its previous wake-up (so the task is in
//     the kernel by then), even while that operation is still in the kernel:
//     the kernel then gives the core to a task that has not issued its own
//     yet. Without this, a task that gets a core writes its whole
//     transfer (or block) before the next one starts.
//
// Bounds (a real-time thread on a 2-core machine can starve it): a task is
// at real-time priority only from the start until the first of: the guard
// saw its first operation issued, its first operation returned, it ended (an
// error, an abort, nothing to do), the phase stopped (Stop; the guard drops
// every task within kGuardPeriod), or kMaxRealtime after the instant (the
// guard drops every task). The guard itself is at real-time priority only
// until then, and sleeps between its wake-ups.
//
// Where SCHED_FIFO is refused the gate keeps promise 1 only; note() says so
// and the agent log says it once per process.
//
// Threads: Begin from the thread that starts the phase; FirstOpIssuing,
// FirstOpReturned and TaskEnded from task threads (each for its own index);
// Stop from any thread; the destructor joins the guard.
#ifndef LOCKSTEP_AGENT_START_GATE_H_
#define LOCKSTEP_AGENT_START_GATE_H_

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace lockstep {

class StartGate {
 public:
  static constexpr absl::Duration kGuardPeriod = absl::Microseconds(20);
  static constexpr absl::Duration kMaxRealtime = absl::Milliseconds(50);
  // Beyond this many agents per core (a swarm of agents in few processes)
  // no guard polls: 1,024 agents on 2 cores released their tasks over
  // 341–429 ms with paced guards, 265–305 ms without (tests/bench/README.md
  // section 28).
  static constexpr uint32_t kMaxPolledAgentsPerCore = 16;

  // `cores`: the CPUs the tasks can use; `host_agents`: the agents of this
  // run on the host (0 or 1: this one alone), each with `tasks` tasks. The
  // guard polls (promise 2 above) when the host's tasks outnumber the cores
  // and its agents are at most kMaxPolledAgentsPerCore per core; otherwise
  // the tasks are released at real-time priority, each lowered once its
  // first operation returned (or at kMaxRealtime). Every agent on
  // the host has a guard of its own, so where the agents outnumber the
  // cores each guard wakes every kGuardPeriod x ceil(agents / cores): the
  // host's guards together wake about once per core per kGuardPeriod. At a
  // 20 µs period each, 32 agents' guards (or 8 x 4) held both cores of a
  // 2-core host from the tasks until kMaxRealtime.
  StartGate(uint32_t tasks, uint32_t cores, uint32_t host_agents = 1);
  // Stops the guard and joins it.
  ~StartGate();

  // Starts the guard, which finds out whether SCHED_FIFO is permitted,
  // raises the task threads `threads` (one per task, by index; alive and
  // parked: they may not end before Begin returns) to SCHED_FIFO 1 where it
  // is, and sleeps until `start_at_unix_ns` (this host's wall clock). Call
  // once, before the tasks are released. `allow_realtime` false (tests): the
  // ordering only.
  void Begin(int64_t start_at_unix_ns, const std::vector<pthread_t>& threads,
             bool allow_realtime = true);
  // Right before the task's first operation enters the kernel. Lock-free:
  // never blocks nor wakes anyone.
  void FirstOpIssuing(uint32_t index);
  // After the first operation returned: back to normal scheduling, then
  // waits until every task issued its first operation (or ended without
  // one) or the phase stopped.
  void FirstOpReturned(uint32_t index);
  // The task is about to end (whatever happened): back to normal scheduling;
  // a task that never issued a first operation no longer holds the others.
  void TaskEnded(uint32_t index);
  // The phase stopped: waiters go, the guard drops every task and ends.
  void Stop();

  // Whether the tasks were released at SCHED_FIFO; valid after Begin.
  bool realtime() const;
  // One line for the phase result: "8 tasks released at SCHED_FIFO ..." or
  // why real-time priority was refused. Valid after Begin.
  std::string note() const;

  // The polling guard's period: kGuardPeriod x ceil(host agents / cores).
  absl::Duration guard_period() const { return guard_period_; }

  // Test only: tasks at SCHED_FIFO now.
  uint32_t RaisedNow() const;

  StartGate(const StartGate&) = delete;
  StartGate& operator=(const StartGate&) = delete;

 private:
  enum class State : uint8_t { kWaiting, kIssued, kEnded };
  struct Slot {
    std::atomic<State> state{State::kWaiting};
    pthread_t thread{};
    bool raised = false;  // guarded by mu_ (a member of a vector element)
  };

  void GuardMain(int64_t start_at_unix_ns, bool allow_realtime);
  // Drops a raised task to normal scheduling (the guard, or the task itself).
  void LowerLocked(Slot& slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void LowerSelf(uint32_t index);
  bool AllIssued() const { return issued_.load(std::memory_order_acquire) >= slots_.size(); }

  std::vector<Slot> slots_;
  // Tasks that issued their first operation or ended without one.
  std::atomic<uint32_t> issued_{0};
  std::atomic<bool> stopped_{false};
  const bool swarm_;  // more than kMaxPolledAgentsPerCore agents per core
  const bool polls_;  // the host's tasks outnumber the cores, and no swarm
  const absl::Duration guard_period_;  // kGuardPeriod x ceil(host agents / cores)
  std::thread guard_;

  mutable absl::Mutex mu_;
  bool decided_ ABSL_GUARDED_BY(mu_) = false;  // the guard knows whether RT is permitted
  bool realtime_ ABSL_GUARDED_BY(mu_) = false;
  std::string refused_ ABSL_GUARDED_BY(mu_);  // why SCHED_FIFO was refused
};

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_START_GATE_H_
