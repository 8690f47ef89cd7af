// Translation of unchanged IOR and mdtest command lines into plans.
#include "controller/ior/ior_cli.h"

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_cat.h"
#include "controller/mdtest/mdtest_cli.h"
#include "controller/plan/limits.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "controller/plan/kinds/mdtest_plan.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

FileReader NoFiles() {
  return [](const std::string& path) -> absl::StatusOr<std::string> {
    if (path == "hosts") return std::string("# agents\nn1:7070\n\nn2:7070  # second\n");
    return absl::NotFoundError(path + ": no such file");
  };
}

absl::StatusOr<CliCommand> Ior(const std::string& line) {
  return ParseIorCommandLine(absl::StrSplit(line, ' ', absl::SkipEmpty()), NoFiles());
}
absl::StatusOr<CliCommand> Md(const std::string& line) {
  return ParseMdtestCommandLine(absl::StrSplit(line, ' ', absl::SkipEmpty()), NoFiles());
}

// The error of a bad command line, or "OK".
std::string IorError(const std::string& line) { return testing::ErrorOrOk(Ior(line), line); }
std::string MdError(const std::string& line) { return testing::ErrorOrOk(Md(line), line); }

TEST(IorCli, TranslatesTheSeedLine) {
  auto c = Ior("-F -a POSIX -r -w -b 60g -t 1m -o /lustre/ki/pfs/out/ior.dat -i 2 -v");
  ASSERT_OK(c);
  const Plan& p = c->plan;
  EXPECT_EQ(p.repetitions, 2u);
  ASSERT_EQ(p.phases.size(), 2u);
  EXPECT_EQ(p.phases[0].kind, v1::WRITE);
  EXPECT_EQ(p.phases[1].kind, v1::READ);
  for (const PhasePlan& ph : p.phases) {
    EXPECT_EQ(ph.dir, "/lustre/ki/pfs/out");
    EXPECT_EQ(ph.file_name, "ior.dat");
    EXPECT_TRUE(ph.file_per_process);
    EXPECT_EQ(ph.block_bytes, 64424509440u);
    EXPECT_EQ(ph.transfer_bytes, 1u << 20);
    EXPECT_EQ(ph.segments, 1u);
    EXPECT_FALSE(ph.keep);
    EXPECT_EQ(ph.tasks_per_agent, std::vector<uint32_t>{1});
  }
  EXPECT_EQ(c->controller.local_agents, 1);  // IOR alone: one agent, one task
  EXPECT_EQ(c->summary_format, SummaryFormat::kText);
  // The plan it keeps is a valid lockstep plan with the same content.
  auto again = ParsePlan(p.text, "plan.toml");
  ASSERT_OK(again);
  EXPECT_EQ(again->phases.size(), 2u);
  EXPECT_EQ(again->phases[0].block_bytes, 64424509440u);
  EXPECT_EQ(again->repetitions, 2u);
}

TEST(IorCli, TranslatesTheFinerOptions) {
  auto c = Ior("-w -r -W -R -e -Y -k -D 30 -O stoneWallingWearOut=1 -d 2 -s 4 -b 4m -t 64k "
               "-O summaryFormat=JSON -O lustreStripeCount=0 --posix.odirect -N 8 "
               "--hostfile hosts -G 77 -o f");
  ASSERT_OK(c);
  ASSERT_EQ(c->plan.phases.size(), 2u);
  const PhasePlan& w = c->plan.phases[0];
  const PhasePlan& r = c->plan.phases[1];
  EXPECT_TRUE(w.fsync && w.fsync_per_transfer && w.verify_after_write);
  EXPECT_TRUE(w.keep && w.direct && w.stonewall_wear_out);
  EXPECT_EQ(w.stonewall_seconds, 30u);
  EXPECT_EQ(w.delay_seconds, 2u);
  EXPECT_EQ(w.segments, 4u);
  EXPECT_EQ(w.dir, ".");
  EXPECT_TRUE(r.verify);
  EXPECT_FALSE(r.fsync);
  EXPECT_EQ(c->plan.seed, 77u);
  EXPECT_EQ(c->summary_format, SummaryFormat::kJson);
  EXPECT_EQ(c->controller.agents, (std::vector<std::string>{"n1:7070", "n2:7070"}));
  EXPECT_EQ(w.tasks_per_agent, std::vector<uint32_t>{4});
  ASSERT_EQ(c->plan.agents.size(), 2u);
  ASSERT_OK(ParsePlan(c->plan.text, "plan.toml"));
  EXPECT_EQ(Ior("-O summaryFormat=CSV -C --agents a:1,b:2")->summary_format, SummaryFormat::kCsv);
  EXPECT_TRUE(Ior("-C --agents a:1,b:2")->plan.phases[1].reorder_tasks);
  EXPECT_TRUE(Ior("-g --local 1")->plan.phases[0].intra_barriers);
  EXPECT_EQ(Ior("-wr -b4m -t1m")->plan.phases[0].block_bytes, 4u << 20);  // clusters, glued values
  EXPECT_TRUE(Ior("-z")->plan.phases[0].random_offsets);
  EXPECT_TRUE(Ior("-v")->verbose);
  EXPECT_FALSE(Ior("-w")->verbose);
  EXPECT_EQ(Ior("-N 3")->controller.local_agents, 1);  // odd: one local agent
  EXPECT_EQ(Ior("-w")->plan.phases.size(), 1u);
  EXPECT_EQ(Ior("-A 7")->reference_number, 7);
  EXPECT_TRUE(Ior("--posix.odirect -t 4k -b 4k")->plan.phases[0].direct);
  EXPECT_EQ(Ior("-N 4 -C -Q 2 --local 4")->plan.phases[1].reorder_node_offset, 2u);
  EXPECT_TRUE(Ior("-r")->plan.phases[0].remove_files);  // IOR removes what it read without -k
  EXPECT_FALSE(Ior("-r -k")->plan.phases[0].remove_files);
  EXPECT_FALSE(Ior("-w -r")->plan.phases[1].remove_files);  // the write phase's files are removed
  EXPECT_EQ(Ior("-R -G 5")->plan.phases.size(), 1u);  // -R alone: a verified read
}

// IOR -K keeps the files of a data error; lockstep keeps the files of every
// failed verification (issue 39: a failed verified read deleted the
// evidence), so -K is accepted and says so.
TEST(IorCli, DashKIsAcceptedBecauseAFailedVerificationAlwaysKeepsItsFiles) {
  auto c = Ior("-K -w -r -R");
  ASSERT_OK(c);
  bool noted = false;
  for (const std::string& n : c->notes) noted |= absl::StrContains(n, "-K: lockstep keeps the files");
  EXPECT_TRUE(noted);
}

TEST(IorCli, RefusesWhatItCannotHonour) {
  EXPECT_THAT(IorError("-b 1x"), HasSubstr("-b 1: IOR refuses it (\"block size must be a multiple of access size"));
  EXPECT_THAT(IorError("-t 0"), HasSubstr("-t 0: IOR refuses it (\"test will not complete with zero transfer size"));
  EXPECT_THAT(IorError("-b 1m -t 3m"), HasSubstr("block size must be a multiple of transfer size"));
  EXPECT_THAT(IorError("-z -b 1m -t 1m"), HasSubstr("-z: IOR refuses it (\"IOR will randomize access within a block"));
  EXPECT_THAT(IorError("-g --local 2"), HasSubstr("-g: intra-phase barriers span one agent's tasks"));
  EXPECT_THAT(IorError("-c"), HasSubstr("-c: refused: collective I/O is MPI-IO's"));
  EXPECT_THAT(IorError("-E"), HasSubstr("-E: refused"));
  EXPECT_EQ(Ior("-Z -Q 2 -N 4")->plan.phases[1].reorder_node_offset, 2u);  // -Z's -Q, as IOR
  EXPECT_THAT(IorError("-y"), HasSubstr("-y: refused: dual mount points"));
  EXPECT_THAT(IorError("--mpiio.foo"), HasSubstr("--mpiio.foo: unknown flag"));
  EXPECT_THAT(IorError("stray"), HasSubstr("stray: IOR refuses it (\"Error invalid argument\")"));
  EXPECT_THAT(IorError("-a MPIIO"), HasSubstr("-a MPIIO: only the POSIX API"));
  EXPECT_THAT(IorError("-O foo=1"), HasSubstr("-O foo=1: IOR refuses it (\"Unrecognized parameter \\\"foo\\\"\")"));
  EXPECT_THAT(IorError("-O summaryFormat=XML"), HasSubstr("\"Unknown summaryFormat\""));
  EXPECT_THAT(IorError("-O lustreStripeCount=4"), HasSubstr("-O lustreStripeCount=4: only 0"));
  EXPECT_THAT(IorError("-O stoneWallingWearOut=1"), HasSubstr("only sensible when setting a stonewall deadline with -D"));
  EXPECT_THAT(IorError("-W -r"), HasSubstr("-W: checks what the write phase wrote"));
  EXPECT_THAT(IorError("-N 3 --agents a:1,b:2"), HasSubstr("-N 3: 3 tasks cannot be spread evenly over 2"));
  EXPECT_THAT(IorError("-N 4 --tasks-per-agent 3"), HasSubstr("disagrees with --tasks-per-agent 3"));
  EXPECT_THAT(IorError("-t 1000 --posix.odirect -b 1000"),
              HasSubstr("--posix.odirect: O_DIRECT needs -t a multiple of 4096"));
  EXPECT_THAT(IorError("-i"), HasSubstr("-i: IOR refuses it (\"Error, argument missing for option i\")"));
  EXPECT_EQ(Ior("-i two")->plan.repetitions, 1u);  // -1 to IOR: reset to 1, with IOR's warning
  EXPECT_THAT(IorError("-o dir/"), HasSubstr("needs a file path"));
  EXPECT_THAT(IorError("--agents a:1,a:1"), HasSubstr("listed twice"));
  EXPECT_THAT(IorError("--agents nope"), HasSubstr("not HOST:PORT"));
  EXPECT_THAT(IorError("--hostfile missing"), HasSubstr("--hostfile missing: "));
  EXPECT_THAT(IorError("--local 1 --agents a:1"), HasSubstr("--local: cannot be combined"));
}

TEST(MdtestCli, TranslatesSubPhasesInMdtestsOrder) {
  auto c = Md("-n 1000 -u -b 2 -z 2 -w 4k -e 4k -i 3 -d /scratch/md --tasks 4");
  ASSERT_OK(c);
  std::vector<std::string> names;
  for (const PhasePlan& p : c->plan.phases) {
    names.push_back(p.name);
    EXPECT_EQ(p.kind, v1::MDTEST);
    EXPECT_EQ(p.Own<MdtestPlan>().md_items, 994u);  // mdtest: 1000 / 7 dirs = 142 per dir
    EXPECT_TRUE(p.Own<MdtestPlan>().md_unique_dir);
    EXPECT_EQ(p.Own<MdtestPlan>().md_branching, 2u);
    EXPECT_EQ(p.Own<MdtestPlan>().md_depth, 2u);
    EXPECT_EQ(p.Own<MdtestPlan>().md_write_bytes, 4096u);
    EXPECT_EQ(p.dir, "/scratch/md");
    EXPECT_EQ(p.tasks_per_agent, std::vector<uint32_t>{4});  // one local agent, as one node
  }
  EXPECT_EQ(names, (std::vector<std::string>{"tree_create", "dir_create", "dir_stat",
                                             "dir_rename", "dir_remove", "file_create",
                                             "file_stat", "file_read", "file_remove",
                                             "tree_remove"}));
  EXPECT_EQ(c->plan.repetitions, 3u);
  ASSERT_OK(ParsePlan(c->plan.text, "plan.toml"));
  auto files = Md("-n 10 -F -C");
  ASSERT_OK(files);
  ASSERT_EQ(files->plan.phases.size(), 2u);
  EXPECT_EQ(files->plan.phases[1].Own<MdtestPlan>().md_op, v1::MD_FILE_CREATE);
  // -I: items per directory, over the whole tree of 1+3 dirs.
  EXPECT_EQ(Md("-I 5 -b 3 -z 1")->plan.phases[0].Own<MdtestPlan>().md_items, 20u);
}

TEST(MdtestCli, OptionsOfTheGoldenCasesAndCommonScripts) {
  MdtestCommandInfo info;
  auto md = [&](const std::string& line) {
    return ParseMdtestCommandLine(absl::StrSplit(line, ' ', absl::SkipEmpty()), NoFiles(), &info);
  };
  // mdtest-easy-like: files only, leaves only, rate and time, neighbour shift.
  auto easy = md("-n 200 -u -L -F -P -N 1 -d /x/md --local 1 --tasks 2");
  ASSERT_OK(easy);
  std::vector<std::string> names;
  for (const PhasePlan& p : easy->plan.phases) {
    names.push_back(p.name);
    EXPECT_TRUE(p.Own<MdtestPlan>().md_leaf_only);
    EXPECT_EQ(p.Own<MdtestPlan>().md_neighbor_shift, 1u);  // one node: not multiplied
    EXPECT_EQ(p.Own<MdtestPlan>().md_items, 200u);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"tree_create", "file_create", "file_stat",
                                             "file_read", "file_remove", "tree_remove"}));
  EXPECT_EQ(info.args, (std::vector<std::string>{"-n", "200", "-u", "-L", "-F", "-P", "-N", "1",
                                                 "-d", "/x/md"}));
  EXPECT_EQ(info.path, "/x/md");
  EXPECT_TRUE(info.print_rate && info.print_time && info.files && !info.dirs);
  EXPECT_TRUE(info.read_warning);
  EXPECT_EQ(info.items, 200u);
  ASSERT_OK(ParsePlan(easy->plan.text, "plan.toml"));
  // mdtest-hard-like: -t is accepted; -w/-e: no read warning.
  ASSERT_OK(md("-n 200 -t -w 3901 -e 3901 -P -N 1 -F -d /x/md --tasks 2"));
  EXPECT_FALSE(info.read_warning);
  EXPECT_EQ(info.shift, 1u);
  // Two agents of two tasks: the shift is by a node's tasks.
  ASSERT_OK(md("-n 4 -N 1 --agents a:1,b:2 --tasks 4"));
  EXPECT_EQ(info.shift, 2u);
  // mdtest-tree: 120 items over 7 directories: 17 each, 119 per task.
  auto tree = md("-n 120 -b 2 -z 2 -u -d /x/md --tasks 2");
  ASSERT_OK(tree);
  EXPECT_EQ(tree->plan.phases[1].Own<MdtestPlan>().md_items, 119u);
  EXPECT_EQ(info.items, 119u);
  // -L over 4 leaves: 10 / 4 = 2 each.
  EXPECT_EQ(md("-n 10 -L -b 2 -z 2")->plan.phases[0].Own<MdtestPlan>().md_items, 8u);
  EXPECT_EQ(md("-I 3 -L -b 2 -z 2")->plan.phases[0].Own<MdtestPlan>().md_items, 12u);
  // No -n: every step on no items, in ./out; no rename (fewer than 2 items).
  auto none = md("");
  ASSERT_OK(none);
  EXPECT_EQ(none->plan.phases.front().dir, "./out");
  EXPECT_EQ(none->plan.phases.front().Own<MdtestPlan>().md_items, 0u);
  for (const PhasePlan& p : none->plan.phases)
    EXPECT_NE(p.Own<MdtestPlan>().md_op, v1::MD_DIR_RENAME);
  EXPECT_EQ(none->plan.phases.size(), 9u);
  auto reparsed = ParsePlan(none->plan.text, "plan.toml");
  ASSERT_OK(reparsed);
  EXPECT_EQ(reparsed->phases[1].Own<MdtestPlan>().md_items, 0u);
  // -D: directory steps; -Z: time only; -C -U: create and rename.
  ASSERT_OK(md("-n 5 -D -Z"));
  EXPECT_TRUE(info.dirs && !info.files && info.print_time && !info.print_rate);
  auto cu = md("-n 5 -C -U");
  ASSERT_OK(cu);
  names.clear();
  for (const PhasePlan& p : cu->plan.phases) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tree_create", "dir_create", "dir_rename",
                                             "file_create"}));
  EXPECT_FALSE(info.read_warning);
}

TEST(MdtestCli, RefusesWhatItCannotHonour) {
  EXPECT_THAT(MdError("-n 5 -I 5"), HasSubstr("-I: with -n: mdtest's directory loops"));
  EXPECT_THAT(MdError("-n 5 -I 5 -u"), HasSubstr("-I: give the number of items"));
  EXPECT_THAT(MdError("-n 5 -S"), HasSubstr("-S: refused"));
  EXPECT_THAT(MdError("-n 5 -v"), HasSubstr("-v: refused: verbose output"));
  EXPECT_THAT(MdError("-n 5 -u -z 1 -N 1 --tasks 2"), HasSubstr("-N 1: with -u and a tree deeper"));
  EXPECT_EQ(MdError("-n 5 -u -z 1 -N 2 --tasks 2"), "OK");  // shift by all tasks: own trees
  EXPECT_EQ(MdError("-n 5 -z 1 -N 1 --tasks 2"), "OK");     // shared tree
  EXPECT_THAT(MdError("-n 5 -d a@b"), HasSubstr("several directories"));
  EXPECT_THAT(MdError("-n 5 -Q"), HasSubstr("-Q: not an option of mdtest 4.1"));
  EXPECT_THAT(MdError("-n x"), HasSubstr("-n x: mdtest reads it as -1"));
  EXPECT_EQ(MdError("-n 5 -w 1x"), "OK");  // string_to_bytes: 1 ('x' is no unit), as mdtest
  EXPECT_THAT(MdError("-n 5 -e 8 -w 4"), HasSubstr("-e 8: reads more than each file holds"));
  EXPECT_EQ(MdError("-n 5 -e 8 -w 4 -E"), "OK");  // mdtest checks it only with create and read
  EXPECT_THAT(MdError("-n 5 -b 100 -z 5"), HasSubstr("-b 100 -z 5: a tree of"));
  EXPECT_THAT(MdError("-n 5 --tasks 3 --agents a:1,b:2"), HasSubstr("--tasks 3: 3 tasks cannot"));
}

// IOR accepts the options of its other backends whatever -a says; on POSIX
// they do nothing. So does lockstep ior, saying so.
TEST(IorCli, OtherBackendsOptionsAreAcceptedAsNoOps) {
  auto c = Ior("-w -b 64k -t 16k --mpiio.showHints --dummy.delay-xfer=5 --mmap.madv_pattern");
  ASSERT_OK(c);
  int backend_notes = 0;
  for (const std::string& n : c->notes) {
    backend_notes += absl::StrContains(n, "an option of another IOR backend than POSIX; IOR "
                                          "accepts it and it has no effect");
  }
  EXPECT_EQ(backend_notes, 3);
  EXPECT_THAT(IorError("-w --mpiio.showHint"), HasSubstr("unknown flag"));
}

TEST(IorCli, MultiFileAndRandomTaskReordering) {
  auto c = Ior("-w -r -F -m -Z -X -3 -k -N 4 --local 2 -o d/f");
  ASSERT_OK(c);
  ASSERT_EQ(c->plan.phases.size(), 2u);
  EXPECT_TRUE(c->plan.phases[0].multi_file && c->plan.phases[1].multi_file);
  EXPECT_FALSE(c->plan.phases[0].reorder_random);  // the write is not reordered
  EXPECT_TRUE(c->plan.phases[1].reorder_random);
  EXPECT_EQ(c->plan.phases[1].reorder_random_seed, -3);
  auto again = ParsePlan(c->plan.text, "plan.toml");
  ASSERT_OK(again);
  EXPECT_TRUE(again->phases[1].reorder_random);
  EXPECT_EQ(again->phases[1].reorder_random_seed, -3);
  EXPECT_TRUE(again->phases[0].multi_file);
  EXPECT_THAT(IorError("-Z -Z -r"), HasSubstr("-Z: given twice"));
  EXPECT_THAT(IorError("-Z -C -r --local 2"), HasSubstr("Both Constant and Random task re-ordering"));
  EXPECT_THAT(IorError("-Z -z -r"), HasSubstr("random offset and random reorder tasks specified"));
  EXPECT_EQ(Ior("-Z -w")->plan.phases.size(), 1u);  // accepted, as IOR: the same files
  EXPECT_EQ(Ior("-X x -Z")->plan.phases[1].reorder_random_seed, -1);  // string_to_bytes("x")
}

// The translators check against the plan's bounds (controller/plan/limits.h):
// what they accept at a bound is a plan `lockstep run` accepts, one past it
// they refuse.
TEST(IorCli, BoundsAreThePlans) {
  auto at = Ior(absl::StrCat("-w -i ", kMaxRepetitions, " -D ", kMaxStonewallSeconds, " -d ",
                             kMaxDelaySeconds, " -Q ", kMaxReorderNodeOffset, " -C -r --local 2"));
  ASSERT_OK(at);
  ASSERT_OK(ParsePlan(at->plan.text, "plan.toml"));
  EXPECT_THAT(IorError(absl::StrCat("-i ", kMaxRepetitions + 1)),
              HasSubstr(absl::StrCat("out of range; use 1 to ", kMaxRepetitions)));
  EXPECT_THAT(IorError(absl::StrCat("-D ", kMaxStonewallSeconds + 1)), HasSubstr("out of range"));
  EXPECT_THAT(IorError(absl::StrCat("-N ", uint64_t{kMaxTotalTasks} + 1)), HasSubstr("out of range"));
  auto md = Md(absl::StrCat("-n 5 -b ", kMaxMdBranching, " -i ", kMaxRepetitions, " -w 64m -e 64m"));
  ASSERT_OK(md);
  ASSERT_OK(ParsePlan(md->plan.text, "plan.toml"));
  EXPECT_THAT(MdError(absl::StrCat("-n 5 -z ", kMaxMdDepth + 1)), HasSubstr("out of range"));
  EXPECT_THAT(MdError(absl::StrCat("-n 5 -w ", kMaxMdtestFileBytes + 1)),
              HasSubstr("out of range; use 0 to 67108864"));
}

}  // namespace
}  // namespace lockstep
