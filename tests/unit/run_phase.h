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

// Prepares `s` in `dir` and runs it now; an empty result if Prepare failed.
inline v1::PhaseResult RunSpec(const v1::PhaseSpec& s, const std::string& dir) {
  auto r = PhaseRunner::Prepare(s, dir);
  EXPECT_OK(r);
  if (!r.ok()) return {};
  return RunNow(r->get());
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_UNIT_RUN_PHASE_H_
