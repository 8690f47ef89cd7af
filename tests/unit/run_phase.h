// Runs a PhaseRunner in-process for unit tests: start it now and wait for its
// PhaseResult (with a deadline, never a sleep).
#ifndef LOCKSTEP_TESTS_UNIT_RUN_PHASE_H_
#define LOCKSTEP_TESTS_UNIT_RUN_PHASE_H_

#include <string>

#include "absl/synchronization/notification.h"
#include "agent/phase_runner.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep::testing {

// Starts a prepared runner 1 ms from now and returns its result.
inline v1::PhaseResult RunNow(PhaseRunner* r) {
  absl::Notification done;
  v1::PhaseResult result;
  EXPECT_OK(r->Start(RealtimeNs() + 1'000'000, 0, 50, [&](const v1::PhaseEvent& e) {
    if (e.has_result()) {
      result = e.result();
      done.Notify();
    }
  }));
  EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(120)));
  return result;
}

// A BACKEND phase of `method` ("file", "osd_bench", "obdfilter") with
// `tasks` tasks on this agent, 4 MiB per task in blocks of 1 MiB.
inline v1::PhaseSpec BackendPhaseSpec(const std::string& method, uint32_t tasks) {
  v1::PhaseSpec s;
  s.set_phase_id("t0/r0/back");
  s.set_kind(v1::BACKEND);
  s.set_file_name("scratch");
  s.set_tasks(tasks);
  s.set_total_tasks(tasks);
  s.mutable_backend()->set_method(method);
  s.mutable_backend()->set_bytes(4 << 20);
  s.mutable_backend()->set_block_bytes(1 << 20);
  return s;
}

// Starts a prepared runner 1 ms from now; Wait returns its result. For
// runners that must run at once (a NET phase's two ends).
class StartedPhase {
 public:
  explicit StartedPhase(PhaseRunner* r) {
    EXPECT_OK(r->Start(RealtimeNs() + 1'000'000, 0, 50, [this](const v1::PhaseEvent& e) {
      if (e.has_result()) {
        result_ = e.result();
        done_.Notify();
      }
    }));
  }
  v1::PhaseResult Wait() {
    EXPECT_TRUE(done_.WaitForNotificationWithTimeout(absl::Seconds(90)));
    return result_;
  }

 private:
  absl::Notification done_;
  v1::PhaseResult result_;
};

// A NET phase "t0/r0/net" of this agent: `send_peers` peers x 2 streams to
// send, `receive_streams` to receive, 300 ms of 64 KiB messages, 5 pings.
inline v1::PhaseSpec NetPhaseSpec(uint32_t send_peers, uint32_t receive_streams,
                                  uint32_t first_rank, uint32_t total_tasks,
                                  const std::string& token) {
  v1::PhaseSpec s;
  s.set_phase_id("t0/r0/net");
  s.set_kind(v1::NET);
  s.set_file_name("net");
  s.set_tasks(send_peers * 2 + receive_streams);
  s.set_first_rank(first_rank);
  s.set_total_tasks(total_tasks);
  v1::NetSpec* n = s.mutable_net();
  n->set_streams_per_peer(2);
  n->set_message_bytes(64 << 10);
  n->set_duration_ms(300);
  n->set_ping_count(5);
  n->set_ping_bytes(64);
  n->set_token(token);
  n->set_send_peers(send_peers);
  n->set_receive_streams(receive_streams);
  return s;
}

// Prepares `s` in `dir` and runs it now; an empty result if Prepare failed.
inline v1::PhaseResult RunSpec(const v1::PhaseSpec& s, const std::string& dir) {
  auto r = PhaseRunner::Prepare(s, dir);
  EXPECT_OK(r);
  if (!r.ok()) return {};
  return RunNow(r->get());
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_UNIT_RUN_PHASE_H_
