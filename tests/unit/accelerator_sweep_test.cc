// `lockstep dlio --find-max-accelerators`: the counts tried, in order, for
// the AU each count gets.
#include "controller/dlio/accelerator_sweep.h"

#include <functional>
#include <optional>
#include <vector>

#include "gtest/gtest.h"

namespace lockstep {
namespace {

// The counts the sweep runs when a count of `n` accelerators passes iff
// passes(n), and what it found.
struct Swept {
  std::vector<uint32_t> tried;
  uint32_t best = 0;
  uint32_t failed = 0;
};
Swept Sweep(AcceleratorSweep sweep, const std::function<bool(uint32_t)>& passes) {
  Swept s;
  std::optional<uint32_t> n = sweep.first();
  while (n) {
    s.tried.push_back(*n);
    if (s.tried.size() == 64) {
      ADD_FAILURE() << "the sweep does not end";
      break;
    }
    n = sweep.Next(*n, passes(*n));
  }
  s.best = sweep.best();
  s.failed = sweep.failed();
  return s;
}

TEST(AcceleratorSweep, DoublesToTheMaximumWhileEveryCountPasses) {
  const Swept s = Sweep(AcceleratorSweep({}, 1, 4), [](uint32_t) { return true; });
  EXPECT_EQ(s.tried, (std::vector<uint32_t>{1, 2, 4}));
  EXPECT_EQ(s.best, 4u);
  EXPECT_EQ(s.failed, 0u);
}

TEST(AcceleratorSweep, TheLastDoublingStopsAtTheMaximum) {
  const Swept s = Sweep(AcceleratorSweep({}, 1, 6), [](uint32_t) { return true; });
  EXPECT_EQ(s.tried, (std::vector<uint32_t>{1, 2, 4, 6}));
  EXPECT_EQ(s.best, 6u);
}

TEST(AcceleratorSweep, BisectsBetweenTheBestPassedAndTheFewestFailed) {
  const Swept s = Sweep(AcceleratorSweep({}, 1, 64), [](uint32_t n) { return n <= 13; });
  EXPECT_EQ(s.tried, (std::vector<uint32_t>{1, 2, 4, 8, 16, 12, 14, 13}));
  EXPECT_EQ(s.best, 13u);
  EXPECT_EQ(s.failed, 14u);
}

TEST(AcceleratorSweep, AFailingMaximumIsBisectedToo) {
  const Swept s = Sweep(AcceleratorSweep({}, 2, 6), [](uint32_t n) { return n <= 4; });
  EXPECT_EQ(s.tried, (std::vector<uint32_t>{2, 4, 6, 5}));
  EXPECT_EQ(s.best, 4u);
  EXPECT_EQ(s.failed, 5u);
}

TEST(AcceleratorSweep, AFailingFirstCountEndsItWithNoneFound) {
  const Swept s = Sweep(AcceleratorSweep({}, 4, 64), [](uint32_t) { return false; });
  EXPECT_EQ(s.tried, (std::vector<uint32_t>{4}));
  EXPECT_EQ(s.best, 0u);
  EXPECT_EQ(s.failed, 4u);
}

TEST(AcceleratorSweep, StartingAtTheMaximumRunsItOnce) {
  const Swept s = Sweep(AcceleratorSweep({}, 8, 8), [](uint32_t) { return true; });
  EXPECT_EQ(s.tried, (std::vector<uint32_t>{8}));
  EXPECT_EQ(s.best, 8u);
}

TEST(AcceleratorSweep, GivenCountsRunInTheirOrderWhateverTheyGet) {
  const Swept s =
      Sweep(AcceleratorSweep({8, 2, 16, 4}, 1, 4), [](uint32_t n) { return n <= 4; });
  EXPECT_EQ(s.tried, (std::vector<uint32_t>{8, 2, 16, 4}));
  EXPECT_EQ(s.best, 4u);
  EXPECT_EQ(s.failed, 8u);
}

}  // namespace
}  // namespace lockstep
