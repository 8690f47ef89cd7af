#include "controller/run/tcp_probe.h"

#include <sys/resource.h>

#include <atomic>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::lockstep::testing::LoopbackSocket;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(TcpProbe, SaysForEachAddressInOrderWhetherItAcceptedAndWhyNot) {
  LoopbackSocket listening(/*listen=*/true);
  LoopbackSocket bound(/*listen=*/false);  // a port nothing listens on
  ASSERT_GT(listening.port(), 0);
  ASSERT_GT(bound.port(), 0);
  const std::vector<std::string> why =
      TcpProbe({absl::StrCat("127.0.0.1:", listening.port()),
                absl::StrCat("127.0.0.1:", bound.port()), "no-such-host.invalid:7000",
                "missing-port", absl::StrCat("localhost:", listening.port())});
  ASSERT_EQ(why.size(), 5u);
  EXPECT_EQ(why[0], "");
  EXPECT_EQ(why[1], "Connection refused");
  EXPECT_THAT(why[2], StartsWith("cannot resolve no-such-host.invalid: "));
  EXPECT_THAT(why[3], HasSubstr("missing-port"));
  // localhost may resolve to ::1 first, where nothing listens: its next
  // address is tried within the same wait.
  EXPECT_EQ(why[4], "");
  EXPECT_TRUE(TcpProbe({}).empty());
}

// More addresses than kMaxTcpProbesAtOnce and than this process has
// descriptors for (the soft limit is lowered to 256): the rest wait for a
// free socket, and each still gets its own answer. (A listener's backlog
// holds the connections it never accepts: one address in 100 listens.)
TEST(TcpProbe, MoreAddressesThanSocketsAtOnceOrDescriptorsEachGetAnAnswer) {
  LoopbackSocket listening(/*listen=*/true, /*backlog=*/64);
  LoopbackSocket bound(/*listen=*/false);
  ASSERT_GT(listening.port(), 0);
  ASSERT_GT(bound.port(), 0);
  std::vector<std::string> addresses;
  for (size_t i = 0; i < 3 * kMaxTcpProbesAtOnce; ++i) {
    addresses.push_back(absl::StrCat("127.0.0.1:", i % 100 == 0 ? listening.port() : bound.port()));
  }
  struct rlimit old {};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &old), 0);
  struct rlimit low = old;
  low.rlim_cur = std::min<rlim_t>(old.rlim_cur, 256);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  const std::vector<std::string> why = TcpProbe(addresses);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &old), 0);
  ASSERT_EQ(why.size(), addresses.size());
  for (size_t i = 0; i < why.size(); ++i) {
    EXPECT_EQ(why[i], i % 100 == 0 ? "" : "Connection refused") << addresses[i];
  }
}

// An interrupt ends the probe: what is not settled says so (an address
// that does not resolve is settled before any connection).
TEST(TcpProbe, AnInterruptLeavesWhatIsNotSettledInterrupted) {
  LoopbackSocket listening(/*listen=*/true);
  ASSERT_GT(listening.port(), 0);
  const std::atomic<bool> interrupted{true};
  const std::vector<std::string> why =
      TcpProbe({absl::StrCat("127.0.0.1:", listening.port()), "no-such-host.invalid:1"},
               kTcpProbeTimeout, &interrupted);
  ASSERT_EQ(why.size(), 2u);
  EXPECT_EQ(why[0], "interrupted");
  EXPECT_THAT(why[1], StartsWith("cannot resolve"));
}

}  // namespace
}  // namespace lockstep
