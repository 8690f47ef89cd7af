#include "controller/record/phase_id.h"

#include "gtest/gtest.h"

namespace lockstep {
namespace {

TEST(PhaseIdTest, WritesAndReadsTheWireText) {
  const PhaseId id{2, 13, "ior-easy-write"};
  EXPECT_EQ(id.str(), "t2/r13/ior-easy-write");
  auto back = PhaseId::Parse(id.str());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, id);
  // A phase name may hold a '/' after the two numbers.
  auto slash = PhaseId::Parse("t0/r1/a/b");
  ASSERT_TRUE(slash.has_value());
  EXPECT_EQ(slash->phase, "a/b");
}

TEST(PhaseIdTest, RefusesOtherText) {
  for (const char* bad : {"", "t0", "t0/r1", "t0/r1/", "x0/r1/w", "t/r1/w", "t0/q1/w",
                          "t-1/r0/w", "t0x/r0/w", "t99999999999/r0/w"}) {
    EXPECT_FALSE(PhaseId::Parse(bad).has_value()) << bad;
  }
}

TEST(PhaseIdTest, OrdersByTestRepetitionThenName) {
  EXPECT_LT((PhaseId{0, 1, "z"}), (PhaseId{1, 0, "a"}));
  EXPECT_LT((PhaseId{1, 0, "z"}), (PhaseId{1, 1, "a"}));
  EXPECT_LT((PhaseId{1, 1, "a"}), (PhaseId{1, 1, "b"}));
  EXPECT_FALSE((PhaseId{1, 1, "a"}) == (PhaseId{1, 1, "b"}));
}

}  // namespace
}  // namespace lockstep
