// The coordinator's parts that need no agent: the roster's bookkeeping, the
// error rules, the progress line and the phase arithmetic (the reports:
// run_observer_test.cc).
#include <string>
#include <vector>

#include "common/errors.h"
#include "controller/run/agent_roster.h"
#include "controller/run/phase_results.h"
#include "controller/run/phase_specs.h"
#include "controller/run/progress_line.h"
#include "controller/run/run_error.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

std::unique_ptr<AgentClient> Agent(const std::string& address, v1::Role role) {
  return std::make_unique<AgentClient>(address, role, grpc::InsecureChannelCredentials());
}

TEST(AgentRoster, RolesRanksLossAndDrop) {
  AgentRoster roster;
  roster.Add(Agent("127.0.0.1:1", v1::CLIENT));
  roster.Add(Agent("127.0.0.1:2", v1::OSS));
  roster.Add(Agent("127.0.0.1:3", v1::CLIENT));
  AgentClient* c0 = roster.at(0);
  AgentClient* oss = roster.at(1);
  AgentClient* c1 = roster.at(2);
  EXPECT_EQ(roster.clients(), (std::vector<AgentClient*>{c0, c1}));
  EXPECT_EQ(roster.servers(), (std::vector<AgentClient*>{oss}));
  EXPECT_EQ(roster.IndexOf(c1), 2u);

  EXPECT_TRUE(roster.MarkLost(c0, "no session: restarted", /*restarted=*/true));
  EXPECT_FALSE(roster.MarkLost(c0, "a later reason", /*restarted=*/false));
  EXPECT_EQ(roster.lost_reason(0), "no session: restarted");
  EXPECT_TRUE(roster.IsRestarted(c0));
  // Lost during a phase, a client keeps its rank until dropped.
  EXPECT_EQ(roster.clients(), (std::vector<AgentClient*>{c0, c1}));
  EXPECT_EQ(roster.NotLost(roster.clients()), (std::vector<AgentClient*>{c1}));

  EXPECT_EQ(roster.DropLost(), (std::vector<size_t>{0}));
  EXPECT_TRUE(roster.DropLost().empty());
  EXPECT_EQ(roster.clients(), (std::vector<AgentClient*>{c1}));
  EXPECT_EQ(roster.all().size(), 3u);  // indexes never change
}

TEST(RunError, SetupFailuresByKindThenCode) {
  auto kind = [](absl::Status s, v1::ErrorKind k) { return WithKind(std::move(s), k); };
  EXPECT_EQ(FailureOfSetupCall(kind(absl::FailedPreconditionError("x"), v1::SESSION_GONE)),
            RunFailure::kAgentLost);
  EXPECT_EQ(FailureOfSetupCall(kind(absl::FailedPreconditionError("x"), v1::BUSY)),
            RunFailure::kAgentLost);
  EXPECT_EQ(FailureOfSetupCall(kind(absl::FailedPreconditionError("x"), v1::PATH_REFUSED)),
            RunFailure::kBadPlan);
  EXPECT_EQ(FailureOfSetupCall(kind(absl::ResourceExhaustedError("x"), v1::NO_SPACE)),
            RunFailure::kIoError);
  // Without a kind, the code decides; the message never does.
  EXPECT_EQ(FailureOfSetupCall(absl::FailedPreconditionError("no session: busy: ")),
            RunFailure::kIoError);
  EXPECT_EQ(FailureOfSetupCall(absl::InvalidArgumentError("x")), RunFailure::kBadPlan);
  EXPECT_EQ(FailureOfSetupCall(absl::UnavailableError("x")), RunFailure::kAgentLost);
  EXPECT_TRUE(IsRestarted(kind(absl::FailedPreconditionError("x"), v1::SESSION_GONE)));
  EXPECT_FALSE(IsRestarted(kind(absl::FailedPreconditionError("x"), v1::BUSY)));
}

TEST(RunError, VerifyFailuresFromTheKindOrTheOldFlag) {
  v1::PhaseResult result;
  result.add_tasks()->set_error_kind(v1::IO_FAILED);
  EXPECT_EQ(FailureOfPhaseResult(result), RunFailure::kIoError);
  result.add_tasks()->set_error_kind(v1::VERIFY_FAILED);
  EXPECT_EQ(FailureOfPhaseResult(result), RunFailure::kVerify);
  v1::PhaseResult old_agent;
  old_agent.add_tasks()->set_verify_failed(true);
  EXPECT_EQ(FailureOfPhaseResult(old_agent), RunFailure::kVerify);
}

// The run layer asks each phase's kind for its validity criterion; only a
// train phase has one (AU below au_threshold), a superseded attempt and a
// write phase are not judged, and the fix is said once.
TEST(RunError, MissedCriteriaAskTheKind) {
  v1::RunRecord record;
  v1::TestRecord* test = record.add_tests();
  test->set_test_id(0);
  auto train = [&](const char* name, double au, bool superseded) {
    v1::PhaseRecord* pr = test->add_phases();
    pr->set_kind(v1::TRAIN);
    pr->set_phase(name);
    pr->set_ok(true);
    pr->mutable_ai()->set_au_threshold(0.9);
    pr->mutable_ai()->set_au_mean(au);
    pr->mutable_ai()->set_au_passed(au >= 0.9);
    if (superseded) pr->set_error_kind(v1::SUPERSEDED);
  };
  v1::PhaseRecord* write = test->add_phases();
  write->set_kind(v1::WRITE);
  write->set_ok(true);
  train("t1", 0.95, false);
  EXPECT_FALSE(MissedCriteria(record));
  train("t2", 0.5, true);
  EXPECT_FALSE(MissedCriteria(record));
  train("t3", 0.412, false);
  train("t4", 0.3, false);
  RunError e = MissedCriteria(record);
  EXPECT_EQ(e.kind, RunFailure::kAuBelowThreshold);
  EXPECT_NE(e.message.find("phase t3 (test 0, repetition 0): AU 41.20% is below its "
                           "au_threshold 90.00%; phase t4"),
            std::string::npos)
      << e.message;
  EXPECT_EQ(e.message.find("t2"), std::string::npos) << e.message;
  const size_t fix = e.message.find("lower au_threshold");
  ASSERT_NE(fix, std::string::npos) << e.message;
  EXPECT_EQ(e.message.find("lower au_threshold", fix + 1), std::string::npos) << e.message;
}

TEST(ProgressLine, FormatsRateShareEtaAndCpu) {
  std::vector<v1::Progress> latest(2);
  latest[0].set_bytes(25 << 20);
  latest[0].set_elapsed_ns(1);
  latest[0].set_cpu_busy_pct(30);
  latest[0].set_cpu_iowait_pct(4);
  latest[1].set_bytes(25 << 20);  // no event yet: no cpu figures
  EXPECT_EQ(ProgressLine::Format("t0/r0/write", 100 << 20, latest, absl::Seconds(1)),
            "t0/r0/write: 50 MiB/s, 50.0%, 1.0 s elapsed, ETA 1 s; clients cpu 30%, iowait 4%");
}

TEST(ProgressLine, MetadataPhasesCountOperations) {
  std::vector<v1::Progress> latest(2);
  latest[0].set_ops(3000);
  latest[0].set_elapsed_ns(1);
  latest[0].set_cpu_busy_pct(20);
  latest[1].set_ops(1000);
  EXPECT_EQ(ProgressLine::Format("t0/r0/create", 0, latest, absl::Seconds(2)),
            "t0/r0/create: 2000 ops/s, 4000 ops, 2.0 s elapsed; clients cpu 20%, iowait 0%");
}

TEST(ProgressLine, LiveLineOrPlainLinesEvery10Seconds) {
  std::vector<std::string> live, plain;
  ProgressLine on_terminal("p", 0, [&](const std::string& l) { live.push_back(l); },
                           [&](const std::string& l) { plain.push_back(l); });
  on_terminal.Update({});
  on_terminal.Clear();
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(live.back(), "");
  EXPECT_TRUE(plain.empty());

  ProgressLine to_a_file("p", 0, nullptr, [&](const std::string& l) { plain.push_back(l); });
  to_a_file.Update({});  // the first plain line comes 10 s in
  to_a_file.Clear();
  EXPECT_TRUE(plain.empty());
}

TEST(PhaseResults, InstantsMoveToOurClockAndZeroStaysZero) {
  v1::TaskResult t;
  t.set_first_io_unix_ns(1'000);
  t.set_rdwr_stop_unix_ns(5'000);
  ToControllerClock(300, &t);
  EXPECT_EQ(t.first_io_unix_ns(), 700);
  EXPECT_EQ(t.rdwr_stop_unix_ns(), 4'700);
  EXPECT_EQ(t.open_start_unix_ns(), 0);
}

TEST(PhaseResults, SkewUncertaintyIsTheTwoLargest) {
  EXPECT_EQ(StartSkewUncertaintyNs({5}), 0);
  EXPECT_EQ(StartSkewUncertaintyNs({1, 7, 3}), 10);
}


}  // namespace
}  // namespace lockstep
