// `lockstep io500` without processes: IO500's ini (every bad input the
// issue names), the score with published figures, the validity rules, the
// plan, and the formats of result_summary.txt and result.txt.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "controller/io500/io500_command.h"
#include "controller/io500/io500_config.h"
#include "controller/io500/io500_output.h"
#include "controller/io500/io500_plan.h"
#include "controller/io500/io500_score.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "controller/plan/kinds/find_plan.h"
#include "controller/plan/kinds/mdtest_plan.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<Io500Config> Parse(const std::string& text) {
  return ParseIo500Config(text, "io500.ini");
}

// The error of parsing `text`, which must fail with InvalidArgument.
std::string ErrorOf(const std::string& text) {
  auto c = Parse(text);
  EXPECT_FALSE(c.ok()) << text;
  if (c.ok()) return "";
  EXPECT_TRUE(absl::IsInvalidArgument(c.status())) << c.status();
  return std::string(c.status().message());
}

TEST(Io500Config, DefaultsAreIo500s) {
  auto c = Parse("[global]\ndatadir = /scratch/io500  # comment\n");
  ASSERT_OK(c);
  EXPECT_EQ(c->datadir, "/scratch/io500");
  EXPECT_EQ(c->resultdir, "./results");
  EXPECT_TRUE(c->timestamp_resultdir);
  EXPECT_TRUE(c->timestamp_datadir);  // IO500's default (phase_opt.c)
  EXPECT_EQ(c->stonewall_seconds, 300u);
  EXPECT_EQ(c->ior_easy_transfer_bytes, 2u << 20);
  EXPECT_EQ(c->ior_easy_block_bytes, 9920000ull << 20);
  EXPECT_TRUE(c->ior_easy_file_per_proc);
  EXPECT_EQ(c->ior_hard_segments, 10000000u);
  EXPECT_EQ(c->mdtest_easy_items, 1000000u);
  EXPECT_EQ(c->mdtest_hard_items, 1000000u);
  for (const char* phase : kIo500Phases) EXPECT_TRUE(c->PhaseEnabled(phase)) << phase;
  const std::string resolved = ResolvedIo500Config(*c);
  EXPECT_THAT(resolved, HasSubstr("[global]\ndatadir = /scratch/io500\ntimestamp-datadir = TRUE\n"));
  EXPECT_THAT(resolved, HasSubstr("[debug]\nstonewall-time = 300\npause-dir = \n\n"));
  EXPECT_THAT(resolved, HasSubstr("[ior-easy]\nAPI = \ntransferSize = 2m\n"));
  EXPECT_THAT(resolved, HasSubstr("[ior-rnd4K-easy-read]\nAPI = \nrun = TRUE\n\n"));
  // IO500's own sections, the timestamp's without options (io500 --list).
  EXPECT_THAT(resolved, HasSubstr("\n[mdworkbench-create]\nrun = TRUE\n\n[timestamp]\n\n"
                                  "[find-easy]\nexternal-script = \n"));
  EXPECT_THAT(resolved, Not(HasSubstr("[timestamp]\nrun")));
  // The app's default datadir when the file gives none.
  auto bare = Parse("[debug]\nstonewall-time = 300\n");
  ASSERT_OK(bare);
  EXPECT_EQ(bare->datadir, "./datafiles");
}

// config.ini is the file io500 --verify hashes: parsed back, it gives the
// config-hash of the original (issue 44: the app refused Lockstep's
// config.ini, "unknown option run" in [timestamp]).
TEST(Io500Config, ResolvedConfigHashesAsTheOriginal) {
  auto c = Parse("[global]\ndatadir = /d\ndrop-caches = 1\n[debug]\nstonewall-time = 10\n"
                 "[ior-easy]\ntransferSize = 1m\nblockSize = 32m\n[find]\nrun = TRUE\n");
  ASSERT_OK(c);
  auto again = ParseIo500Config(ResolvedIo500Config(*c), "config.ini");
  ASSERT_OK(again);
  EXPECT_EQ(Io500ConfigHash(*again), Io500ConfigHash(*c));
  EXPECT_EQ(ResolvedIo500Config(*again), ResolvedIo500Config(*c));
}

TEST(Io500Config, ValuesCaseAndCommentsAsIo500) {
  auto c = Parse("; a comment\n[GLOBAL]\n  DataDir=/d\ndrop-caches = 1\n[Debug] # x\n"
                 "stonewall-time = 10\n[ior-easy]\ntransferSize = 1m\nblockSize = 4m\n"
                 "filePerProc = false\nverbosity = -1\n[ior-hard]\nsegmentCount = 7\n"
                 "[mdtest-easy]\nn = 5\n[mdtest-hard]\nn =\n[find]\nnproc = 4\n"
                 "[global]\napi = posix\n");
  ASSERT_OK(c);
  EXPECT_EQ(c->datadir, "/d");
  EXPECT_TRUE(c->drop_caches);
  EXPECT_EQ(c->stonewall_seconds, 10u);
  EXPECT_EQ(c->ior_easy_block_bytes, 4u << 20);
  EXPECT_FALSE(c->ior_easy_file_per_proc);
  EXPECT_EQ(c->ior_hard_segments, 7u);
  EXPECT_EQ(c->mdtest_easy_items, 5u);
  EXPECT_EQ(c->mdtest_hard_items, 1000000u);  // an empty value keeps the default
  EXPECT_EQ(c->find_nproc, 4u);
  EXPECT_THAT(c->notes, ::testing::Contains(HasSubstr("[find] nproc is ignored")));
  EXPECT_THAT(ResolvedIo500Config(*c), HasSubstr("drop-caches = TRUE\n"));
}

// Every bad input of issue 13, each with the file, the line and the key:
// {what follows "[global]\ndatadir = /d\n", what the error says}.
TEST(Io500Config, BadInputNamesFileLineAndKey) {
  const std::string g = "[global]\ndatadir = /d\n";
  const std::pair<const char*, const char*> kBad[] = {
      {"[ior-medium]\n", "io500.ini:3: unknown section [ior-medium]"},
      // An option the real app does not know, refused as the app refuses it
      // (ini-parse.c's words), with the file, line and the options there.
      {"foo = 1\n",
       "io500.ini:3: Parsing error in section global line 3, unknown option "
       "\"foo\" with value \"1\" (io500 refuses it too); the options of "
       "[global] are: datadir,"},
      {"[ior-easy]\nsegmentCount = 3\n",
       "io500.ini:4: Parsing error in section ior-easy line 4, unknown option "
       "\"segmentCount\""},
      {"[timestamp]\nrun = TRUE\n",
       "io500.ini:4: Parsing error in section timestamp line 4, unknown option "
       "\"run\" with value \"TRUE\""},
      // Options the app knows and Lockstep does not do: refused by name
      // (at the app's default they pass: below).
      {"scc = TRUE\n", "io500.ini:3: [global] scc = TRUE: the Student Cluster Competition's"},
      {"[find]\nexternal-script = /bin/x\n",
       "io500.ini:4: [find] external-script = /bin/x: lockstep runs its own"},
      {"just words\n", "io500.ini:3: unexpected content"},
      {"[global\n", "io500.ini:3: malformed section line"},
      {"datadir = /e\n", "io500.ini:3: [global] datadir is given twice (first on line 2)"},
      {"drop-caches = maybe\n", "io500.ini:3: [global] drop-caches = maybe: expects a boolean"},
      {"[debug]\nstonewall-time = 0\n",
       "io500.ini:4: [debug] stonewall-time = 0: must be at least 1"},
      {"[debug]\nstonewall-time = -5\n", "io500.ini:4: [debug] stonewall-time = -5: must be "},
      {"api = MPIIO\n", "io500.ini:3: [global] api = MPIIO: only the POSIX API"},
      {"[ior-hard-write]\nAPI = HDF5\n",
       "io500.ini:4: [ior-hard-write] API = HDF5: only the POSIX API"},
      {"[ior-easy]\nuniqueDir = TRUE\n",
       "io500.ini:4: [ior-easy] uniqueDir = TRUE: a directory per task"},
      {"[ior-hard]\ncollective = TRUE\n",
       "io500.ini:4: [ior-hard] collective = TRUE: collective I/O is MPI-IO's"},
      {"[ior-easy]\ntransferSize = 2m\nblockSize = 3m\n",
       "io500.ini:5: [ior-easy] blockSize = 3m: must be a multiple of transferSize (2m)"},
      {"[ior-easy]\ntransferSize = 2x\n", "io500.ini:4: [ior-easy] transferSize = 2x: "},
      {"[mdtest-hard]\nn = 0\n", "io500.ini:4: [mdtest-hard] n = 0: must be at least 1"},
      {"[ior-hard]\nsegmentCount = 0\n", "[ior-hard] segmentCount = 0: must be at least 1"},
      {"[find]\nrun = maybe\n", "io500.ini:4: [find] run = maybe"},
  };
  for (const auto& [ini, error] : kBad) EXPECT_THAT(ErrorOf(g + ini), HasSubstr(error)) << ini;
  EXPECT_THAT(ErrorOf("datadir = /d\n"),
              HasSubstr("io500.ini:1: key 'datadir' outside any section"));
  // The app passes over a key without a value, known or not, and options
  // Lockstep does not do at the app's default.
  EXPECT_OK(Parse(g + "[ior-easy]\nnosuchkey =\n"));
  EXPECT_OK(Parse(g + "dataPacketType = timestamp\n[find-easy]\nexternal-script = /bin/x\n"
                      "[mdworkbench]\nwaitingTime = 0.5\n"));
}

TEST(Io500Config, RunFalseSkipsThePhaseAndWhatNeedsIt) {
  auto c = Parse("[global]\ndatadir = /d\n[ior-easy-write]\nrun = FALSE\n[mdtest-hard]\nrun = 0\n");
  ASSERT_OK(c);
  EXPECT_FALSE(c->PhaseEnabled("ior-easy-write"));
  EXPECT_TRUE(c->PhaseEnabled("ior-easy-read"));
  EXPECT_EQ(Io500SkipReason(*c, "ior-easy-write"), "run = FALSE in the configuration");
  EXPECT_THAT(Io500SkipReason(*c, "ior-easy-read"), HasSubstr("needs what ior-easy-write writes"));
  EXPECT_THAT(Io500SkipReason(*c, "ior-rnd4K-easy-read"), HasSubstr("ior-easy-write"));
  for (const char* p : {"mdtest-hard-write", "mdtest-hard-stat", "mdtest-hard-read",
                        "mdtest-hard-delete"}) {
    EXPECT_FALSE(Io500SkipReason(*c, p).empty()) << p;
  }
  Io500Setup s;
  s.datadir = "/d";
  const Plan plan = BuildIo500Plan(*c, s, nullptr);
  for (const PhasePlan& p : plan.phases) {
    EXPECT_FALSE(absl::StartsWith(p.name, "ior-easy")) << p.name;
    EXPECT_FALSE(absl::StartsWith(p.name, "mdtest-hard")) << p.name;
    EXPECT_NE(p.name, "ior-rnd4K-easy-read");
  }
  // find: newer than ior-hard-write's start (IO500's timestampfile).
  ASSERT_FALSE(Io500PlanPhases(plan, "find").empty());
  EXPECT_EQ(Io500PlanPhases(plan, "find")[0]->Own<FindPlan>().find_newer_than, "ior-hard-write");
}

std::vector<std::string> Names(const Plan& plan) {
  std::vector<std::string> out;
  for (const PhasePlan& p : plan.phases) out.push_back(p.name);
  return out;
}

TEST(Io500Plan, PhasesInIo500OrderWithIo500Parameters) {
  auto c = Parse("[global]\ndatadir = /d\n[ior-hard]\nsegmentCount = 9\n[mdtest-easy]\nn = 11\n");
  ASSERT_OK(c);
  Io500Setup s;
  s.datadir = "/d";
  s.resultdir = "/r";
  s.client_agents = 2;
  s.tasks_per_agent = 3;
  s.stonewall_seconds = 10;
  s.timestamp = "2026.12.04-18.08.56";  // the real app's run of issue 44: its -G values
  const Plan plan = BuildIo500Plan(*c, s, nullptr);
  EXPECT_THAT(Names(plan),
              ::testing::ElementsAre("ior-easy-write", "mdtest-easy-write-tree", "mdtest-easy-write",
                                   "ior-hard-write", "mdtest-hard-write-tree", "mdtest-hard-write",
                                   "find", "ior-easy-read", "mdtest-easy-stat", "ior-hard-read",
                                   "mdtest-hard-stat", "mdtest-easy-delete",
                                   "mdtest-easy-delete-tree", "mdtest-hard-read",
                                   "mdtest-hard-delete", "mdtest-hard-delete-tree",
                                   "ior-rnd4K-easy-read"));
  const PhasePlan& ew = plan.phases[0];
  EXPECT_EQ(ew.dir, "/d/ior-easy");
  EXPECT_TRUE(ew.file_per_process && ew.fsync && ew.intra_barriers);
  EXPECT_FALSE(ew.keep);  // removed after the last phase, as IO500's cleanup
  EXPECT_EQ(ew.stonewall_seconds, 10u);
  EXPECT_TRUE(ew.stonewall_wear_out);
  EXPECT_EQ(ew.tasks_per_agent, std::vector<uint32_t>{3});
  const PhasePlan& me = plan.phases[2];
  EXPECT_EQ(me.Own<MdtestPlan>().md_op, v1::MD_FILE_CREATE);
  EXPECT_TRUE(me.Own<MdtestPlan>().md_unique_dir && me.Own<MdtestPlan>().md_leaf_only);
  EXPECT_EQ(me.Own<MdtestPlan>().md_items, 11u);
  EXPECT_EQ(me.Own<MdtestPlan>().md_stonewall_seconds, 10u);
  EXPECT_EQ(me.Own<MdtestPlan>().md_neighbor_shift, 3u);  // -N 1 × tasks per node
  const PhasePlan& hw = plan.phases[3];
  EXPECT_FALSE(hw.file_per_process);
  EXPECT_EQ(hw.dir, "/d/ior-hard");
  EXPECT_EQ(hw.file_name, "file");
  EXPECT_EQ(hw.transfer_bytes, 47008u);
  EXPECT_EQ(hw.block_bytes, 47008u);
  EXPECT_EQ(hw.segments, 9u);
  const PhasePlan& mh = plan.phases[5];
  EXPECT_FALSE(mh.Own<MdtestPlan>().md_unique_dir);
  EXPECT_EQ(mh.Own<MdtestPlan>().md_write_bytes, 3901u);
  const PhasePlan& find = plan.phases[6];
  EXPECT_EQ(find.kind, v1::FIND);
  EXPECT_EQ(find.dir, "/d");
  EXPECT_EQ(find.Own<FindPlan>().find_newer_than, "ior-hard-write");
  EXPECT_TRUE(find.Own<FindPlan>().find_match_size);
  EXPECT_EQ(find.Own<FindPlan>().find_size_bytes, 3901u);
  EXPECT_EQ(find.Own<FindPlan>().find_name_glob, "*01*");
  const PhasePlan& er = plan.phases[7];
  EXPECT_TRUE(er.verify && er.reorder_tasks);
  EXPECT_EQ(er.stonewall_count_from, "ior-easy-write");
  EXPECT_EQ(plan.phases[8].stonewall_count_from, "mdtest-easy-write");
  EXPECT_EQ(plan.phases[13].Own<MdtestPlan>().md_op, v1::MD_FILE_READ);
  EXPECT_EQ(plan.phases[13].stonewall_count_from, "mdtest-hard-write");
  // IO500's rnd4K: -z -z -t=4096 -b=4096 -s=10000000, its own stonewall,
  // -C -Q 2 with a file per process.
  const PhasePlan& rnd = plan.phases.back();
  EXPECT_TRUE(rnd.random_blocks);
  EXPECT_FALSE(rnd.random_offsets);
  EXPECT_EQ(rnd.stonewall_count_from, "");
  EXPECT_EQ(rnd.transfer_bytes, 4096u);
  EXPECT_EQ(rnd.block_bytes, 4096u);
  EXPECT_EQ(rnd.segments, 10000000u);
  EXPECT_EQ(rnd.stonewall_seconds, 10u);
  EXPECT_TRUE(rnd.reorder_tasks);
  EXPECT_EQ(rnd.reorder_node_offset, 2u);
  EXPECT_EQ(plan.cache, "none");
  // IO500's argv order (phase_ior_hard.c, phase_ior_hard_write.c, phase_mdtest_hard*.c).
  EXPECT_EQ(Io500ExeLine(*c, s, "ior-hard-write"),
            "./ior --dataPacketType=timestamp -C -Q 1 -g -G=1851755789 -k -e -o /d/ior-hard/file -O "
            "stoneWallingStatusFile=/r/ior-hard.stonewall -t 47008 -b 47008 -s 9 -w -D 10 -a "
            "POSIX -O saveRankPerformanceDetailsCSV=/r/ior-hard-write.csv -O "
            "stoneWallingWearOut=1");
  EXPECT_EQ(Io500ExeLine(*c, s, "mdtest-hard-write"),
            "./mdtest --dataPacketType=timestamp -n 1000000 -t -w 3901 -e 3901 -P -G=-1557033713 -N 1 -F -d "
            "/d/mdtest-hard -x /r/mdtest-hard.stonewall -C -Y -W 10 "
            "--saveRankPerformanceDetails=/r/mdtest-hard-write.csv -a POSIX");
  EXPECT_EQ(Io500ExeLine(*c, s, "ior-easy-read"),
            "./ior --dataPacketType=timestamp -g -G 1851745101 -k -e -o /d/ior-easy/ior_file_easy -C -Q 1 -O "
            "stoneWallingStatusFile=/r/ior-easy.stonewall -t 2m -b 9920000m -F -r -R -a POSIX -O "
            "saveRankPerformanceDetailsCSV=/r/ior-easy-read.csv");
  EXPECT_THAT(Io500ExeLine(*c, s, "mdtest-easy-stat"), HasSubstr(" -P -G -1557044401 -N 1 "));
  // The real app's rnd4K line (phase_ior_rnd4k_easy_read.c), word for word.
  EXPECT_EQ(Io500ExeLine(*c, s, "ior-rnd4K-easy-read"),
            "./ior --dataPacketType=timestamp -g -G 1851745101 -k -e -o /d/ior-easy/ior_file_easy "
            "-F -r -D 10 -z -z -a POSIX -O saveRankPerformanceDetailsCSV=/r/ior-rnd4K-easy-read.csv "
            "-t=4096 -b=4096 -s=10000000 -O stoneWallingWearOut=1 -C -Q 2");
  EXPECT_EQ(Io500ExeLine(*c, s, "find"),
            "./pfind /d -newer /r/timestampfile -size 3901c -name *01* -C -q 10000");
}

TEST(Io500Plan, DropCachesBarrierOnEveryAgent) {
  auto c = Parse("[global]\ndatadir = /d\ndrop-caches = TRUE\n");
  ASSERT_OK(c);
  EXPECT_EQ(BuildIo500Plan(*c, Io500Setup{}, nullptr).cache, "all");
}

TEST(Io500Score, PublishedFigures) {
  // A published submission: BW 734.502697, MD 11336.265046 -> 2885.57.
  std::vector<Io500PhaseFigures> phases;
  for (const char* p : kIo500Phases) {
    Io500PhaseFigures f;
    f.name = p;
    f.ran = true;
    f.time_s = 400;
    if (Io500GroupOf(p) == Io500Group::kBw) f.score = 734.502697;
    if (Io500GroupOf(p) == Io500Group::kMd) f.score = 11336.265046;
    if (Io500GroupOf(p) == Io500Group::kNone) f.score = 99999;  // unscored: left out
    phases.push_back(f);
  }
  const Io500Score s = ComputeIo500Score(phases, 300);
  EXPECT_NEAR(s.bw, 734.502697, 1e-6);
  EXPECT_NEAR(s.md, 11336.265046, 1e-6);
  EXPECT_NEAR(s.total, 2885.57, 0.005);
  EXPECT_TRUE(s.valid) << s.reasons.size();
}

TEST(Io500Score, GeometricMeansLeaveOutScoresAtOrBelowZero) {
  EXPECT_NEAR(Io500GeometricMean({2, 8}), 4, 1e-12);
  EXPECT_NEAR(Io500GeometricMean({2, 8, 0, -1}), 4, 1e-12);
  EXPECT_EQ(Io500GeometricMean({0, 0}), 0);
  EXPECT_EQ(Io500GroupOf("find"), Io500Group::kMd);
  EXPECT_EQ(Io500GroupOf("ior-hard-read"), Io500Group::kBw);
  EXPECT_EQ(Io500GroupOf("ior-rnd4K-easy-read"), Io500Group::kNone);
  EXPECT_EQ(Io500GroupOf("timestamp"), Io500Group::kNone);
}

TEST(Io500Score, InvalidRules) {
  Io500PhaseFigures w{.name = "ior-easy-write", .ran = true, .score = 1.5, .time_s = 12};
  // Stonewall 10 s: the phase ran longer, but shorter than IO500's minimum.
  Io500PhaseVerdict v = JudgeIo500Phase(w, 10);
  EXPECT_FALSE(v.valid);
  EXPECT_THAT(v.reasons, ::testing::ElementsAre("Runtime is smaller than expected minimum runtime"));
  // A write phase shorter than the stonewall.
  w.time_s = 250;
  v = JudgeIo500Phase(w, 300);
  EXPECT_THAT(v.reasons, ::testing::Contains(HasSubstr("is below stonewall time")));
  w.time_s = 301;
  EXPECT_TRUE(JudgeIo500Phase(w, 300).valid);
  // run = FALSE.
  Io500PhaseFigures r{.name = "mdtest-easy-stat", .not_run_reason = "run = FALSE in the "
                                                                     "configuration"};
  v = JudgeIo500Phase(r, 300);
  EXPECT_THAT(v.reasons, ::testing::ElementsAre("Phase not run: run = FALSE in the configuration",
                                              "Resulting score shouldn't be 0.0"));
  // A failed phase.
  Io500PhaseFigures e{.name = "ior-hard-read", .ran = true, .error = "verify failed", .time_s = 1};
  EXPECT_THAT(JudgeIo500Phase(e, 300).reasons,
              ::testing::Contains("Errors (1) occured during phase in IOR. This invalidates your "
                                  "run. (verify failed)"));
  // The timestamp phase never is.
  EXPECT_TRUE(JudgeIo500Phase({.name = "timestamp", .ran = true}, 10).valid);
  // The run: a stonewall other than 300 s alone makes it invalid.
  Io500Score s = ComputeIo500Score({{.name = "find", .ran = true, .score = 1, .time_s = 1}}, 10);
  EXPECT_FALSE(s.valid);
  EXPECT_THAT(s.reasons, ::testing::Contains(HasSubstr("stonewall-time != 300 (10 s)")));
  // An invalid unscored phase leaves the run valid.
  s = ComputeIo500Score({{.name = "ior-rnd4K-easy-read", .ran = false}}, 300);
  EXPECT_TRUE(s.valid);
}

Io500RunOutput SampleRun() {
  Io500RunOutput run;
  run.procs = 4;
  run.version = "lockstep-1.2.3";
  run.config_hash = 0xABC;
  run.result_dir = "/r/2026.12.01-04.10.00";
  run.stonewall_seconds = 300;
  Io500PhaseOutput w;
  w.figures = {.name = "ior-easy-write", .ran = true, .score = 1.234567, .time_s = 300.123};
  w.exe = "ior -w";
  w.stonewall_figure = 1.5;
  Io500PhaseOutput md;
  md.figures = {.name = "mdtest-easy-write", .ran = true, .score = 12.345678, .time_s = 301};
  Io500PhaseOutput ts;
  ts.figures = {.name = "timestamp", .ran = true};
  Io500PhaseOutput rnd;
  rnd.figures = {.name = "ior-rnd4K-easy-read", .ran = true, .score = 0.123456, .time_s = 300.001};
  run.phases = {w, md, ts, rnd};
  return run;
}

TEST(Io500Output, SummaryInIo500sLayout) {
  const std::vector<std::string> lines = absl::StrSplit(FormatIo500Summary(SampleRun()), '\n');
  ASSERT_GE(lines.size(), 7u);
  // IO500's lines, nothing else (main.c's dupprintf).
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[0], "IO500 version lockstep-1.2.3 (standard)");
  EXPECT_EQ(lines[1], "[RESULT]       ior-easy-write        1.234567 GiB/s : time 300.123 seconds");
  EXPECT_EQ(lines[2], "[RESULT]    mdtest-easy-write       12.345678 kIOPS : time 301.000 seconds");
  EXPECT_EQ(lines[3], "[      ]            timestamp        0.000000 kIOPS : time 0.000 seconds");
  EXPECT_EQ(lines[4], "[      ]  ior-rnd4K-easy-read        0.123456 GiB/s : time 300.001 seconds");
  EXPECT_EQ(lines[5], "[SCORE ] Bandwidth 1.234567 GiB/s : IOPS 12.345678 kiops : TOTAL 3.904045");
  EXPECT_EQ(lines[6], "");

  Io500RunOutput invalid = SampleRun();
  invalid.stonewall_seconds = 10;
  invalid.phases[0].figures.time_s = 11;
  const std::string s = FormatIo500Summary(invalid);
  EXPECT_THAT(s, HasSubstr("ior-easy-write        1.234567 GiB/s : time 11.000 seconds [INVALID]\n"));
  EXPECT_THAT(s, HasSubstr(": TOTAL 3.904045 [INVALID]\n"));
}

TEST(Io500Output, ResultTxtIsIniLike) {
  Io500RunOutput run = SampleRun();
  run.stonewall_seconds = 10;
  run.phases[0].figures.time_s = 11;
  const std::string s = FormatIo500ResultTxt(run);
  EXPECT_THAT(s, ::testing::StartsWith("[run]\nprocs           = 4\nversion         = lockstep-1.2.3\n"
                                     "config-hash     = ABC\n"
                                     "result-dir      = /r/2026.12.01-04.10.00\n"
                                     "mode            = standard\n"));
  // Lockstep's provenance line is in lockstep.txt, not in result.txt (the
  // real io500-verify reads result.txt as the app writes it).
  EXPECT_THAT(s, Not(HasSubstr("run by Lockstep")));
  EXPECT_THAT(s, HasSubstr("\n; ERROR INVALID stonewall-time 10s != 300s\n\n\n[ior-easy-write]\n"));
  EXPECT_THAT(s, HasSubstr("\n[ior-easy-write]\nexe             = ior -w\n"
                           "throughput-stonewall = 1.50\n"
                           "; ERROR INVALID Runtime is smaller than expected minimum runtime\n"
                           "score           = 1.234567\nt_delta         = 11.0000\n"));
  EXPECT_THAT(s, HasSubstr("\n[timestamp]\nt_delta         = 0.0000\n"));
  EXPECT_THAT(s, HasSubstr("\n[SCORE]\nMD              = 12.345678\nBW              = 1.234567\n"
                           "SCORE           = 3.904045 [INVALID]\nhash            = "));
}

TEST(Io500DataDir, RefusesANonEmptyDirectoryAndCreatesTheSubdirectories) {
  const std::filesystem::path root = std::filesystem::path(::testing::TempDir()) / "io500_dd";
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "used");
  std::ofstream(root / "used/ior-easy") << "x";
  std::string note;
  absl::Status s = PrepareIo500DataDir((root / "used").string(), true, &note);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(s.message(), HasSubstr("is not empty (it holds ior-easy)"));
  EXPECT_THAT(s.message(), HasSubstr("timestamp-datadir = TRUE"));
  s = PrepareIo500DataDir((root / "used/ior-easy").string(), true, &note);
  EXPECT_THAT(s.message(), HasSubstr("is not a directory"));
  ASSERT_OK(PrepareIo500DataDir((root / "new/data").string(), true, &note));
  EXPECT_TRUE(std::filesystem::is_directory(root / "new/data/ior-hard"));
  EXPECT_TRUE(std::filesystem::is_directory(root / "new/data/mdtest-easy"));
  // Remote agents, a directory this host does not see: a note, nothing made.
  ASSERT_OK(PrepareIo500DataDir("/nonexistent-io500-parent/data", false, &note));
  EXPECT_THAT(note, HasSubstr("not visible on this host"));
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace lockstep
