// The Heartbeater against a fake agent on a real loopback gRPC port: calls
// the agent answered through the heartbeater's watch stand in for heartbeats
// (agents of wire minor 4 renew their lease on them), and older agents still
// get every heartbeat; so do Starts to agents of minor 5.
#include "controller/run/heartbeater.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/clock.h"
#include "common/wire_version.h"
#include "controller/run/agent_client.h"
#include "controller/run/phase_stream.h"
#include "gtest/gtest.h"
#include "lockstep/v1/agent.grpc.pb.h"
#include "unit/loopback_agent.h"

namespace lockstep {
namespace {

// Counts heartbeats; answers Cleanup OK, after `cleanup_ms` (or when the
// controller cancels it).
class CountingAgent final : public v1::Agent::Service {
 public:
  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest*,
                         v1::HeartbeatReply* reply) override {
    heartbeats.fetch_add(1);
    reply->set_state("attached");
    return grpc::Status::OK;
  }
  grpc::Status Cleanup(grpc::ServerContext* ctx, const v1::CleanupRequest*,
                       v1::CleanupReply*) override {
    const absl::Time until = absl::Now() + absl::Milliseconds(cleanup_ms.load());
    while (absl::Now() < until && !ctx->IsCancelled()) absl::SleepFor(absl::Milliseconds(5));
    return grpc::Status::OK;
  }
  // A phase that ends at once: its result, then the end of the stream.
  grpc::Status Start(grpc::ServerContext*, const v1::StartRequest*,
                     grpc::ServerWriter<v1::PhaseEvent>* writer) override {
    v1::PhaseEvent e;
    e.mutable_result()->set_ok(true);
    writer->Write(e);
    return grpc::Status::OK;
  }
  std::atomic<int> heartbeats{0};
  std::atomic<int> cleanup_ms{0};
};

enum class Via { kCleanup, kStart };

struct Fixture : testing::LoopbackAgent<CountingAgent> {
  Fixture() : LoopbackAgent(v1::CLIENT) {}

  // Cleanup through the heartbeater's watch (or a Start whose stream tells
  // the watch, as PhaseAttempt passes it to agents that renew on Start)
  // every 100 ms for `duration`; the heartbeats the agent got meanwhile.
  int HeartbeatsWhileCalling(uint32_t wire_minor, absl::Duration duration,
                             Via via = Via::kCleanup) {
    client->facts.set_wire_minor(wire_minor);
    EXPECT_TRUE(client->Connect(absl::Seconds(10)).ok());
    // Lease 1200 ms: a heartbeat every 400 ms when nothing else is heard (4x
    // the calls' pace: a slow call on a loaded machine does not let one in).
    Heartbeater heartbeater({client.get()}, absl::Milliseconds(1200), 0);
    const CallWatch watch = heartbeater.WatchCalls(nullptr);
    const absl::Time end = absl::Now() + duration;
    while (absl::Now() < end) {
      if (via == Via::kStart) {
        const bool renews = wire_minor >= kStartRenewsWireMinor;
        PhaseStream stream(client.get(), v1::StartRequest(), nullptr, 0,
                           renews ? watch.answered : nullptr);
        EXPECT_TRUE(stream.WaitDone(absl::Seconds(5)));
        EXPECT_TRUE(stream.Result().ok()) << stream.Result().status();
      } else {
        auto replies = FanOut<v1::CleanupRequest, v1::CleanupReply>(
            {client.get()}, {v1::CleanupRequest()}, absl::Seconds(5), LOCKSTEP_ASYNC(Cleanup),
            &watch);
        EXPECT_TRUE(replies[0].ok()) << replies[0].status();
      }
      absl::SleepFor(absl::Milliseconds(100));  // the pace of the calls, not a wait for state
    }
    EXPECT_FALSE(heartbeater.Lost().has_value()) << heartbeater.Lost()->reason;
    return agent.heartbeats.load();
  }

  // Lease 1500 ms (a period of 500 ms): Cleanups that take `cleanup_ms`
  // each, one after another, for `duration` (the last one ends then, by its
  // deadline); the heartbeats the agent got meanwhile.
  int HeartbeatsDuringSlowCalls(int cleanup_ms, absl::Duration duration) {
    client->facts.set_wire_minor(kRenewingCallsWireMinor);
    EXPECT_TRUE(client->Connect(absl::Seconds(10)).ok());
    Heartbeater heartbeater({client.get()}, absl::Milliseconds(1500), 0);
    const CallWatch watch = heartbeater.WatchCalls(nullptr);
    // One quick call first: the lease is then known good from its sending.
    auto first = FanOut<v1::CleanupRequest, v1::CleanupReply>(
        {client.get()}, {v1::CleanupRequest()}, absl::Seconds(5), LOCKSTEP_ASYNC(Cleanup), &watch);
    EXPECT_TRUE(first[0].ok()) << first[0].status();
    const int before = agent.heartbeats.load();
    agent.cleanup_ms.store(cleanup_ms);
    const absl::Time end = absl::Now() + duration;
    while (absl::Now() < end) {
      const absl::Duration left = std::max(end - absl::Now(), absl::Milliseconds(1));
      FanOut<v1::CleanupRequest, v1::CleanupReply>({client.get()}, {v1::CleanupRequest()}, left,
                                                   LOCKSTEP_ASYNC(Cleanup), &watch);
    }
    EXPECT_FALSE(heartbeater.Lost().has_value()) << heartbeater.Lost()->reason;
    return agent.heartbeats.load() - before;
  }

};

TEST(Heartbeater, CallsTheAgentAnsweredStandInForHeartbeats) {
  Fixture f;
  // 2 s at a period of 400 ms: 5-6 heartbeats without the calls; with them
  // only the first (due at once, before any call was answered).
  const int heartbeats = f.HeartbeatsWhileCalling(kRenewingCallsWireMinor, absl::Seconds(2));
  EXPECT_LE(heartbeats, 2);
}

// Wire minor 5: the Start renews the lease too; its stream's first event
// tells the watch, with the instant the Start was sent.
TEST(Heartbeater, StartsTheAgentAnsweredStandInForHeartbeats) {
  Fixture f;
  EXPECT_LE(f.HeartbeatsWhileCalling(kStartRenewsWireMinor, absl::Seconds(2), Via::kStart), 2);
}

// Calls of 330 ms one after another, at a period of 500 ms: each answer comes
// 660 ms after the call before it was sent, past the period, but each call
// was sent within a period of the last answered one, so it holds the
// heartbeat back: none come (with the answer alone counted, 6 came in 4 s;
// 2 allowed for calls slowed past the period on a loaded machine).
TEST(Heartbeater, CallsSentInTimeHoldTheHeartbeatBackUntilTheyAreAnswered) {
  Fixture f;
  EXPECT_LE(f.HeartbeatsDuringSlowCalls(330, absl::Seconds(4)), 2);
}

// A call that hangs holds the heartbeat back by one period at most: the
// heartbeats renew the lease meanwhile (every 500 ms from the first period
// on: 5 came in 2.7 s), and the agent that answers them is not lost.
TEST(Heartbeater, AHungCallHoldsTheHeartbeatBackByOnePeriodAtMost) {
  Fixture f;
  EXPECT_GE(f.HeartbeatsDuringSlowCalls(60'000, absl::Milliseconds(2700)), 3);
}

TEST(Heartbeater, AgentsThatDoNotRenewOnStartStillGetEveryHeartbeatBetweenStarts) {
  Fixture f;
  EXPECT_GE(f.HeartbeatsWhileCalling(kStartRenewsWireMinor - 1, absl::Seconds(2), Via::kStart),
            4);
}

TEST(Heartbeater, AgentsThatDoNotRenewOnCallsStillGetEveryHeartbeat) {
  Fixture f;
  const int heartbeats =
      f.HeartbeatsWhileCalling(kRenewingCallsWireMinor - 1, absl::Seconds(2));
  EXPECT_GE(heartbeats, 4);
}

}  // namespace
}  // namespace lockstep
