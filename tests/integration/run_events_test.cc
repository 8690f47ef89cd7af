// The coordinator's events on real agents: every observer sees the run's
// events in order, summary.txt is what the observers printed, and an
// observer's error fails the run (RunFailure::kOther) naming it.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "controller/plan/plan.h"
#include "controller/record/run_observer.h"
#include "controller/run/coordinator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Logs every event but the notes (a loaded machine adds missed-start ones),
// and prints one line per phase.
class Recorder : public RunObserver {
 public:
  Recorder(std::vector<std::string>* log, ReportText* text) : log_(log), text_(text) {}
  absl::Status OnRunBegin(const v1::RunRecord&) override { return Log("begin"); }
  absl::Status OnAgentsReady(const v1::RunRecord& run) override {
    return Log(absl::StrCat("agents ", run.agents_size()));
  }
  absl::Status OnTestStarted(const v1::TestRecord&, const v1::PhaseRecord& first) override {
    return Log("start " + first.phase_id());
  }
  absl::Status OnPhaseDone(const v1::PhaseRecord& phase) override {
    text_->Print(phase.phase_id() + "\n");
    return Log(absl::StrCat("done ", phase.phase_id(), " agents ", phase.agents_size()));
  }
  absl::Status OnFilesRemoved(double, uint32_t iter) override {
    return Log(absl::StrCat("removed ", iter));
  }
  absl::Status OnTestDone(const v1::TestRecord& test) override {
    return Log(absl::StrCat("test done ", test.test_id()));
  }
  absl::Status OnRunEnd(const v1::RunRecord& run, const std::string&) override {
    return Log("end " + run.status());
  }

 private:
  absl::Status Log(const std::string& e) {
    log_->push_back(e);
    return absl::OkStatus();
  }
  std::vector<std::string>* const log_;
  ReportText* const text_;
};

class FailsAtTestDone : public RunObserver {
 public:
  absl::Status OnTestDone(const v1::TestRecord& test) override {
    return absl::InternalError(absl::StrCat("cannot render test ", test.test_id()));
  }
};

TEST(RunEvents, TheCoordinatorEmitsTheRunsEventsToEveryObserver) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start(2));
  auto plan = ParsePlan(cluster.Plan()
                            .Set("name", "events")
                            .AddPhase(FilePerProcess("w", "write", "64k", "256k"))
                            .AddPhase(FilePerProcess("r", "read", "64k", "256k"))
                            .Toml(),
                        "events.toml");
  ASSERT_OK(plan);
  for (bool failing : {false, true}) {
    std::vector<std::string> first, second;
    ReportText text;
    Recorder a(&first, &text), b(&second, &text);
    FailsAtTestDone fails;
    RunEvents events;
    events.Add(&a);
    if (failing) events.Add(&fails);
    events.Add(&b);
    RunOptions options;
    options.out_dir = cluster.results_dir();
    options.insecure = true;
    options.observer = &events;
    options.report = &text;
    RunOutcome outcome = RunPlan(*plan, options);
    EXPECT_THAT(first, ElementsAre("begin", "agents 2", "start t0/r0/w", "done t0/r0/w agents 2",
                                   "start t0/r0/r", "done t0/r0/r agents 2", "removed 0",
                                   "test done 0", "end complete"));
    EXPECT_EQ(first, second);
    ASSERT_FALSE(outcome.run_dir.empty());
    EXPECT_EQ(*ReadFileToString(outcome.run_dir + "/summary.txt"), text.text());
    if (failing) {
      EXPECT_EQ(outcome.failure, RunFailure::kOther);
      EXPECT_THAT(outcome.error, HasSubstr("cannot render test 0"));
    } else {
      EXPECT_EQ(outcome.failure, RunFailure::kNone) << outcome.error;
    }
  }
}

}  // namespace
}  // namespace lockstep::testing
