#include "controller/run/clock_sync.h"

#include "gtest/gtest.h"

namespace lockstep {
namespace {

TEST(ClockSync, OffsetAndDelayFromFourTimestamps) {
  // Agent 1 ms ahead; 100 µs each way; 20 µs in the agent.
  ClockSample s{0, 1'100'000, 1'120'000, 220'000};
  ClockEstimate e = EstimateFromSamples({s});
  EXPECT_EQ(e.offset_ns, 1'000'000);
  EXPECT_EQ(e.delay_ns, 200'000);
}

TEST(ClockSync, TrustsTheSampleWithTheSmallestDelay) {
  // An asymmetric, slow sample would mislead; the fast one wins.
  ClockSample slow{0, 5'000'000 + 500, 5'000'000 + 600, 5'100'000};
  ClockSample fast{10'000'000, 10'000'000 + 500 + 50'000, 10'000'000 + 500 + 50'010, 10'100'010};
  ClockEstimate e = EstimateFromSamples({slow, fast, slow});
  EXPECT_EQ(e.delay_ns, 100'000);
  EXPECT_EQ(e.offset_ns, 500);
  EXPECT_EQ(e.samples, 3u);
}

}  // namespace
}  // namespace lockstep
