// LateStartWarning (controller/run/barrier_lead.h): what the delivery check
// says before an instant that some clients will miss; the lead's settle time
// learned from late releases (ObserveRelease, LatestReleaseLateNs). The rest
// of BarrierLead's planning is tested in scale_parts_test.cc.
#include <map>
#include <string>

#include "controller/record/phase_reduce.h"
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

// 16 agents x 1 task on 16 cores (issue 43): every Start in time, the tasks
// released 1.6 ms late at a 3 ms lead, on time at 20 ms.
TEST(BarrierLeadSettle, AReleaseLateDespiteAStartInTimeLengthensEveryLaterLead) {
  BarrierLead lead;
  lead.Observe(absl::Milliseconds(20), absl::Milliseconds(19));
  lead.Observe(absl::Milliseconds(3), absl::Milliseconds(2));  // delivery 1 ms
  const absl::Duration before = lead.Next(absl::ZeroDuration(), absl::ZeroDuration(), 16);
  EXPECT_EQ(before, absl::Microseconds(3500));
  lead.ObserveRelease(absl::Microseconds(1600));
  const LeadPlan plan = lead.Plan(absl::ZeroDuration(), absl::ZeroDuration(), 16);
  EXPECT_EQ(plan.lead, before + absl::Microseconds(3200));
  EXPECT_THAT(plan.basis, HasSubstr("settle 3.2 ms (tasks left their wait 1.6 ms late)"));
  // On time afterwards: it stays (a lead that was once too short stays long enough).
  lead.ObserveRelease(absl::Microseconds(-3));
  lead.ObserveRelease(absl::ZeroDuration());
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::ZeroDuration(), 16), plan.lead);
}

TEST(BarrierLeadSettle, WithinTheToleranceNothingChangesAndTheSettleIsBounded) {
  BarrierLead lead;
  const absl::Duration before = lead.Next(absl::ZeroDuration(), absl::Milliseconds(1), 2);
  lead.ObserveRelease(BarrierLead::kReleaseTolerance);
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::Milliseconds(1), 2), before);
  for (int i = 0; i < 100; ++i) lead.ObserveRelease(absl::Milliseconds(40));
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::Milliseconds(1), 2),
            before + BarrierLead::kMaxSettle);
}

v1::PhaseRecord TwoClients() {
  v1::PhaseRecord pr;
  pr.set_start_at_unix_ns(1'000'000'000);
  for (const char* address : {"a:1", "b:1"}) {
    v1::AgentPhaseRecord* a = pr.add_agents();
    a->set_address(address);
    a->set_role(v1::CLIENT);
    a->set_start_margin_ns(500'000);  // had its Start 0.5 ms early
    a->add_tasks()->set_release_unix_ns(1'000'000'100);
  }
  return pr;
}

TEST(LatestReleaseLate, TheLatestTaskBeyondItsClocksUncertainty) {
  v1::PhaseRecord pr = TwoClients();
  pr.mutable_agents(1)->add_tasks()->set_release_unix_ns(1'001'600'000);  // 1.6 ms late
  EXPECT_EQ(LatestReleaseLateNs(pr, {}), 1'600'000);
  EXPECT_EQ(LatestReleaseLateNs(pr, {{"b:1", 100'000}}), 1'500'000);
}

TEST(LatestReleaseLate, AClientThatHadItsStartLateIsTheDeliverysNotTheSettles) {
  v1::PhaseRecord pr = TwoClients();
  pr.mutable_agents(1)->set_start_margin_ns(-2'000'000);
  pr.mutable_agents(1)->mutable_tasks(0)->set_release_unix_ns(1'002'000'000);
  EXPECT_EQ(LatestReleaseLateNs(pr, {}), 100);
  // Tasks that never started (release 0) count for nothing.
  pr.mutable_agents(0)->mutable_tasks(0)->set_release_unix_ns(0);
  EXPECT_EQ(LatestReleaseLateNs(pr, {}), 0);
}

}  // namespace
}  // namespace lockstep
