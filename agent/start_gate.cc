#include "agent/start_gate.h"

#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/log.h"

namespace lockstep {
namespace {

constexpr int kTaskPriority = 1;
constexpr int kGuardPriority = 2;

// 0 or an errno.
int SetPolicy(pthread_t thread, int policy, int priority) {
  struct sched_param p = {};
  p.sched_priority = priority;
  return pthread_setschedparam(thread, policy, &p);
}

void NanoSleep(absl::Duration d) {
  struct timespec ts = absl::ToTimespec(d);
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
  }
}

// One wake-up per core per kGuardPeriod for all the host's guards together.
absl::Duration GuardPeriodFor(uint32_t host_agents, uint32_t cores) {
  const int64_t agents = std::max<uint32_t>(host_agents, 1), usable = std::max<uint32_t>(cores, 1);
  return StartGate::kGuardPeriod * ((agents + usable - 1) / usable);
}

}  // namespace

StartGate::StartGate(uint32_t tasks, uint32_t cores, uint32_t host_agents)
    : slots_(tasks),
      swarm_(std::max<uint32_t>(host_agents, 1) >
             uint64_t{kMaxPolledAgentsPerCore} * std::max<uint32_t>(cores, 1)),
      polls_(!swarm_ &&
             uint64_t{tasks} * std::max<uint32_t>(host_agents, 1) > std::max<uint32_t>(cores, 1)),
      guard_period_(GuardPeriodFor(host_agents, cores)) {}

StartGate::~StartGate() {
  Stop();
  if (guard_.joinable()) guard_.join();
}

void StartGate::Begin(int64_t start_at_unix_ns, const std::vector<pthread_t>& threads,
                      bool allow_realtime) {
  for (size_t i = 0; i < slots_.size() && i < threads.size(); ++i) slots_[i].thread = threads[i];
  guard_ = std::thread([this, start_at_unix_ns, allow_realtime] {
    pthread_setname_np(pthread_self(), "ls-start-guard");
    GuardMain(start_at_unix_ns, allow_realtime);
  });
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(&decided_));
  if (realtime_ || !allow_realtime) return;
  static std::atomic<bool> logged{false};
  if (!logged.exchange(true)) {
    LogWarning(
        "start: SCHED_FIFO refused (%s): when tasks outnumber cores they are released at "
        "normal priority and their first transfers spread further; run the agent as root or "
        "with CAP_SYS_NICE for a tighter start (said once)",
        refused_);
  }
}

void StartGate::GuardMain(int64_t start_at_unix_ns, bool allow_realtime) {
  // Wake within ~1 µs of each deadline instead of the default 50 µs slack.
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  int err = allow_realtime ? SetPolicy(pthread_self(), SCHED_FIFO, kGuardPriority) : EPERM;
  {
    absl::MutexLock lock(&mu_);
    decided_ = true;
    realtime_ = allow_realtime && err == 0;
    if (!realtime_) refused_ = allow_realtime ? std::strerror(err) : "not asked for";
    if (!realtime_) return;  // the ordering alone: nothing to guard
    for (Slot& s : slots_) s.raised = SetPolicy(s.thread, SCHED_FIFO, kTaskPriority) == 0;
  }
  // Not polling (below), the guard needs no real-time priority of its own.
  if (!polls_) SetPolicy(pthread_self(), SCHED_OTHER, 0);
  // Asleep until the instant (the tasks are asleep too): until 1 ms before
  // it where Stop can wake the guard, then to the instant itself.
  {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithDeadline(
        absl::Condition(
            +[](std::atomic<bool>* stopped) { return stopped->load(); }, &stopped_),
        absl::FromUnixNanos(start_at_unix_ns - 1'000'000));
  }
  if (!polls_) {
    // The host's tasks fit its cores: nothing to hand over. This guard only
    // bounds the real-time priority set above: each task lowers itself once
    // its first operation returned, and whatever is still raised at
    // kMaxRealtime is lowered then.
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithDeadline(
        absl::Condition(
            +[](StartGate* g) ABSL_NO_THREAD_SAFETY_ANALYSIS {
              if (g->stopped_.load()) return true;
              for (const Slot& s : g->slots_) {
                if (s.raised) return false;
              }
              return true;
            },
            this),
        absl::FromUnixNanos(start_at_unix_ns) + kMaxRealtime);
    for (Slot& s : slots_) {
      if (s.raised) LowerLocked(s);
    }
    return;
  }
  if (!stopped_.load()) WaitUntilRealtime(start_at_unix_ns, 0, &stopped_);
  const int64_t deadline_mono_ns = MonotonicNs() + absl::ToInt64Nanoseconds(kMaxRealtime);
  // A task is lowered at the first scan after the one that saw it issuing:
  // between its flag and the system call it may have been preempted (by this
  // guard), and lowered there it would wait for every raised task before
  // entering the kernel.
  std::vector<bool> seen(slots_.size(), false);
  for (;;) {
    const bool last = stopped_.load() || MonotonicNs() >= deadline_mono_ns;
    bool all = AllIssued();
    {
      absl::MutexLock lock(&mu_);
      for (size_t i = 0; i < slots_.size(); ++i) {
        Slot& s = slots_[i];
        if (!s.raised) continue;
        if (last || seen[i]) {
          LowerLocked(s);
        } else if (s.state.load(std::memory_order_acquire) != State::kWaiting) {
          seen[i] = true;
          all = false;  // one more scan to lower it
        }
      }
      if (last || all) break;
    }
    NanoSleep(guard_period_);
  }
  SetPolicy(pthread_self(), SCHED_OTHER, 0);
}

void StartGate::LowerLocked(Slot& slot) {
  SetPolicy(slot.thread, SCHED_OTHER, 0);
  slot.raised = false;
}

void StartGate::LowerSelf(uint32_t index) {
  Slot& s = slots_[index];
  bool was = false;
  {
    absl::MutexLock lock(&mu_);
    was = s.raised;
    s.raised = false;
  }
  // Outside the lock: the kernel hands the core to a raised task at once.
  if (was) SetPolicy(pthread_self(), SCHED_OTHER, 0);
}

void StartGate::FirstOpIssuing(uint32_t index) {
  State expected = State::kWaiting;
  if (slots_[index].state.compare_exchange_strong(expected, State::kIssued,
                                                  std::memory_order_acq_rel)) {
    issued_.fetch_add(1, std::memory_order_acq_rel);
  }
}

void StartGate::FirstOpReturned(uint32_t index) {
  LowerSelf(index);
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](StartGate* g) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return g->AllIssued() || g->stopped_.load();
      },
      this));
}

void StartGate::TaskEnded(uint32_t index) {
  LowerSelf(index);
  State expected = State::kWaiting;
  if (slots_[index].state.compare_exchange_strong(expected, State::kEnded,
                                                  std::memory_order_acq_rel)) {
    issued_.fetch_add(1, std::memory_order_acq_rel);
  }
  absl::MutexLock lock(&mu_);  // its release wakes tasks waiting for the last issue
}

void StartGate::Stop() {
  stopped_.store(true);
  absl::MutexLock lock(&mu_);  // its release wakes the waiters and the guard
}

bool StartGate::realtime() const {
  absl::MutexLock lock(&mu_);
  return realtime_;
}

std::string StartGate::note() const {
  absl::MutexLock lock(&mu_);
  if (realtime_ && polls_) {
    return absl::StrFormat(
        "start: %u tasks released at SCHED_FIFO, each back to normal scheduling once its first "
        "operation was in the kernel (a guard looked every %d µs); all issued their first "
        "before any its second",
        slots_.size(), absl::ToInt64Microseconds(guard_period_));
  }
  if (realtime_) {
    return absl::StrFormat(
        "start: %u tasks released at SCHED_FIFO, each back to normal scheduling once its first "
        "operation returned%s; all issued their first before any its second",
        slots_.size(),
        swarm_ ? " (more than 16 agents per core on this host: no guard polls)" : "");
  }
  return absl::StrFormat(
      "start: SCHED_FIFO refused (%s), %u tasks released at normal priority (root or "
      "CAP_SYS_NICE starts them tighter); all issued their first operation before any its second",
      refused_, slots_.size());
}

uint32_t StartGate::RaisedNow() const {
  absl::MutexLock lock(&mu_);
  uint32_t n = 0;
  for (const Slot& s : slots_) n += s.raised ? 1 : 0;
  return n;
}

}  // namespace lockstep
