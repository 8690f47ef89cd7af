// ASSERT_EVENTUALLY / EXPECT_EVENTUALLY: run a block of gtest assertions
// again and again until one run passes, for state that another process or
// thread owns and that the test cannot wait on (as Kudu's AssertEventually).
//
//   ASSERT_EVENTUALLY([&] {
//     EXPECT_EQ(cluster.AgentState(2), "idle");
//     EXPECT_THAT(cluster.Files(2), IsEmpty());
//   });
//   ASSERT_EVENTUALLY_WITHIN(std::chrono::seconds(15), [&] { ... }) << "context";
//
// The block runs at once, then after each poll interval (1 ms, doubling up
// to 50 ms: the only sleep there is) until a run records no failure, or the
// deadline passes (kEventuallyTimeout, or the _WITHIN timeout). While it
// retries, the block's failures are captured and not reported. If no run has
// passed by the deadline, ONE failure is reported at the macro's line that
// says how long and how often it tried and carries the failures of the LAST
// run, each with its own file:line and message (never just "false").
// ASSERT_* forms report it as a fatal failure and return from the current
// function; EXPECT_* forms as a non-fatal one and go on. Either accepts
// `<< message` like any gtest assertion.
//
// Inside the block, an ASSERT_* that fails ends that run only (it returns
// from the block). The block runs at least once, and once at or after the
// deadline. Only failures of the calling thread are captured: one raised on
// another thread meanwhile is reported as usual. --gtest_break_on_failure is
// off while the block is retried and restored afterwards.
#ifndef LOCKSTEP_TESTS_ASSERT_EVENTUALLY_H_
#define LOCKSTEP_TESTS_ASSERT_EVENTUALLY_H_

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"

namespace lockstep::testing {

inline constexpr std::chrono::milliseconds kEventuallyTimeout = std::chrono::seconds(10);

// What the macros call: "" as soon as a run of `block` records no failure;
// otherwise, at the deadline, the description of the last run's failures.
inline std::string RetryUntilPass(std::chrono::milliseconds timeout,
                                  const std::function<void()>& block) {
  using Clock = std::chrono::steady_clock;
  constexpr std::chrono::milliseconds kMaxInterval(50);
  struct BreakOnFailureOff {
    const bool was = GTEST_FLAG_GET(break_on_failure);
    BreakOnFailureOff() { GTEST_FLAG_SET(break_on_failure, false); }
    ~BreakOnFailureOff() { GTEST_FLAG_SET(break_on_failure, was); }
  } break_off;
  const Clock::time_point deadline = Clock::now() + timeout;
  std::chrono::milliseconds interval(1);
  std::string last;
  int runs = 0;
  for (;;) {
    ++runs;
    ::testing::TestPartResultArray results;
    {
      ::testing::ScopedFakeTestPartResultReporter capture(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
      block();
    }
    last.clear();
    for (int i = 0; i < results.size(); ++i) {
      const ::testing::TestPartResult& r = results.GetTestPartResult(i);
      if (!r.failed()) continue;
      last += std::string(r.file_name() ? r.file_name() : "unknown file") + ":" +
              std::to_string(r.line_number()) + ": Failure\n" + r.message() + "\n";
    }
    if (last.empty()) return "";
    const Clock::time_point now = Clock::now();
    if (now >= deadline) break;
    std::this_thread::sleep_for(std::min<Clock::duration>(interval, deadline - now));
    interval = std::min(interval * 2, kMaxInterval);
  }
  return "the block did not pass within " + std::to_string(timeout.count()) + " ms (" +
         std::to_string(runs) + " runs); its last run failed:\n" + last;
}

}  // namespace lockstep::testing

#define LOCKSTEP_EVENTUALLY_(timeout, fail, ...)                                     \
  GTEST_AMBIGUOUS_ELSE_BLOCKER_                                                      \
  if (const ::std::string lockstep_eventually_failure_ =                            \
          ::lockstep::testing::RetryUntilPass((timeout), __VA_ARGS__);               \
      lockstep_eventually_failure_.empty()) {                                        \
  } else                                                                             \
    fail() << lockstep_eventually_failure_

#define ASSERT_EVENTUALLY(...) \
  LOCKSTEP_EVENTUALLY_(::lockstep::testing::kEventuallyTimeout, FAIL, __VA_ARGS__)
#define ASSERT_EVENTUALLY_WITHIN(timeout, ...) LOCKSTEP_EVENTUALLY_(timeout, FAIL, __VA_ARGS__)
#define EXPECT_EVENTUALLY(...) \
  LOCKSTEP_EVENTUALLY_(::lockstep::testing::kEventuallyTimeout, ADD_FAILURE, __VA_ARGS__)
#define EXPECT_EVENTUALLY_WITHIN(timeout, ...) \
  LOCKSTEP_EVENTUALLY_(timeout, ADD_FAILURE, __VA_ARGS__)

#endif  // LOCKSTEP_TESTS_ASSERT_EVENTUALLY_H_
