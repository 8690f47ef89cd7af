#include "controller/results/journal_report.h"

#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/json.h"
#include "controller/record/journal.h"
#include "controller/record/run_status.h"
#include "controller/run/run_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::PhaseRecord Phase(uint32_t rep, double total_s, const std::string& error = "") {
  v1::PhaseRecord p;
  p.set_phase_id(absl::StrFormat("t0/r%u/w", rep));
  p.set_phase("w");
  p.set_kind(v1::WRITE);
  p.set_repetition(rep);
  v1::PhaseSpec* s = p.mutable_spec();
  s->set_kind(v1::WRITE);
  s->set_tasks(2);
  s->set_total_tasks(4);
  s->set_transfer_bytes(1 << 20);
  s->set_block_bytes(8 << 20);
  s->set_segments(1);
  s->set_file_per_process(true);
  p.mutable_row()->set_access("write");
  p.mutable_row()->set_bytes(32 << 20);
  p.mutable_row()->set_total_s(total_s);
  p.mutable_row()->set_bw_mib(32 / total_s);
  p.set_ok(error.empty() || error.rfind("superseded", 0) == 0);
  p.set_error(error);
  return p;
}

TEST(JournalReport, RebuildsTheSummaryFromTheJournalOfAKilledRun) {
  testing::TempDir dir;
  {
    std::ofstream j(dir / "journal.jsonl");
    j << ToJson(Phase(0, 1.0), false) << "\n";
    j << ToJson(Phase(1, 9.0, "superseded: start skew"), false) << "\n";
    j << ToJson(Phase(1, 2.0), false) << "\n";
    j << "{\"phase_id\": \"t0/r2/w\", \"pha";  // cut by the crash
  }
  std::ofstream(dir / "plan.toml") << "[[phase]]\n";
  auto r = RebuildRun(dir.path());
  ASSERT_OK(r);
  EXPECT_TRUE(r->from_journal);
  EXPECT_EQ(r->torn_lines, 1);
  EXPECT_EQ(r->record.status(), "interrupted");
  ASSERT_EQ(r->record.tests_size(), 1);
  ASSERT_EQ(r->record.tests(0).summary_size(), 1);
  const v1::SummaryRow& s = r->record.tests(0).summary(0);
  EXPECT_EQ(s.repetitions(), 2u);  // the superseded attempt is left out
  EXPECT_DOUBLE_EQ(s.bw_max_mib(), 32.0);
  EXPECT_DOUBLE_EQ(s.bw_min_mib(), 16.0);
  EXPECT_THAT(r->text, HasSubstr("Summary of all tests:"));
  EXPECT_THAT(r->text, HasSubstr("Max Write: 32.00 MiB/sec"));

  ASSERT_OK(WriteRebuiltRun(dir.path(), *r));
  auto again = RebuildRun(dir.path());  // now from the run.json it wrote
  ASSERT_OK(again);
  EXPECT_FALSE(again->from_journal);
  EXPECT_EQ(again->record.tests(0).summary(0).repetitions(), 2u);
}

// Issue 39: a run that failed (an agent killed in repetition 2) rebuilt
// from its journal said "interrupted" where its run.json said "failed": the
// rebuild took no notice of how the run ended. The run's last journal line
// records it; the rebuild applies the live run's rule (RunStatusOf).
TEST(JournalReport, RebuiltRunHasTheStatusTheRunGaveFromTheJournalsEndLine) {
  struct Case {
    v1::RunEnd::Ending ending;
    bool summarized, went_on;
    const char* status;
  };
  for (const Case& c : {Case{v1::RunEnd::FAILED, false, false, "failed"},
                        Case{v1::RunEnd::FAILED, true, false, "partial"},
                        Case{v1::RunEnd::INTERRUPTED, true, false, "interrupted"},
                        Case{v1::RunEnd::AU_BELOW_THRESHOLD, true, false, "failed"},
                        Case{v1::RunEnd::COMPLETED, true, true, "partial"},
                        Case{v1::RunEnd::COMPLETED, true, false, "complete"}}) {
    testing::TempDir out;
    auto store = RunStore::Create(out.path(), "p", "[[phase]]\n");
    ASSERT_OK(store);
    ASSERT_OK((*store)->AppendJournal(Phase(0, 1.0)));
    ASSERT_OK((*store)->AppendJournal(Phase(1, 2.0, "agent 127.0.0.1:9 lost during t0/r1/w")));
    v1::RunEnd end;
    end.set_ending(c.ending);
    end.set_first_test_summarized(c.summarized);
    end.set_went_on_after_loss(c.went_on);
    end.set_error("agent 127.0.0.1:9 lost during t0/r1/w: killed");
    end.set_finished_at("2026-12-04T18:00:00Z");
    ASSERT_OK((*store)->AppendRunEnd(end));
    const std::string dir = (*store)->dir();
    store->reset();
    auto r = RebuildRun(dir);
    ASSERT_OK(r);
    EXPECT_EQ(r->torn_lines, 0);  // the end line is no phase, and no torn line
    EXPECT_EQ(r->record.status(), c.status) << c.ending;
    EXPECT_EQ(r->record.status(), RunStatusOf(end));
    EXPECT_EQ(r->record.error(), end.error());
    EXPECT_EQ(r->record.finished_at(), "2026-12-04T18:00:00Z");
    ASSERT_EQ(r->record.tests_size(), 1);
    EXPECT_EQ(r->record.tests(0).phases_size(), 2);
  }
}

// The rule itself, as the live run's Finish used to spell it out.
TEST(RunStatus, OneRuleForTheLiveRunAndTheRebuild) {
  v1::RunEnd end;
  EXPECT_EQ(RunStatusOf(end), "complete");
  end.set_went_on_after_loss(true);
  EXPECT_EQ(RunStatusOf(end), "partial");
  end.set_ending(v1::RunEnd::FAILED);
  EXPECT_EQ(RunStatusOf(end), "failed");  // before the first test's end
  end.set_first_test_summarized(true);
  EXPECT_EQ(RunStatusOf(end), "partial");  // the first test's rows stand
  end.set_ending(v1::RunEnd::AU_BELOW_THRESHOLD);
  EXPECT_EQ(RunStatusOf(end), "failed");  // invalid, whatever ran
  end.set_ending(v1::RunEnd::INTERRUPTED);
  EXPECT_EQ(RunStatusOf(end), "interrupted");
  // The journal line round-trips; other lines are not end lines.
  EXPECT_EQ(ParseJournalEndLine(JournalEndLine(end))->ending(), v1::RunEnd::INTERRUPTED);
  EXPECT_FALSE(ParseJournalEndLine(ToJson(Phase(0, 1.0), false)).has_value());
  EXPECT_FALSE(ParseJournalEndLine("{\"run_end\": {\"endi").has_value());
}

// Issue 41 (fold): the journal has each test as the run began it, so that a
// rebuild gives what the live run gave, not what the phase lines suggest: the
// planned repetitions and sweep point without the plan (a front end's plan,
// or a plan edited since), the clients the run used, the test's start, and a
// row for a planned phase the run never reached.
TEST(JournalReport, RebuiltTestsAreTheTestsTheRunBegan) {
  testing::TempDir out;
  // A plan that no longer says what the run ran: nothing is read from it.
  auto store = RunStore::Create(out.path(), "p", "[run]\nrepetitions = 9\n[[phase]]\n");
  ASSERT_OK(store);
  std::vector<v1::TestRecord> began;
  for (uint32_t id : {0u, 1u}) {
    v1::TestRecord& t = began.emplace_back();
    t.set_test_id(id);
    t.set_tasks_per_agent(2);
    t.set_total_tasks(6);
    t.set_client_agents(3);
    t.set_repetitions(3);
    t.set_started_at(id == 0 ? "2026-12-07T07:00:00Z" : "2026-12-07T07:05:00Z");
    v1::SweepValue* v = t.add_sweep();
    v->set_key("transfer_size");
    v->set_value(id == 0 ? "1m" : "4m");
    for (const char* name : {"w", "r"}) {
      v1::PhaseSpec* spec = t.add_plan_specs();
      *spec = Phase(0, 1.0).spec();
      spec->set_test_id(id);
      spec->set_phase_name(name);
    }
    *t.add_phases() = Phase(0, 1.0);  // left out of the line, whatever the test holds
    ASSERT_OK((*store)->AppendTestStart(t));
    if (id == 1) break;  // the controller dies in test 1, before its first phase ends
    for (uint32_t rep = 0; rep < 3; ++rep) {
      v1::PhaseRecord p = Phase(rep, 1.0 + rep);
      p.mutable_spec()->set_phase_name("w");
      ASSERT_OK((*store)->AppendJournal(p));
    }
  }
  const std::string dir = (*store)->dir();
  store->reset();
  auto r = RebuildRun(dir);
  ASSERT_OK(r);
  EXPECT_EQ(r->torn_lines, 0);
  ASSERT_EQ(r->record.tests_size(), 2);
  for (int i = 0; i < 2; ++i) {
    const v1::TestRecord& t = r->record.tests(i);
    v1::TestRecord header = t;
    header.clear_phases();
    header.clear_summary();
    header.clear_layers();
    v1::TestRecord want = began[i];
    want.clear_phases();
    EXPECT_EQ(ToJson(header, false), ToJson(want, false)) << "test " << i;
    // A row per planned phase, in the plan's order: "r" never ran.
    ASSERT_EQ(t.summary_size(), 2) << "test " << i;
    EXPECT_EQ(t.summary(0).operation(), "write");
    EXPECT_EQ(t.summary(0).repetitions(), i == 0 ? 3u : 0u);
    EXPECT_EQ(t.summary(1).repetitions(), 0u);
  }
  EXPECT_EQ(r->record.tests(0).phases_size(), 3);
  EXPECT_EQ(r->record.tests(1).phases_size(), 0);
}

// `lockstep report` of a run still going: its controller holds the journal
// (RunStore's flock). The report is of the journal so far, says "running",
// and writes no run.json: one written now would win over the whole journal
// later if that controller died. Once the store is closed (or its process
// gone), the same directory rebuilds and writes as a stopped run.
TEST(JournalReport, ARunStillGoingIsReportedAsRunningAndNothingIsWritten) {
  testing::TempDir out;
  auto store = RunStore::Create(out.path(), "p", "[[phase]]\n");
  ASSERT_OK(store);
  ASSERT_OK((*store)->AppendJournal(Phase(0, 1.0)));
  const std::string dir = (*store)->dir();
  EXPECT_TRUE(JournalIsHeld(dir));
  auto live = RebuildRun(dir);
  ASSERT_OK(live);
  EXPECT_TRUE(live->running);
  EXPECT_EQ(live->record.status(), "running");
  EXPECT_THAT(live->record.error(), HasSubstr("still going"));
  ASSERT_OK(WriteRebuiltRun(dir, *live));
  EXPECT_FALSE(std::filesystem::exists(dir + "/run.json"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/summary.txt"));
  store->reset();
  EXPECT_FALSE(JournalIsHeld(dir));
  auto stopped = RebuildRun(dir);
  ASSERT_OK(stopped);
  EXPECT_FALSE(stopped->running);
  EXPECT_EQ(stopped->record.status(), "interrupted");
  ASSERT_OK(WriteRebuiltRun(dir, *stopped));
  EXPECT_TRUE(std::filesystem::exists(dir + "/run.json"));
  EXPECT_FALSE(JournalIsHeld(out.path() + "/no-such-run"));
}

// Journals across versions. The marks print set fields only, so that an
// older `lockstep report` (whose parser refuses unknown fields) still reads
// a run_end line with no lost agent; and a line of a later version is read
// for what this one knows, an unknown mark left out.
TEST(JournalReport, LinesReadAcrossVersions) {
  v1::RunEnd end;
  end.set_ending(v1::RunEnd::FAILED);
  end.set_error("e");
  EXPECT_EQ(JournalEndLine(end), R"({"run_end":{"ending":"FAILED","error":"e"}})");
  testing::TempDir dir;
  {
    std::ofstream j(dir / "journal.jsonl");
    std::string phase = ToJson(Phase(0, 1.0), false);
    phase.insert(1, R"("a_later_field":{"x":1},)");
    j << phase << "\n";
    j << R"({"a_later_mark":{"phase_id":"t0/r0/w"}})" << "\n";
    j << R"({"run_end":{"ending":"FAILED","error":"e","a_later_field":2}})" << "\n";
  }
  auto r = RebuildRun(dir.path());
  ASSERT_OK(r);
  EXPECT_EQ(r->torn_lines, 1);  // the unknown mark
  ASSERT_EQ(r->record.tests_size(), 1);
  EXPECT_EQ(r->record.tests(0).phases_size(), 1);
  EXPECT_EQ(r->record.status(), "failed");
}

// An older journal (no test_start lines) still rebuilds: a test begun from
// its first phase line, the repetitions the plan the run kept asks.
TEST(JournalReport, AnOlderJournalWithoutTestStartLinesStillRebuilds) {
  testing::TempDir dir;
  {
    std::ofstream j(dir / "journal.jsonl");
    j << ToJson(Phase(0, 1.0), false) << "\n";
  }
  std::ofstream(dir / "plan.toml")
      << "[run]\nrepetitions = 4\n[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \".\"\n";
  auto r = RebuildRun(dir.path());
  ASSERT_OK(r);
  ASSERT_EQ(r->record.tests_size(), 1);
  const v1::TestRecord& t = r->record.tests(0);
  EXPECT_EQ(t.client_agents(), 2u);  // 4 tasks, 2 per agent
  EXPECT_EQ(t.repetitions(), 4u);
  ASSERT_EQ(t.plan_specs_size(), 1);
  ASSERT_EQ(t.summary_size(), 1);
  EXPECT_EQ(t.summary(0).repetitions(), 1u);
  ReplayedJournal replayed;
  v1::RunRecord run;
  replayed = ReplayJournal(ToJson(Phase(0, 1.0), false), &run);
  EXPECT_EQ(replayed.inferred_tests.count(0), 1u);
  EXPECT_FALSE(replayed.end.has_value());
}

// A killed run's report has the lines the live run printed before its first
// phase: Began, Command line, the agents (from run-start.json).
TEST(JournalReport, RebuiltReportHasTheRunsHeaderAndAgents) {
  testing::TempDir out;
  auto store = RunStore::Create(out.path(), "p", "[[phase]]\n");
  ASSERT_OK(store);
  v1::RunRecord start;
  start.set_run_id((*store)->run_id());
  start.set_started_at("2026-12-02T16:00:00Z");
  start.set_command_line("lockstep ior -w -F --local 2");
  start.set_ior_command_line("ior -w -F");
  start.set_controller_host("ctl");
  v1::AgentRecord* a = start.add_agents();
  a->set_address("127.0.0.1:7070");
  a->set_role(v1::CLIENT);
  a->mutable_facts()->set_hostname("node7");
  ASSERT_OK((*store)->WriteRunStart(start));
  v1::PhaseRecord first = Phase(0, 1.0);
  first.set_prepare_sent_unix_ns(int64_t{1764691200} * 1000000000);  // 2025-12-02T16:00:00Z
  ASSERT_OK((*store)->AppendJournal(first));
  const std::string dir = (*store)->dir();
  store->reset();
  auto r = RebuildRun(dir);
  ASSERT_OK(r);
  EXPECT_TRUE(r->from_journal);
  EXPECT_EQ(r->record.status(), "interrupted");
  EXPECT_THAT(r->text, Not(HasSubstr("Began               : \n")));
  EXPECT_THAT(r->text, HasSubstr("Command line        : ior -w -F\n"));
  EXPECT_THAT(r->text, HasSubstr("Machine             : Linux ctl\n"));
  EXPECT_THAT(r->text, HasSubstr("127.0.0.1:7070"));
  EXPECT_THAT(r->text, HasSubstr("node7"));
  EXPECT_THAT(r->text, Not(HasSubstr("StartTime           : \n")));
  ASSERT_EQ(r->record.tests_size(), 1);
}

TEST(JournalReport, NotARunDirectory) {
  testing::TempDir dir;
  auto r = RebuildRun(dir.path());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("neither run.json nor journal.jsonl"));
}

}  // namespace
}  // namespace lockstep
