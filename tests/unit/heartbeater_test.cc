// The Heartbeater against a fake agent on a real loopback gRPC port: calls
// the agent answered through the heartbeater's watch stand in for heartbeats
// (agents of wire minor 4 renew their lease on them), and older agents still
// get every heartbeat; so do Starts to agents of minor 5.
#include "controller/run/heartbeater.h"

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

namespace lockstep {
namespace {

// Counts heartbeats; answers Cleanup OK.
class CountingAgent final : public v1::Agent::Service {
 public:
  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest*,
                         v1::HeartbeatReply* reply) override {
    heartbeats.fetch_add(1);
    reply->set_state("attached");
    return grpc::Status::OK;
  }
  grpc::Status Cleanup(grpc::ServerContext*, const v1::CleanupRequest*,
                       v1::CleanupReply*) override {
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
};

enum class Via { kCleanup, kStart };

struct Fixture {
  Fixture() {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&agent);
    server = builder.BuildAndStart();
    client = std::make_unique<AgentClient>(absl::StrFormat("127.0.0.1:%d", port), v1::CLIENT,
                                           grpc::InsecureChannelCredentials());
    client->session_id = "s1";
  }
  ~Fixture() { server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1)); }

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

  CountingAgent agent;
  int port = 0;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<AgentClient> client;
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
