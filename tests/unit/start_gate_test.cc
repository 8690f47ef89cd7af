// The start when tasks outnumber cores (agent/start_gate.h), through the
// phase runner: the ordering of first and second operations, and that no
// thread stays at real-time priority after an abort, an I/O error or a task
// that never issues its first operation.
#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "agent/phase_runner.h"
#include "agent/spin_start.h"
#include "agent/start_gate.h"
#include "assert_eventually.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

constexpr uint32_t kTasks = 8;  // on this 2-core machine: 4 per core

v1::PhaseSpec WriteSpec(uint32_t tasks) {
  v1::PhaseSpec s;
  s.set_phase_id("t0/r0/gate");
  s.set_kind(v1::WRITE);
  s.set_file_name("testfile");
  s.set_file_per_process(true);
  s.set_tasks(tasks);
  s.set_first_rank(0);
  s.set_total_tasks(tasks);
  s.set_transfer_bytes(256 * 1024);
  s.set_block_bytes(2 * 1024 * 1024);
  s.set_segments(1);
  s.set_pattern_seed(3);
  return s;
}

// Threads of this process at SCHED_FIFO or SCHED_RR now whose name starts
// with `prefix` ("ls-start-guard", "ls-task-").
int RealtimeThreadsNamed(const std::string& prefix) {
  int n = 0;
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr) return -1;
  while (const dirent* e = ::readdir(d)) {
    const int tid = std::atoi(e->d_name);
    if (tid <= 0) continue;
    std::ifstream comm(absl::StrFormat("/proc/self/task/%d/comm", tid));
    std::string name;
    std::getline(comm, name);
    if (name.rfind(prefix, 0) != 0) continue;
    const int policy = ::sched_getscheduler(tid);
    if (policy == SCHED_FIFO || policy == SCHED_RR) ++n;
  }
  ::closedir(d);
  return n;
}

// Threads of this process at SCHED_FIFO or SCHED_RR now.
int RealtimeThreads() { return RealtimeThreadsNamed(""); }

// Whether this process may use SCHED_FIFO (root or CAP_SYS_NICE).
bool RealtimePermitted() {
  struct sched_param p = {};
  p.sched_priority = 1;
  if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) != 0) return false;
  p.sched_priority = 0;
  pthread_setschedparam(pthread_self(), SCHED_OTHER, &p);
  return true;
}

struct Started {
  absl::Notification done;
  v1::PhaseResult result;
  PhaseRunner::EventSink Sink() {
    return [this](const v1::PhaseEvent& e) {
      if (e.has_result()) {
        result = e.result();
        done.Notify();
      }
    };
  }
};

TEST(StartGate, EveryTaskIssuesItsFirstTransferBeforeAnyIssuesItsSecond) {
  for (const bool realtime : {true, false}) {
    SCOPED_TRACE(realtime ? "SCHED_FIFO where permitted" : "without SCHED_FIFO");
    TempDir tmp;
    absl::Mutex mu;
    std::vector<int64_t> first_mono_ns(kTasks, 0), second_mono_ns(kTasks, 0);
    RunnerOptions options;
    options.allow_realtime = realtime;
    options.test_on_issue = [&](uint32_t index, uint64_t op, int64_t mono_ns) {
      absl::MutexLock lock(&mu);
      (op == 0 ? first_mono_ns : second_mono_ns)[index] = mono_ns;
    };
    auto runner = PhaseRunner::Prepare(WriteSpec(kTasks), tmp.path(), options);
    ASSERT_OK(runner);
    Started s;
    // No spin (0): the controller's choice when tasks outnumber cores.
    ASSERT_OK((*runner)->Start(RealtimeNs() + 5'000'000, 0, 50, s.Sink()));
    ASSERT_TRUE(s.done.WaitForNotificationWithTimeout(absl::Seconds(30)));
    ASSERT_TRUE(s.result.ok()) << s.result.error();
    absl::MutexLock lock(&mu);
    for (uint32_t i = 0; i < kTasks; ++i) {
      ASSERT_GT(first_mono_ns[i], 0) << "task " << i;
      ASSERT_GT(second_mono_ns[i], 0) << "task " << i;
    }
    const int64_t last_first = *std::max_element(first_mono_ns.begin(), first_mono_ns.end());
    const int64_t first_second = *std::min_element(second_mono_ns.begin(), second_mono_ns.end());
    EXPECT_LE(last_first, first_second) << "a task issued its second transfer "
                                        << (last_first - first_second) << " ns before the last "
                                        << "task issued its first";
    EXPECT_THAT(s.result.start_note(), HasSubstr("all issued their first"));
    if (!realtime || !RealtimePermitted()) {
      EXPECT_THAT(s.result.start_note(), HasSubstr("SCHED_FIFO refused"));
    } else {
      EXPECT_THAT(s.result.start_note(), HasSubstr("released at SCHED_FIFO"));
    }
    ASSERT_EVENTUALLY([&] { EXPECT_EQ(RealtimeThreads(), 0); });
  }
}

TEST(StartGate, TasksThatFitTheCoresSpinAsBeforeWithoutAGate) {
  TempDir tmp;
  auto runner = PhaseRunner::Prepare(WriteSpec(2), tmp.path());
  ASSERT_OK(runner);
  Started s;
  ASSERT_OK((*runner)->Start(RealtimeNs() + 5'000'000, 1'000'000, 50, s.Sink()));
  ASSERT_TRUE(s.done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  ASSERT_TRUE(s.result.ok()) << s.result.error();
  // The spin start (agent/spin_start.h) says what it did, and no gate ran.
  EXPECT_THAT(s.result.start_note(), HasSubstr("2 tasks spun 1000 us"));
  EXPECT_THAT(s.result.start_note(), HasSubstr(": spin"));
  EXPECT_THAT(s.result.start_note(), ::testing::Not(HasSubstr("released at SCHED_FIFO")));
  ASSERT_EVENTUALLY([&] { EXPECT_EQ(RealtimeThreads(), 0); });
}

TEST(StartGate, AnAbortInTheStartWindowLeavesNoRealtimeThread) {
  TempDir tmp;
  auto runner = PhaseRunner::Prepare(WriteSpec(kTasks), tmp.path());
  ASSERT_OK(runner);
  Started s;
  // The tasks wait for an instant far enough away to abort before it.
  ASSERT_OK((*runner)->Start(RealtimeNs() + 2'000'000'000, 0, 50, s.Sink()));
  if (RealtimePermitted()) {
    // Raised: every task waits at SCHED_FIFO, the guard too.
    ASSERT_EVENTUALLY([&] { EXPECT_EQ(RealtimeThreads(), static_cast<int>(kTasks) + 1); });
  }
  (*runner)->Abort("operator said stop");
  ASSERT_EVENTUALLY_WITHIN(std::chrono::milliseconds(500),
                           [&] { EXPECT_EQ(RealtimeThreads(), 0); });
  ASSERT_TRUE(s.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(s.result.ok());
  EXPECT_THAT(s.result.error(), HasSubstr("operator said stop"));
}

TEST(StartGate, AnAbortDuringTheFirstTransfersLeavesNoRealtimeThread) {
  TempDir tmp;
  RunnerOptions options;
  options.test_delay_per_transfer = absl::Milliseconds(20);
  std::atomic<int> issued{0};
  options.test_on_issue = [&](uint32_t, uint64_t op, int64_t) {
    if (op == 0) issued.fetch_add(1);
  };
  auto runner = PhaseRunner::Prepare(WriteSpec(kTasks), tmp.path(), options);
  ASSERT_OK(runner);
  Started s;
  ASSERT_OK((*runner)->Start(RealtimeNs() + 5'000'000, 0, 50, s.Sink()));
  ASSERT_EVENTUALLY([&] { EXPECT_GE(issued.load(), 1); });
  (*runner)->Abort("operator said stop");
  ASSERT_EVENTUALLY_WITHIN(std::chrono::milliseconds(500),
                           [&] { EXPECT_EQ(RealtimeThreads(), 0); });
  ASSERT_TRUE(s.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(s.result.ok());
}

TEST(StartGate, AFailedFirstOpenLeavesNoRealtimeThreadAndHoldsNobody) {
  TempDir tmp;
  // The directory does not exist: every task's open fails (ENOENT).
  auto runner = PhaseRunner::Prepare(WriteSpec(kTasks), tmp.path() + "/missing");
  ASSERT_OK(runner);
  Started s;
  ASSERT_OK((*runner)->Start(RealtimeNs() + 5'000'000, 0, 50, s.Sink()));
  ASSERT_TRUE(s.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(s.result.ok());
  EXPECT_THAT(s.result.error(), HasSubstr("cannot create"));
  ASSERT_EVENTUALLY([&] { EXPECT_EQ(RealtimeThreads(), 0); });
}

// Task 0 holds still (at SCHED_FIFO, asleep) before its first transfer:
// kMaxRealtime after the instant the guard drops it too, polling or not;
// the others wait for its first transfer meanwhile.
void ExpectHeldTaskLoweredAtTheBound(uint32_t tasks, uint32_t host_agents) {
  SCOPED_TRACE(absl::StrFormat("%u tasks, %u agents on the host", tasks, host_agents));
  TempDir tmp;
  RunnerOptions options;
  absl::Notification let_go;
  options.test_on_issue = [&](uint32_t index, uint64_t op, int64_t) {
    if (index == 0 && op == 0) let_go.WaitForNotificationWithTimeout(absl::Seconds(10));
  };
  auto runner = PhaseRunner::Prepare(WriteSpec(tasks), tmp.path(), options);
  ASSERT_OK(runner);
  Started s;
  const int64_t start_at_unix_ns = RealtimeNs() + 5'000'000;
  ASSERT_OK((*runner)->Start(start_at_unix_ns, 0, 50, s.Sink(), host_agents));
  ASSERT_EVENTUALLY_WITHIN(std::chrono::seconds(2), [&] { EXPECT_EQ(RealtimeThreads(), 0); });
  EXPECT_LT(RealtimeNs() - start_at_unix_ns,
            absl::ToInt64Nanoseconds(StartGate::kMaxRealtime) + 1'000'000'000);
  EXPECT_FALSE(s.done.HasBeenNotified()) << "the others wait for task 0's first transfer";
  let_go.Notify();
  ASSERT_TRUE(s.done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_TRUE(s.result.ok()) << s.result.error();
}

TEST(StartGate, ATaskThatNeverIssuesIsDroppedToNormalPriorityWithinTheBound) {
  if (!RealtimePermitted()) GTEST_SKIP() << "needs SCHED_FIFO (root or CAP_SYS_NICE)";
  ExpectHeldTaskLoweredAtTheBound(kTasks, 1);  // the polling guard
}

// Whether the guard polls at SCHED_FIFO (agent/start_gate.h): between Start
// and the instant (2 s here) a polling guard waits at priority 2, one that
// does not poll has gone back to normal scheduling; the parked tasks are
// raised in both cases. It polls when the host's tasks outnumber the cores,
// at a period stretched by the agents per core (TheGuardPeriodStretches...).
void ExpectGuardPolls(uint32_t tasks, uint32_t host_agents, bool polls) {
  SCOPED_TRACE(absl::StrFormat("%u tasks, %u agents on the host", tasks, host_agents));
  TempDir tmp;
  auto runner = PhaseRunner::Prepare(WriteSpec(tasks), tmp.path());
  ASSERT_OK(runner);
  Started s;
  const int64_t start_at_unix_ns = RealtimeNs() + 2'000'000'000;
  ASSERT_OK((*runner)->Start(start_at_unix_ns, 0, 50, s.Sink(), host_agents));
  ASSERT_EVENTUALLY_WITHIN(std::chrono::milliseconds(1500), [&] {
    EXPECT_EQ(RealtimeThreadsNamed("ls-task-"), static_cast<int>(tasks));
    EXPECT_EQ(RealtimeThreadsNamed("ls-start-guard"), polls ? 1 : 0);
  });
  EXPECT_LT(RealtimeNs(), start_at_unix_ns) << "checked after the instant: the machine is too "
                                               "loaded for this test's window";
  ASSERT_TRUE(s.done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_TRUE(s.result.ok()) << s.result.error();
  EXPECT_THAT(s.result.start_note(), HasSubstr("released at SCHED_FIFO"));
  EXPECT_THAT(s.result.start_note(), HasSubstr(polls ? "was in the kernel (a guard looked every"
                                                     : "once its first operation returned"));
  ASSERT_EVENTUALLY([&] { EXPECT_EQ(RealtimeThreads(), 0); });
}

TEST(StartGate, TheGuardPollsWhenTheHostsTasksOutnumberTheCores) {
  if (!RealtimePermitted()) GTEST_SKIP() << "needs SCHED_FIFO (root or CAP_SYS_NICE)";
  ExpectGuardPolls(kTasks, 1, /*polls=*/true);   // 8 tasks of one agent on 2 cores
  if (ReadStartHost().usable_cores() == 2) {
    ExpectGuardPolls(2, 2, /*polls=*/true);  // 2 agents x 2 tasks on 2 cores
  }
  ExpectGuardPolls(1, 1, /*polls=*/false);  // its one task fits the cores
  const uint32_t cores = ReadStartHost().usable_cores();
  ExpectGuardPolls(1, 2 * cores, /*polls=*/true);  // 2 agents x 1 task per core: a longer period
  const uint32_t most = StartGate::kMaxPolledAgentsPerCore * cores;
  ExpectGuardPolls(1, most, /*polls=*/true);        // as many agents per core as may poll
  ExpectGuardPolls(1, most + 1, /*polls=*/false);   // one more: a swarm, no polling
}

// The host's guards together wake about once per core per kGuardPeriod.
TEST(StartGate, TheGuardPeriodStretchesWithTheAgentsPerCore) {
  const absl::Duration p = StartGate::kGuardPeriod;
  EXPECT_EQ(StartGate(8, 2, 1).guard_period(), p);       // one agent
  EXPECT_EQ(StartGate(2, 2, 2).guard_period(), p);       // an agent per core
  EXPECT_EQ(StartGate(1, 2, 4).guard_period(), 2 * p);   // 4 agents on 2 cores
  EXPECT_EQ(StartGate(1, 2, 5).guard_period(), 3 * p);   // rounded up
  EXPECT_EQ(StartGate(1, 16, 32).guard_period(), 2 * p);
  EXPECT_EQ(StartGate(1, 2, 32).guard_period(), 16 * p);
  EXPECT_EQ(StartGate(1, 0, 0).guard_period(), p);       // unknown counts: one each
}

// With a guard that does not poll, a task still at real-time priority at
// the bound is lowered then.
TEST(StartGate, WithoutPollingATaskThatNeverIssuesIsLoweredAtTheBound) {
  if (!RealtimePermitted()) GTEST_SKIP() << "needs SCHED_FIFO (root or CAP_SYS_NICE)";
  ExpectHeldTaskLoweredAtTheBound(1, 1);  // one task: fits the cores, no polling guard
}

TEST(StartGate, AtALongGuardPeriodATaskThatNeverIssuesIsLoweredAtTheBound) {
  if (!RealtimePermitted()) GTEST_SKIP() << "needs SCHED_FIFO (root or CAP_SYS_NICE)";
  ExpectHeldTaskLoweredAtTheBound(1, 32);  // polling every 16 x kGuardPeriod on 2 cores
}

}  // namespace
}  // namespace lockstep
