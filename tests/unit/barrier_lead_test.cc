// LateStartWarning (controller/run/barrier_lead.h): what the delivery check
// says before an instant that some clients will miss. BarrierLead's planning
// is tested in scale_parts_test.cc.
#include <string>

#include "controller/run/barrier_lead.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

StartDelivery TenThousandAgents() {
  StartDelivery d;
  d.clients = 10'000;
  d.acknowledged = 6'000;
  for (int i = 0; i < 4'000; ++i) d.late.push_back("10.0.0.1:" + std::to_string(20000 + i));
  d.since_first_sent = absl::Seconds(6);  // 1 ms per acknowledged client
  d.before_instant = absl::Seconds(1);
  d.lead = absl::Seconds(7);
  d.lead_basis = "2 ms + 3.0 x Prepare round 2.3 s";
  return d;
}

TEST(LateStartWarning, NothingWhenEveryClientAcknowledged) {
  StartDelivery d = TenThousandAgents();
  d.acknowledged = d.clients;
  d.late.clear();
  EXPECT_EQ(LateStartWarning("t0/r0/write", d), "");
}

TEST(LateStartWarning, SaysHowManyWhichAndTheLeadTheObservedRateNeeds) {
  const std::string w = LateStartWarning("t0/r0/write", TenThousandAgents());
  EXPECT_THAT(w, HasSubstr("warning: phase t0/r0/write: 4000 of 10000 clients had not "
                           "acknowledged their Start 1000.0 ms before the instant"));
  // The first five addresses, then how many more.
  EXPECT_THAT(w, HasSubstr("10.0.0.1:20000, 10.0.0.1:20001"));
  EXPECT_THAT(w, HasSubstr("10.0.0.1:20004, ... (3995 more)"));
  EXPECT_THAT(w, Not(HasSubstr("10.0.0.1:20005")));
  EXPECT_THAT(w, HasSubstr("lead 7000.0 ms: 2 ms + 3.0 x Prepare round 2.3 s"));
  // 4,000 more at 1 ms each: 4 s from now, 3 s after the instant; the whole
  // delivery is 10 s, times the safety factor.
  EXPECT_THAT(w, HasSubstr("(6000 in 6000.0 ms) the last will have it about 3000.0 ms after"));
  EXPECT_THAT(w, HasSubstr("a lead of about 15000.0 ms would be needed"));
  EXPECT_THAT(w, HasSubstr("The phase goes on"));
}

TEST(LateStartWarning, WithNoAcknowledgementTheRateIsSaidToBeUnknown) {
  StartDelivery d;
  d.clients = 2;
  d.late = {"127.0.0.1:1", "127.0.0.1:2"};
  d.since_first_sent = absl::Milliseconds(45);
  d.before_instant = absl::Milliseconds(5);
  d.lead = absl::Milliseconds(50);
  d.lead_basis = "observed";
  const std::string w = LateStartWarning("t0/r1/read", d);
  EXPECT_THAT(w, HasSubstr("2 of 2 clients"));
  EXPECT_THAT(w, HasSubstr("instant (127.0.0.1:1, 127.0.0.1:2; lead 50.0 ms: observed)"));
  EXPECT_THAT(w, HasSubstr("none has acknowledged yet, so the delivery rate is not known"));
  EXPECT_THAT(w, Not(HasSubstr("would be needed")));
}

}  // namespace
}  // namespace lockstep
