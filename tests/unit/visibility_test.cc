// Run visibility's words (controller/results/visibility.h), which lockstep
// push and the results service both parse, and the date parser under them
// (history.h ParseInstant).
#include "controller/results/visibility.h"

#include <string>

#include "absl/strings/match.h"
#include "controller/results/history.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

// "embargo 99999-01-01" was stored as 2262-04-11 (int64 nanoseconds ran out).
TEST(Visibility, AnEmbargoEndsByTheYear9999) {
  const auto far = ParseRunVisibility("embargo 99999-01-01");
  ASSERT_FALSE(far.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(far.status()));
  EXPECT_TRUE(absl::StrContains(std::string(far.status().message()), "0001-01-01 to 9999-12-31"))
      << far.status();
  const auto last = ParseRunVisibility("embargo 9999-12-31");
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->until_unix_s, 253402214400);
  EXPECT_EQ(RunVisibilityText(*last), "embargo 9999-12-31");
  EXPECT_FALSE(ParseInstant("10000-01-01T00:00:00Z").ok());
  EXPECT_TRUE(ParseInstant("2027-03-01").ok());
}

}  // namespace
}  // namespace lockstep
