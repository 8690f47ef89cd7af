// ASSERT_EVENTUALLY / EXPECT_EVENTUALLY (assert_eventually.h) and
// RunCommand's timeout (test_util.h): the helpers the other tests rely on to
// fail with a useful message and not to hang.
#include <signal.h>

#include <chrono>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::TestPartResult;
using ::testing::TestPartResultArray;
using std::chrono::milliseconds;

// Runs `body` with gtest's reporting captured into `reported`.
template <typename F>
void Capture(TestPartResultArray* reported, F body) {
  ::testing::ScopedFakeTestPartResultReporter capture(
      ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, reported);
  body();
}

int CountOf(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(AssertEventually, PassesOnceABlockPassesAndReportsNothing) {
  int runs = 0;
  TestPartResultArray reported;
  Capture(&reported, [&] {
    ASSERT_EVENTUALLY([&] {
      ++runs;
      ASSERT_GE(runs, 3) << "not yet";
    });
  });
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(reported.size(), 0);
}

TEST(AssertEventually, AtTheDeadlineReportsTheLastRunsFailureNotFalse) {
  int runs = 0;
  bool after = false;
  TestPartResultArray reported;
  Capture(&reported, [&] {
    ASSERT_EVENTUALLY_WITHIN(milliseconds(100), [&] {
      ++runs;
      EXPECT_EQ(runs, 0) << "run " << runs << " of the block";
    }) << "while waiting for the counter";
    after = true;  // not reached: the ASSERT_ form returns
  });
  EXPECT_FALSE(after);
  EXPECT_GT(runs, 2);
  ASSERT_EQ(reported.size(), 1);
  const TestPartResult& r = reported.GetTestPartResult(0);
  EXPECT_TRUE(r.fatally_failed());
  const std::string message = r.message();
  EXPECT_THAT(message, HasSubstr("the block did not pass within 100 ms (" +
                                 std::to_string(runs) + " runs); its last run failed:"));
  // The last run's own failure, with its place and its streamed message...
  EXPECT_THAT(message, HasSubstr("assert_eventually_test.cc:"));
  EXPECT_THAT(message, HasSubstr("Which is: " + std::to_string(runs)));
  EXPECT_THAT(message, HasSubstr("run " + std::to_string(runs) + " of the block"));
  EXPECT_THAT(message, HasSubstr("while waiting for the counter"));
  // ...and only the last run's.
  EXPECT_EQ(CountOf(message, "of the block"), 1) << message;
  EXPECT_THAT(message, Not(HasSubstr("\nfalse")));
}

TEST(AssertEventually, ExpectFormIsNonFatalAndGoesOn) {
  bool after = false;
  TestPartResultArray reported;
  Capture(&reported, [&] {
    EXPECT_EVENTUALLY_WITHIN(milliseconds(20), [&] { EXPECT_THAT("idle", HasSubstr("busy")); });
    after = true;
  });
  EXPECT_TRUE(after);
  ASSERT_EQ(reported.size(), 1);
  EXPECT_TRUE(reported.GetTestPartResult(0).nonfatally_failed());
  EXPECT_THAT(reported.GetTestPartResult(0).message(), HasSubstr("has substring \"busy\""));
}

TEST(AssertEventually, AFailedAssertInsideEndsThatRunOnly) {
  int runs = 0, reached = 0;
  TestPartResultArray reported;
  Capture(&reported, [&] {
    ASSERT_EVENTUALLY([&] {
      ASSERT_GE(++runs, 2);
      ++reached;
    });
  });
  EXPECT_EQ(reported.size(), 0);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(reached, 1);
}

TEST(AssertEventually, EveryFailureOfTheLastRunIsKept) {
  TestPartResultArray reported;
  Capture(&reported, [&] {
    EXPECT_EVENTUALLY_WITHIN(milliseconds(10), [&] {
      EXPECT_EQ(1, 2) << "first";
      EXPECT_EQ(3, 4) << "second";
    });
  });
  ASSERT_EQ(reported.size(), 1);
  const std::string message = reported.GetTestPartResult(0).message();
  EXPECT_EQ(CountOf(message, "first"), 1) << message;
  EXPECT_EQ(CountOf(message, "second"), 1) << message;
}

TEST(RunCommand, KillsAtTheTimeoutWithoutWaitingForTheChild) {
  const auto t0 = std::chrono::steady_clock::now();
  CommandResult r = RunCommand({"/bin/sleep", "30"}, milliseconds(200));
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, 128 + SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));

  CommandResult quick = RunCommand({"/bin/echo", "hi"}, milliseconds(10000));
  EXPECT_FALSE(quick.timed_out);
  EXPECT_EQ(quick.exit_code, 0);
  EXPECT_EQ(quick.out, "hi\n");
  EXPECT_EQ(RunCommand({"/bin/false"}, milliseconds(10000)).exit_code, 1);
}

}  // namespace
}  // namespace lockstep::testing
