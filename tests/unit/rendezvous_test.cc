// The agent's side of a cross-agent rendezvous (PhaseSpec.sync_across_agents):
// two PhaseRunners in one process stand for two agents, and this test plays
// the controller, releasing each round with the largest value when both
// runners reported it, as controller/run/rendezvous.h does over gRPC.
#include <algorithm>
#include <map>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "agent/phase_runner.h"
#include "common/clock.h"
#include "common/layout.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "unit/run_phase.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using testing::RunSpec;
using testing::TempDir;

// A write of `pairs` 64 KiB transfers per task, 2 tasks on each of 2 agents.
v1::PhaseSpec AgentSpec(uint32_t agent, uint64_t pairs) {
  v1::PhaseSpec s;
  s.set_phase_id("t0/r0/w");
  s.set_kind(v1::WRITE);
  s.set_file_name("f");
  s.set_file_per_process(true);
  s.set_tasks(2);
  s.set_first_rank(agent * 2);
  s.set_total_tasks(4);
  s.set_transfer_bytes(64 * 1024);
  s.set_block_bytes(pairs * 64 * 1024);
  s.set_segments(1);
  s.set_pattern_seed(9);
  s.set_sync_across_agents(true);
  return s;
}

// The controller's part: collects each runner's rendezvous and releases a
// round with the largest value once both arrived.
class FakeController {
 public:
  explicit FakeController(std::vector<PhaseRunner*> runners) : runners_(std::move(runners)) {}

  PhaseRunner::EventSink SinkFor(size_t i) {
    return [this, i](const v1::PhaseEvent& e) {
      if (e.has_rendezvous()) Arrived(i, e.rendezvous());
      if (e.has_result()) {
        absl::MutexLock lock(&mu_);
        results_[i] = e.result();
      }
    };
  }

  bool WaitResults(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(
                                    +[](std::map<size_t, v1::PhaseResult>* r) {
                                      return r->size() == 2;
                                    },
                                    &results_),
                                timeout);
  }

  v1::PhaseResult result(size_t i) {
    absl::MutexLock lock(&mu_);
    return results_[i];
  }
  std::vector<uint64_t> released() {
    absl::MutexLock lock(&mu_);
    return released_;
  }

 private:
  void Arrived(size_t i, const v1::Rendezvous& r) {
    uint64_t value = 0;
    {
      absl::MutexLock lock(&mu_);
      EXPECT_EQ(r.seq(), released_.size()) << "agent " << i;
      EXPECT_GT(r.arrived_unix_ns(), 0);
      max_ = std::max(max_, r.value());
      if (++arrived_ < runners_.size()) return;
      value = max_;
      released_.push_back(value);
      arrived_ = 0;
      max_ = 0;
    }
    for (PhaseRunner* runner : runners_) {
      EXPECT_OK(runner->Release(r.seq(), value));
    }
  }

  std::vector<PhaseRunner*> runners_;
  absl::Mutex mu_;
  size_t arrived_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t max_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<uint64_t> released_ ABSL_GUARDED_BY(mu_);
  std::map<size_t, v1::PhaseResult> results_ ABSL_GUARDED_BY(mu_);
};

TEST(Rendezvous, WearOutAndBarriersSpanBothAgents) {
  TempDir tmp;
  // Agent 1 is slow (10 ms per transfer): at the 1 s stonewall it has done
  // far fewer transfers than agent 0, which finishes all 256 first.
  v1::PhaseSpec a = AgentSpec(0, 256), b = AgentSpec(1, 256);
  for (v1::PhaseSpec* s : {&a, &b}) {
    s->set_stonewall_seconds(1);
    s->set_stonewall_wear_out(true);
    s->set_intra_barriers(true);
  }
  auto ra = PhaseRunner::Prepare(a, tmp.path());
  auto rb = PhaseRunner::Prepare(
      b, tmp.path(), {.test_delay_per_transfer = absl::Milliseconds(10)});
  ASSERT_OK(ra);
  ASSERT_OK(rb);
  FakeController controller({ra->get(), rb->get()});
  const int64_t at_unix_ns = RealtimeNs() + 5'000'000;
  ASSERT_OK((*ra)->Start(at_unix_ns, 0, 100, controller.SinkFor(0)));
  ASSERT_OK((*rb)->Start(at_unix_ns, 0, 100, controller.SinkFor(1)));
  ASSERT_TRUE(controller.WaitResults(absl::Seconds(60)));
  // -g after open, the wear-out agreement, -g after the transfers.
  const std::vector<uint64_t> released = controller.released();
  ASSERT_EQ(released.size(), 3u);
  EXPECT_EQ(released[1], 256u);  // agent 0's tasks did everything
  uint64_t slow_at_wall = UINT64_MAX;
  for (size_t i : {0u, 1u}) {
    const v1::PhaseResult r = controller.result(i);
    ASSERT_TRUE(r.ok()) << r.error();
    for (const v1::TaskResult& t : r.tasks()) {
      EXPECT_EQ(t.ops(), 256u) << "rank " << t.rank();  // everyone wore out to 256
      if (i == 1) slow_at_wall = std::min(slow_at_wall, t.stonewall_pairs());
    }
  }
  EXPECT_LT(slow_at_wall, 256u);
  EXPECT_TRUE(controller.result(1).tasks(0).stonewall_hit());
  EXPECT_GT(controller.result(1).tasks(0).stonewall_stop_unix_ns(), 0);
}

TEST(Rendezvous, StaleOrEarlyReleaseIsRefused) {
  TempDir tmp;
  v1::PhaseSpec a = AgentSpec(0, 4);
  a.set_intra_barriers(true);
  auto r = PhaseRunner::Prepare(a, tmp.path());
  ASSERT_OK(r);
  // Nobody has arrived yet.
  EXPECT_THAT((*r)->Release(0, 0).message(), HasSubstr("0 of 2 tasks arrived"));
  a.set_sync_across_agents(false);
  a.set_phase_id("t0/r0/x");
  auto local = PhaseRunner::Prepare(a, tmp.path());
  ASSERT_OK(local);
  EXPECT_THAT((*local)->Release(0, 0).message(), HasSubstr("does not synchronise across agents"));
}

TEST(Rendezvous, ReadOfAStonewalledWriteReadsTheAgreedCount) {
  TempDir tmp;
  v1::PhaseSpec w = AgentSpec(0, 64);
  w.set_total_tasks(2);
  w.set_sync_across_agents(false);
  w.set_stonewall_count(0);
  w.set_block_bytes(20 * 64 * 1024);  // the write stopped after 20 transfers
  ASSERT_TRUE(RunSpec(w, tmp.path()).ok());
  // The read's layout is 64 transfers, but the count says 20: the files are
  // long enough, and it reads (and verifies) exactly 20 transfers.
  v1::PhaseSpec r = w;
  r.set_phase_id("t0/r0/r");
  r.set_kind(v1::READ);
  r.set_verify(true);
  r.set_block_bytes(64 * 64 * 1024);
  // Without the count the files are short: the read stops at the end of a
  // file, as IOR's does.
  const v1::PhaseResult uncounted = RunSpec(r, tmp.path());
  EXPECT_FALSE(uncounted.ok());
  EXPECT_THAT(uncounted.error(), HasSubstr("short"));
  r.set_stonewall_count(20);
  EXPECT_EQ(TransfersPerTask(r), 20u);
  EXPECT_EQ(AggregateBytes(r), 2u * 20 * 64 * 1024);
  const v1::PhaseResult result = RunSpec(r, tmp.path());
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result.tasks(0).ops(), 20u);
  EXPECT_EQ(result.tasks(1).bytes(), 20u * 64 * 1024);
}

}  // namespace
}  // namespace lockstep
