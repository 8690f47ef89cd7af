// The start where tasks fit (agent/spin_start.h) and one clock offset per
// host clock (controller/run/host_clocks.h).
#include "agent/spin_start.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <thread>

#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "controller/run/host_clocks.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

int PolicyOfSelf() {
  int policy = 0;
  struct sched_param p = {};
  pthread_getschedparam(pthread_self(), &policy, &p);
  return policy;
}

TEST(SpinStart, WaitsForTheInstantAndStaysRaisedUntilLowered) {
  SpinStart spin(1, 200'000, /*allow_realtime=*/true);
  int during = -1;
  int after = -1;
  int64_t released_unix_ns = 0;
  const int64_t at_unix_ns = RealtimeNs() + 5'000'000;
  std::thread t([&] {
    std::atomic<bool> abort{false};
    EXPECT_TRUE(spin.Wait(0, at_unix_ns, &abort));
    released_unix_ns = RealtimeNs();
    during = PolicyOfSelf();
    spin.Lower(0);
    spin.Lower(0);  // once only
    after = PolicyOfSelf();
  });
  t.join();
  EXPECT_GE(released_unix_ns, at_unix_ns);
  EXPECT_EQ(after, SCHED_OTHER);
  if (during == SCHED_FIFO) {
    EXPECT_THAT(spin.note(), HasSubstr("1 tasks spun 200 us at SCHED_FIFO 1"));
  } else {
    // No CAP_SYS_NICE here: the start goes on and the note says so.
    EXPECT_THAT(spin.note(), HasSubstr("refused"));
  }
}

TEST(SpinStart, TheStartRaisesParkedThreadsBeforeTheyWake) {
  SpinStart spin(1, 100'000, /*allow_realtime=*/true);
  absl::Notification go;
  int policy_in_wait = -1;
  std::thread t([&] {
    go.WaitForNotification();  // parked
    policy_in_wait = PolicyOfSelf();
    std::atomic<bool> abort{false};
    EXPECT_TRUE(spin.Wait(0, RealtimeNs() + 1'000'000, &abort));
    spin.Lower(0);
    EXPECT_EQ(PolicyOfSelf(), SCHED_OTHER);
  });
  spin.RaiseParked({t.native_handle()});
  go.Notify();
  t.join();
  if (spin.note().find("refused") == std::string::npos) {
    EXPECT_EQ(policy_in_wait, SCHED_FIFO);  // woke raised
    EXPECT_THAT(spin.note(), HasSubstr("1 tasks spun 100 us at SCHED_FIFO 1"));
  }
}

TEST(SpinStart, WithoutRealtimeItSpinsAtNormalPriorityAndSaysSo) {
  SpinStart spin(2, 100'000, /*allow_realtime=*/false);
  std::atomic<bool> abort{false};
  EXPECT_TRUE(spin.Wait(1, RealtimeNs() + 1'000'000, &abort));
  EXPECT_EQ(PolicyOfSelf(), SCHED_OTHER);
  spin.Lower(1);
  EXPECT_THAT(spin.note(), HasSubstr("normal priority (real-time not asked for)"));
}

TEST(SpinStart, AnAbortEndsTheWait) {
  SpinStart spin(1, 100'000, /*allow_realtime=*/false);
  std::atomic<bool> abort{true};
  EXPECT_FALSE(spin.Wait(0, RealtimeNs() + 60'000'000'000, &abort));
}

TEST(SpinStart, FirstTransferWaitsForItsInstantAndCountsLateOpens) {
  SpinStart spin(2, 100'000, /*allow_realtime=*/false, /*first_transfer_after_ns=*/3'000'000);
  std::atomic<bool> abort{false};
  const int64_t at_unix_ns = RealtimeNs();
  spin.AlignFirstTransfer(at_unix_ns, &abort);  // an open that ended early: waits
  EXPECT_GE(RealtimeNs(), at_unix_ns + 3'000'000);
  spin.AlignFirstTransfer(at_unix_ns - 10'000'000, &abort);  // one that ended late: goes
  EXPECT_THAT(spin.note(),
              HasSubstr("first transfers at the instant + 3000.0 us (1 tasks had opened by then, 1 "
                        "not)"));
  SpinStart none(1, 100'000, false);
  const int64_t before = RealtimeNs();
  none.AlignFirstTransfer(before + 60'000'000'000, &abort);  // none asked: at once
  EXPECT_LT(RealtimeNs() - before, 1'000'000'000);
  EXPECT_THAT(none.note(), ::testing::Not(HasSubstr("first transfers")));
}

TEST(StartHost, UsableCoresAreTheLeastOfOnlineAffinityAndQuota) {
  StartHost h{.online_cores = 8, .allowed_cores = 4, .quota_cores = 2.5};
  EXPECT_EQ(h.usable_cores(), 2u);
  h.quota_cores = 0;
  EXPECT_EQ(h.usable_cores(), 4u);
  h.quota_cores = 0.5;  // a fraction of a core: still one to run on
  EXPECT_EQ(h.usable_cores(), 1u);
  const StartHost here = ReadStartHost();
  EXPECT_GE(here.usable_cores(), 1u);
  EXPECT_LE(here.usable_cores(), here.online_cores);
}

TEST(HostClocks, AgentsOfOneHostShareTheirBestEstimate) {
  // Agents 0 and 2 read one clock; their own estimates are 30 us apart.
  const std::vector<std::string> ids = {"boot-a", "boot-b", "boot-a", ""};
  const std::vector<std::optional<ClockEstimate>> est = {
      ClockEstimate{.offset_ns = 30'000, .delay_ns = 120'000, .samples = 8},
      ClockEstimate{.offset_ns = -5'000, .delay_ns = 50'000, .samples = 8},
      ClockEstimate{.offset_ns = 1'000, .delay_ns = 45'000, .samples = 8},
      ClockEstimate{.offset_ns = 7'000, .delay_ns = 10'000, .samples = 8},
  };
  const auto shares = ShareHostClocks(ids, est);
  ASSERT_EQ(shares.size(), 4u);
  EXPECT_EQ(shares[0]->shared.offset_ns, 1'000);  // agent 2's: the smaller delay
  EXPECT_EQ(shares[0]->shared.delay_ns, 45'000);
  EXPECT_EQ(shares[0]->measured_offset_ns, 30'000);
  EXPECT_EQ(shares[0]->agents, 2u);
  EXPECT_EQ(shares[2]->shared.offset_ns, 1'000);
  EXPECT_EQ(shares[1]->shared.offset_ns, -5'000);  // alone on its host
  EXPECT_EQ(shares[1]->agents, 1u);
  EXPECT_EQ(shares[3]->shared.offset_ns, 7'000);  // no clock id: its own
  EXPECT_EQ(shares[3]->agents, 1u);
}

TEST(HostClocks, ALostAgentSharesWithNoOne) {
  const auto shares = ShareHostClocks(
      {"boot-a", "boot-a"},
      {std::nullopt, ClockEstimate{.offset_ns = 3, .delay_ns = 9, .samples = 8}});
  EXPECT_FALSE(shares[0].has_value());
  EXPECT_EQ(shares[1]->agents, 1u);
  EXPECT_EQ(shares[1]->shared.offset_ns, 3);
}

}  // namespace
}  // namespace lockstep
