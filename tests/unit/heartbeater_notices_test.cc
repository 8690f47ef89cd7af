// The Heartbeater's notices against a fake agent on a real loopback gRPC
// port: a server agent's daemons going down and coming back, and an I/O
// stall reported long before io_stall_timeout_ms fails the phase.
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "assert_eventually.h"
#include "controller/run/agent_client.h"
#include "controller/run/heartbeater.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lockstep/v1/agent.grpc.pb.h"
#include "unit/loopback_agent.h"

namespace lockstep {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

// Answers heartbeats with whatever the test set.
class ScriptedAgent final : public v1::Agent::Service {
 public:
  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest* request,
                         v1::HeartbeatReply* reply) override {
    absl::MutexLock lock(&mu);
    asked_stall_ms = request->stall_ms();
    ++heartbeats;
    reply->set_state("running");
    for (const std::string& d : daemons_down) reply->add_daemons_down(d);
    for (const std::string& s : stalled) reply->add_stalled(s);
    return grpc::Status::OK;
  }
  // What the next heartbeats answer, and what they asked, under the lock.
  void SetDaemonsDown(std::vector<std::string> down) {
    absl::MutexLock lock(&mu);
    daemons_down = std::move(down);
  }
  void SetStalled(std::vector<std::string> tasks) {
    absl::MutexLock lock(&mu);
    stalled = std::move(tasks);
  }
  int Heartbeats() {
    absl::MutexLock lock(&mu);
    return heartbeats;
  }
  uint32_t AskedStallMs() {
    absl::MutexLock lock(&mu);
    return asked_stall_ms;
  }

  absl::Mutex mu;
  std::vector<std::string> daemons_down ABSL_GUARDED_BY(mu);
  std::vector<std::string> stalled ABSL_GUARDED_BY(mu);
  uint32_t asked_stall_ms ABSL_GUARDED_BY(mu) = 0;
  int heartbeats ABSL_GUARDED_BY(mu) = 0;
};

struct Fixture : testing::LoopbackAgent<ScriptedAgent> {
  Fixture() : LoopbackAgent(v1::OSS) { EXPECT_TRUE(client->Connect(absl::Seconds(10)).ok()); }

  // Notices gathered until one contains `text` (or the deadline): all of them.
  std::vector<std::string> NoticesUntil(Heartbeater& h, const std::string& text) {
    std::vector<std::string> all;
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (absl::Now() < deadline) {
      for (std::string& n : h.TakeNotices()) all.push_back(std::move(n));
      for (const std::string& n : all) {
        if (n.find(text) != std::string::npos) return all;
      }
      absl::SleepFor(absl::Milliseconds(20));  // polling, bounded by the deadline
    }
    return all;
  }

};

TEST(HeartbeaterNotices, ADaemonGoingDownAndComingBackIsSaidOnceEach) {
  Fixture f;
  Heartbeater heartbeater({f.client.get()}, absl::Milliseconds(600), 0);
  f.agent.SetDaemonsDown({"osd.2 (pid 4242) is not running"});
  std::vector<std::string> notices = f.NoticesUntil(heartbeater, "osd.2");
  ASSERT_THAT(notices, Contains(HasSubstr("osd.2 (pid 4242) is not running")))
      << absl::StrJoin(notices, "\n");
  EXPECT_THAT(notices[0], HasSubstr("oss agent 127.0.0.1:"));
  // Said once, though every later heartbeat reports it too: three more
  // answered heartbeats bring nothing new.
  const int seen = f.agent.Heartbeats();
  ASSERT_EVENTUALLY([&] { ASSERT_GE(f.agent.Heartbeats(), seen + 3); });
  for (const std::string& n : heartbeater.TakeNotices()) EXPECT_THAT(n, Not(HasSubstr("osd.2")));
  f.agent.SetDaemonsDown({});
  notices = f.NoticesUntil(heartbeater, "run again");
  EXPECT_THAT(notices, Contains(HasSubstr("file-system daemons run again")));
  EXPECT_FALSE(heartbeater.Lost().has_value());
}

TEST(HeartbeaterNotices, AStallIsReportedBeforeTheTimeoutFailsThePhase) {
  Fixture f;
  // Timeout 60 s: the agents are asked for stalls from 10 s on, and one
  // reported is a warning, not yet a stall that fails the phase.
  Heartbeater heartbeater({f.client.get()}, absl::Milliseconds(600), 60000);
  f.agent.SetStalled({"task 3 stuck in mdtest /m/d at item 7 for 10.4 s"});
  std::vector<std::string> notices = f.NoticesUntil(heartbeater, "stuck");
  ASSERT_THAT(notices, Contains(HasSubstr("I/O stalled (the file system does not answer): task 3")))
      << absl::StrJoin(notices, "\n");
  EXPECT_THAT(notices, Contains(HasSubstr("io_stall_timeout_ms = 60000")));
  EXPECT_FALSE(heartbeater.Stalled().has_value());
  EXPECT_EQ(f.agent.AskedStallMs(), Heartbeater::kStallWarningMs);
  f.agent.SetStalled({});
  notices = f.NoticesUntil(heartbeater, "moving again");
  EXPECT_THAT(notices, Contains(HasSubstr("I/O is moving again")));
  EXPECT_FALSE(heartbeater.Stalled().has_value());
}

TEST(HeartbeaterNotices, AShortTimeoutStillFailsAtTheTimeout) {
  Fixture f;
  // 500 ms is below the warning threshold: a reported stall is the stall.
  Heartbeater heartbeater({f.client.get()}, absl::Milliseconds(600), 500);
  f.agent.SetStalled({"task 0 stuck in write /d/f at offset 0 for 0.6 s"});
  ASSERT_EVENTUALLY([&] { ASSERT_TRUE(heartbeater.Stalled().has_value()); });
  EXPECT_THAT(heartbeater.Stalled()->reason, HasSubstr("task 0 stuck"));
}

}  // namespace
}  // namespace lockstep
