// The report a run printed, chosen from its record (controller/results/
// run_report.h): the front end and `lockstep report` build the same
// observers from it.
#include <string>

#include "absl/strings/match.h"
#include "controller/plan/phase_kind.h"
#include "controller/ior/ior_report.h"
#include "controller/ior/lockstep_lines.h"
#include "controller/results/run_report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "unit/results_fixtures.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::RunRecord SmallRun() {
  testing::SynthRun synth;
  synth.results = {{"write", 1, {100}}, {"read", 1, {200}}};
  return testing::MakeRun(synth);
}

// What LockstepLinesObserver alone prints of `run`.
std::string OwnLines(const v1::RunRecord& run) {
  ReportText text;
  LockstepLinesObserver own(&text);
  EXPECT_TRUE(ReplayRun(run, "/out/run-a", &own, ShowsFailedPhaseOf).ok());
  return text.text();
}

TEST(RunReport, WithoutAFrontEndIsIorsReportAtItsVerbosity) {
  v1::RunRecord run = SmallRun();
  for (bool verbose : {false, true}) {
    run.set_ior_verbose(verbose);
    EXPECT_EQ(RenderRunReport(run, "/out/run-a"), RenderIorReport(run, "/out/run-a"));
  }
}

TEST(RunReport, Io500sIsLockstepsLinesAfterItsNotes) {
  v1::RunRecord run = SmallRun();
  run.mutable_front_end_report()->set_tool("io500");
  EXPECT_EQ(RenderRunReport(run, "/out/run-a"), OwnLines(run));
  run.mutable_front_end_report()->add_note_lines("# lockstep io500: a note\n");
  EXPECT_EQ(RenderRunReport(run, "/out/run-a"), "# lockstep io500: a note\n" + OwnLines(run));
}

TEST(RunReport, MdtestsIsItsLayoutNotIors) {
  v1::RunRecord run = SmallRun();
  v1::FrontEndReport& front = *run.mutable_front_end_report();
  front.set_tool("mdtest");
  front.add_note_lines("# lockstep mdtest: 1 agent (local) x 2 tasks = 2 tasks\n");
  MdtestCommandInfo info;
  info.args = {"-n", "10"};
  info.path = "/scratch/md";
  info.tasks = 2;
  info.nodes = 1;
  info.tasks_per_node = 2;
  info.items = 10;
  *front.mutable_mdtest() = MdtestReportInfoOf(info);
  const std::string text = RenderRunReport(run, "/out/run-a");
  EXPECT_TRUE(absl::StartsWith(text, "# lockstep mdtest: 1 agent")) << text;
  EXPECT_THAT(text, HasSubstr("mdtest-4.1.0+dev was launched with 2 total task(s) on 1 node(s)"));
  EXPECT_THAT(text, HasSubstr("Command line used: mdtest '-n' '10'"));
  EXPECT_THAT(text, Not(HasSubstr("Summary of all tests:")));
  // The record keeps every field of the command's info.
  const MdtestCommandInfo back = MdtestCommandInfoOf(front.mdtest());
  EXPECT_EQ(back.args, info.args);
  EXPECT_EQ(back.path, info.path);
  EXPECT_EQ(back.items, info.items);
  EXPECT_EQ(back.print_rate, info.print_rate);
  EXPECT_EQ(back.files, info.files);
}

TEST(RunReport, IozonesIsItsLayoutNotIors) {
  v1::RunRecord run = SmallRun();
  run.set_iozone_command_line("iozone -i 0 -t 2");
  IozoneCommandInfo info;
  info.children = 2;
  info.file_kb = 1024;
  info.record_kb = 64;
  info.tests = {{IozoneTest::kInitialWrite, "write"}, {IozoneTest::kRead, "read"}};
  v1::FrontEndReport& front = *run.mutable_front_end_report();
  front.set_tool("iozone");
  *front.mutable_iozone() = IozoneReportInfoOf(info);
  const std::string text = RenderRunReport(run, "/out/run-a");
  EXPECT_THAT(text, HasSubstr("\tCommand line used: iozone -i 0 -t 2\n"));
  EXPECT_THAT(text, HasSubstr("iozone test complete."));
  EXPECT_THAT(text, Not(HasSubstr("Summary of all tests:")));
  const IozoneCommandInfo back = IozoneCommandInfoOf(front.iozone(), run.iozone_command_line());
  EXPECT_EQ(back.command_line, "iozone -i 0 -t 2");
  EXPECT_EQ(back.tests, info.tests);
  EXPECT_EQ(back.stonewall, info.stonewall);
}

}  // namespace
}  // namespace lockstep
