// The log (common/log.h): one entry, one line.
#include "common/log.h"

#include <algorithm>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

// A name a request carries (a plan's dir or file name) may hold a newline:
// logged, it is escaped, never a forged entry of its own (security review).
TEST(Log, AnEntryIsOneLineWhateverItsMessage) {
  ::testing::internal::CaptureStderr();
  LogInfo("phase dir %s", "a\nE 00:00:00.000 lockstep-agent[1] forged\x1b[2J");
  const std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_THAT(out, ::testing::HasSubstr("phase dir a\\x0aE 00:00:00.000 lockstep-agent[1] "
                                        "forged\\x1b[2J\n"));
}

}  // namespace
}  // namespace lockstep
