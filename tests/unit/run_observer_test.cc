// The run's events (controller/record/run_observer.h): the fan-out's order
// and errors, the replay of a stored record, and Lockstep's own '#' lines as
// a report of their own, the same lines IOR's report interleaves.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "controller/plan/phase_kind.h"
#include "controller/ior/ior_report.h"
#include "controller/ior/lockstep_lines.h"
#include "controller/record/run_observer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "unit/results_fixtures.h"

namespace lockstep {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Writes each event it sees as one line of `log`, prefixed with its name.
class Recorder : public RunObserver {
 public:
  Recorder(std::string name, std::vector<std::string>* log) : name_(std::move(name)), log_(log) {}
  absl::Status OnRunBegin(const v1::RunRecord& run) override {
    return Log("begin " + run.run_id());
  }
  absl::Status OnAgentsReady(const v1::RunRecord& run) override {
    return Log(absl::StrCat("agents ", run.agents_size()));
  }
  absl::Status OnTestStarted(const v1::TestRecord& test, const v1::PhaseRecord& first) override {
    return Log(absl::StrCat("test ", test.test_id(), " ", first.phase_id()));
  }
  absl::Status OnPhaseDone(const v1::PhaseRecord& phase) override {
    return Log("phase " + phase.phase_id());
  }
  absl::Status OnPhaseFailed(const v1::PhaseRecord& phase) override {
    return Log("failed " + phase.phase_id());
  }
  absl::Status OnFilesRemoved(double, uint32_t iter) override {
    return Log(absl::StrCat("removed ", iter));
  }
  absl::Status OnTestDone(const v1::TestRecord& test) override {
    return Log(absl::StrCat("test done ", test.test_id()));
  }
  absl::Status OnNote(const std::string& text) override { return Log("note " + text); }
  absl::Status OnRunEnd(const v1::RunRecord& run, const std::string& run_dir) override {
    return Log("end " + run.status() + " " + run_dir);
  }

 private:
  absl::Status Log(const std::string& event) {
    log_->push_back(name_ + ": " + event);
    return absl::OkStatus();
  }
  const std::string name_;
  std::vector<std::string>* const log_;
};

// Fails at every phase, naming it.
class FailsAtPhases : public RunObserver {
 public:
  absl::Status OnPhaseDone(const v1::PhaseRecord& phase) override {
    return absl::InternalError("cannot render " + phase.phase_id());
  }
};

TEST(RunEvents, EveryObserverSeesEveryEventInOrder) {
  std::vector<std::string> log;
  Recorder a("a", &log), b("b", &log);
  RunEvents events;
  events.Add(&a);
  events.Add(nullptr);  // ignored
  events.Add(&b);
  v1::RunRecord run;
  run.set_run_id("r1");
  v1::PhaseRecord phase;
  phase.set_phase_id("t0/r0/write");
  EXPECT_TRUE(events.OnRunBegin(run).ok());
  EXPECT_TRUE(events.OnNote("warning: x").ok());
  EXPECT_TRUE(events.OnPhaseDone(phase).ok());
  EXPECT_TRUE(events.OnRunEnd(run, "/out/r1").ok());
  EXPECT_THAT(log, ElementsAre("a: begin r1", "b: begin r1", "a: note warning: x",
                               "b: note warning: x", "a: phase t0/r0/write",
                               "b: phase t0/r0/write", "a: end  /out/r1", "b: end  /out/r1"));
  EXPECT_TRUE(events.status().ok());
}

TEST(RunEvents, AFailingObserversErrorSurfacesAndTheOthersGoOn) {
  std::vector<std::string> log;
  FailsAtPhases failing;
  Recorder after("after", &log);
  RunEvents events;
  events.Add(&failing);
  events.Add(&after);
  v1::PhaseRecord phase;
  phase.set_phase_id("t0/r0/write");
  absl::Status s = events.OnPhaseDone(phase);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr("cannot render t0/r0/write"));
  phase.set_phase_id("t0/r0/read");
  EXPECT_FALSE(events.OnPhaseDone(phase).ok());
  EXPECT_TRUE(events.OnNote("n").ok());  // an event it does not fail at
  // The first error is kept; the observer after it saw every event.
  EXPECT_THAT(events.status().message(), HasSubstr("cannot render t0/r0/write"));
  EXPECT_THAT(log, ElementsAre("after: phase t0/r0/write", "after: phase t0/r0/read",
                               "after: note n"));
}

// A stored run with what the replay treats apart: a superseded attempt, a
// failed phase, a timed removal, a skew mark, telemetry, O_DIRECT, a partial
// status.
v1::RunRecord StoredRun() {
  testing::SynthRun synth;
  synth.direct = true;
  synth.status = "partial";
  synth.results = {{"write", 2, {100, 110}}, {"read", 2, {200, 210}}};
  v1::RunRecord run = testing::MakeRun(synth);
  run.set_error("agent 10.0.0.2:7070 lost");
  v1::TestRecord* t = run.mutable_tests(0);
  for (const v1::PhaseRecord& p : std::vector<v1::PhaseRecord>(t->phases().begin(),
                                                               t->phases().begin() + 2)) {
    *t->add_plan_specs() = p.spec();
  }
  v1::PhaseRecord superseded = t->phases(0);
  superseded.set_error("superseded: start skew");
  superseded.set_error_kind(v1::SUPERSEDED);
  *t->mutable_phases()->Add() = superseded;
  for (int i = t->phases_size() - 1; i > 0; --i) {  // first, as a run has it
    t->mutable_phases()->SwapElements(i, i - 1);
  }
  v1::PhaseRecord* w = t->mutable_phases(1);
  w->set_skew_exceeded(true);
  w->add_telemetry_lines("   clients: busy 1.2 of 16 cores");
  v1::IterationRow* removed = w->mutable_remove_row();
  removed->set_access("remove");
  removed->set_total_s(0.25);
  v1::PhaseRecord* failed = t->mutable_phases(t->phases_size() - 1);
  failed->set_ok(false);
  failed->set_error("agent 10.0.0.2:7070 lost");
  return run;
}

TEST(ReplayRun, EmitsTheEventsTheRunEmitted) {
  std::vector<std::string> log;
  Recorder r("r", &log);
  ASSERT_TRUE(ReplayRun(StoredRun(), "/out/run-a", &r, ShowsFailedPhaseOf).ok());
  EXPECT_THAT(log, ElementsAre("r: begin run-a", "r: agents 2", "r: test 1 t1/r0/write",
                               "r: phase t1/r0/write", "r: removed 0", "r: test 1 t1/r1/write",
                               "r: phase t1/r1/write", "r: test 1 t1/r0/read",
                               "r: phase t1/r0/read", "r: test 1 t1/r1/read",
                               "r: failed t1/r1/read",
                               "r: note t1/r1/read failed: agent 10.0.0.2:7070 lost",
                               "r: test done 1", "r: end partial /out/run-a"));
}

TEST(ReplayRun, ReturnsTheFirstObserverError) {
  FailsAtPhases failing;
  absl::Status s = ReplayRun(StoredRun(), "", &failing, ShowsFailedPhaseOf);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr("cannot render t1/r0/write"));
}

// Lockstep's lines alone are exactly the '#' lines of IOR's report of the
// same events: nothing of IOR's, nothing left out.
TEST(LockstepLinesObserver, PrintsTheHashLinesOfIorsReport) {
  const v1::RunRecord run = StoredRun();
  const std::string ior = RenderIorReport(run, "/out/run-a");
  std::string expected;
  for (absl::string_view line : absl::StrSplit(ior, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "#")) absl::StrAppend(&expected, line, "\n");
  }
  ReportText text;
  LockstepLinesObserver own(&text);
  ASSERT_TRUE(ReplayRun(run, "/out/run-a", &own, ShowsFailedPhaseOf).ok());
  EXPECT_EQ(text.text(), expected);
  // What the fixture is for: every kind of '#' line is there.
  for (const char* line : {"# agents: 2 (2 client)", "# O_DIRECT            : yes",
                           "exceeds max_start_skew_us (marked)", "#   clients: busy",
                           "# remove    0.250000    iter 0", "# t1/r1/read failed",
                           "#   phase        iter  start skew(us)", "# Status : partial",
                           "# Results : /out/run-a/"}) {
    EXPECT_THAT(text.text(), HasSubstr(line));
  }
  EXPECT_THAT(ior, HasSubstr("Summary of all tests:"));  // IOR's own lines: only there
}

// The per-agent records of the phases done and failed, put back in the
// record OnRunEnd gets; superseded attempts (no event) are left as they are.
TEST(PhaseAgents, KeepsTheAgentsOfDoneAndFailedPhases) {
  v1::RunRecord run = StoredRun();
  // As a run numbers them: the superseded attempt, then the one accepted.
  run.mutable_tests(0)->mutable_phases(0)->set_attempts(1);
  run.mutable_tests(0)->mutable_phases(1)->set_attempts(2);
  for (v1::PhaseRecord& p : *run.mutable_tests(0)->mutable_phases()) {
    p.clear_agents();
    v1::AgentPhaseRecord* a = p.add_agents();
    a->set_address("10.0.0.1:7070");
    a->mutable_telemetry()->set_samples(3);
  }
  PhaseAgents kept;
  PhaseAgents with_telemetry(/*keep_telemetry=*/true);
  RunEvents both;
  both.Add(&kept);
  both.Add(&with_telemetry);
  ASSERT_TRUE(ReplayRun(run, "", &both, ShowsFailedPhaseOf).ok());
  v1::RunRecord offloaded = run;  // as RunStore leaves the coordinator's record
  for (v1::PhaseRecord& p : *offloaded.mutable_tests(0)->mutable_phases()) p.clear_agents();
  const v1::RunRecord full = kept.Full(offloaded);
  const v1::RunRecord whole = with_telemetry.Full(offloaded);
  const auto& phases = full.tests(0).phases();
  for (int i = 0; i < phases.size(); ++i) {
    const bool superseded = i == 0;
    EXPECT_EQ(phases[i].agents_size(), superseded ? 0 : 1) << phases[i].phase_id();
    if (superseded) continue;
    EXPECT_FALSE(phases[i].agents(0).has_telemetry()) << phases[i].phase_id();
    EXPECT_EQ(whole.tests(0).phases(i).agents(0).telemetry().samples(), 3u);
  }
  EXPECT_FALSE(phases[phases.size() - 1].ok());  // the failed phase's agents too
}

TEST(ReportText, KeepsWhatItPassesOn) {
  std::string out;
  ReportText text([&](const std::string& s) { out += s; });
  text.Print("a\n");
  text.Print("# b\n");
  EXPECT_EQ(out, "a\n# b\n");
  EXPECT_EQ(text.text(), out);
  ReportText quiet;  // nothing to pass on to: still kept, for summary.txt
  quiet.Print("x");
  EXPECT_EQ(quiet.text(), "x");
}

}  // namespace
}  // namespace lockstep
