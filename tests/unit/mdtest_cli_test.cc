// `lockstep mdtest` reads its command line as mdtest 4.1 does (IOR's
// option.c): every option of mdtest's own usage is honoured or refused by
// name, numbers are string_to_bytes(), words group as option.c groups them.
#include "controller/mdtest/mdtest_cli.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "controller/plan/kinds/mdtest_plan.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

FileReader NoFiles() {
  return [](const std::string& path) -> absl::StatusOr<std::string> {
    return absl::NotFoundError(path + ": no such file");
  };
}

absl::StatusOr<CliCommand> Md(const std::string& line) {
  return ParseMdtestCommandLine(absl::StrSplit(line, ' ', absl::SkipEmpty()), NoFiles());
}

// The error of a command line, or "OK".
std::string MdError(const std::string& line) { return testing::ErrorOrOk(Md(line), line); }

// The option names of `/opt/ior/bin/mdtest --help` (IOR 4.1.0+dev, built
// with Debian's Open MPI, without the Lustre API), in its order.
constexpr const char* kMdtestUsage[] = {
    "-C", "-T", "-E", "-r", "-U", "-D", "-F", "-k", "-L", "-P", "--print-all-procs", "-R", "-S",
    "-c", "-t", "-u", "-v", "-X", "--verify-read", "--verify-write", "-y", "-Y", "-Z",
    "--warningAsErrors", "--showRankStatistics", "-a", "-b", "-d", "-B", "-e", "-f", "-G", "-i",
    "-I", "-l", "-n", "-N", "-p", "--random-seed", "-s", "-V", "-w", "-W", "-x", "-z",
    "--dataPacketType", "--run-cmd-before-phase", "--run-cmd-after-phase",
    "--saveRankPerformanceDetails", "--savePerOpDataCSV", "--posix.odirect", "--posix.rangelocks",
    "--dummy.delay-only-rank0", "--dummy.delay-create", "--dummy.delay-close",
    "--dummy.delay-sync", "--dummy.delay-xfer", "--mpiio.showHints", "--mpiio.preallocate",
    "--mpiio.useStridedDatatype", "--mpiio.useFileView", "--mpiio.hintsFileName",
    "--mmap.madv_dont_need", "--mmap.madv_pattern",
};

// Each option of the usage, as given on a line with -n 4 (and what it
// needs), and what Lockstep does: "OK" (honoured), or the start of its
// refusal, which names the option.
struct Row {
  const char* option;
  const char* line;
  const char* expect;
};
constexpr Row kRows[] = {
    {"-C", "-C", "OK"},
    {"-T", "-T", "OK"},
    {"-E", "-E", "OK"},
    {"-r", "-r", "OK"},
    {"-U", "-U", "OK"},
    {"-D", "-D", "OK"},
    {"-F", "-F", "OK"},
    {"-k", "-k", "-k: refused: mknod"},
    {"-L", "-L -z 1", "OK"},
    {"-P", "-P", "OK"},
    {"--print-all-procs", "--print-all-procs", "--print-all-procs: refused: every process"},
    {"-R", "-R", "-R: refused: random stat order"},
    {"-S", "-S", "-S: refused: shared file"},
    {"-c", "-c", "-c: refused: collective creates"},
    {"-t", "-t", "OK"},
    {"-u", "-u", "OK"},
    {"-v", "-v", "-v: refused: verbose output"},
    {"-X", "-X -e 8 -w 8", "OK"},
    {"--verify-read", "--verify-read -e 8 -w 8", "OK"},
    {"--verify-write", "--verify-write", "--verify-write: refused: reading back"},
    {"-y", "-y", "-y: refused: sync after each write"},
    {"-Y", "-Y", "OK"},
    {"-Z", "-Z", "OK"},
    {"--warningAsErrors", "--warningAsErrors", "--warningAsErrors: refused: turning"},
    {"--showRankStatistics", "--showRankStatistics", "--showRankStatistics: refused: per-rank"},
    {"-a", "-a POSIX", "OK"},
    {"-b", "-b 2 -z 1", "OK"},
    {"-d", "-d /x/md", "OK"},
    {"-B", "-B 1", "-B: refused: no barriers"},
    {"-e", "-e 4k -w 4k", "OK"},
    {"-f", "-f 2 -l 2 --tasks 2", "OK"},
    {"-G", "-G 5", "-G: refused: -G (data offset"},
    {"-i", "-i 2", "OK"},
    {"-I", "-I 4 -n 0", "OK"},
    {"-l", "-l 2 -f 1 --tasks 2", "-f 1 -l 2: refused: mdtest runs once per task count"},
    {"-n", "-n 4", "OK"},
    {"-N", "-N 1 --tasks 2", "OK"},
    {"-p", "-p 3", "-p: refused: pre-iteration delay"},
    {"--random-seed", "--random-seed 7", "OK"},
    {"-s", "-s 2", "OK"},
    {"-V", "-V 2", "-V: refused: verbose output"},
    {"-w", "-w 1m", "OK"},
    {"-W", "-W 2", "OK"},
    {"-x", "-x status", "-x: refused: stonewall status file"},
    {"-z", "-z 2", "OK"},
    {"--dataPacketType", "--dataPacketType=t", "--dataPacketType: refused: data packet"},
    {"--run-cmd-before-phase", "--run-cmd-before-phase=true", "--run-cmd-before-phase: refused"},
    {"--run-cmd-after-phase", "--run-cmd-after-phase=true", "--run-cmd-after-phase: refused"},
    {"--saveRankPerformanceDetails", "--saveRankPerformanceDetails=r.csv",
     "--saveRankPerformanceDetails: refused: mdtest's per-rank CSV"},
    {"--savePerOpDataCSV", "--savePerOpDataCSV=p", "--savePerOpDataCSV: refused"},
    {"--posix.odirect", "--posix.odirect", "--posix.odirect: refused: O_DIRECT"},
    {"--posix.rangelocks", "--posix.rangelocks", "--posix.rangelocks: refused: range locks"},
    {"--dummy.delay-only-rank0", "--dummy.delay-only-rank0", "OK"},
    {"--dummy.delay-create", "--dummy.delay-create=5", "OK"},
    {"--dummy.delay-close", "--dummy.delay-close 5", "OK"},
    {"--dummy.delay-sync", "--dummy.delay-sync=5", "OK"},
    {"--dummy.delay-xfer", "--dummy.delay-xfer=5", "OK"},
    {"--mpiio.showHints", "--mpiio.showHints", "OK"},
    {"--mpiio.preallocate", "--mpiio.preallocate", "OK"},
    {"--mpiio.useStridedDatatype", "--mpiio.useStridedDatatype", "OK"},
    {"--mpiio.useFileView", "--mpiio.useFileView", "OK"},
    {"--mpiio.hintsFileName", "--mpiio.hintsFileName=h", "OK"},
    {"--mmap.madv_dont_need", "--mmap.madv_dont_need", "OK"},
    {"--mmap.madv_pattern", "--mmap.madv_pattern", "OK"},
};

TEST(MdtestOptionTable, EveryOptionOfMdtestsUsageIsHonouredOrRefusedByName) {
  std::set<std::string> rows;
  for (const Row& r : kRows) rows.insert(r.option);
  for (const char* option : kMdtestUsage) EXPECT_TRUE(rows.count(option)) << option << ": no row";
  for (const Row& r : kRows) {
    const std::string error = MdError(std::string("-n 4 ") + r.line);
    if (std::string(r.expect) == "OK") {
      EXPECT_EQ(error, "OK") << r.line;
    } else {
      EXPECT_TRUE(absl::StartsWith(error, r.expect)) << r.line << " -> " << error;
    }
  }
  // A refused flag or number at mdtest's default is mdtest's default: accepted.
  for (const char* line : {"-n 4 -c=0", "-n 4 -B 0", "-n 4 -V 0", "-n 4 -p 0", "-n 4 -S=0"}) {
    EXPECT_EQ(MdError(line), "OK") << line;
  }
  // What mdtest does not list is no option of mdtest 4.1 (-g: only with the Lustre API).
  EXPECT_THAT(MdError("-n 4 -g"), HasSubstr("-g: not an option of mdtest 4.1; mdtest refuses it"));
  EXPECT_THAT(MdError("-n 4 -Q"), HasSubstr("-Q: not an option of mdtest 4.1"));
  EXPECT_THAT(MdError("-n 4 -h"), HasSubstr("mdtest prints its help and exits"));
  EXPECT_THAT(MdError("-n 4 -d"), HasSubstr("mdtest refuses it (\"Error, argument missing for "
                                            "option d\")"));
  EXPECT_THAT(MdError("-n 4 out"), HasSubstr("out: mdtest refuses it (\"Error invalid argument\")"));
}

// Numbers as option.c reads them: string_to_bytes() (the whole number, then
// one unit letter k m g t p of either case, 1024-based), into mdtest's ints
// ('d': -b -z -i -N -W) or unsigned counts ('l': -n -I -w -e).
TEST(MdtestOptionTable, NumbersAsStringToBytesReadsThem) {
  EXPECT_EQ(Md("-n 1k -F -C")->plan.phases[1].Own<MdtestPlan>().md_items, 1024u);
  EXPECT_EQ(Md("-n 1K -F -C")->plan.phases[1].Own<MdtestPlan>().md_items, 1024u);
  EXPECT_EQ(Md("-n4 -F -C")->plan.phases[1].Own<MdtestPlan>().md_items, 4u);       // glued
  // Glued, the 'k' of "1k" is also read as -k (mknod), as option.c reads it.
  EXPECT_THAT(MdError("-n1k -F -C"), HasSubstr("-n1k: mdtest reads the letters after the value "
                                               "as options too, so it reads -k here; -k: "
                                               "refused: mknod"));
  EXPECT_EQ(Md("-n=2k -F -C")->plan.phases[1].Own<MdtestPlan>().md_items, 2048u);  // after '='
  EXPECT_EQ(Md("-I 1k -b 2 -z 1 -F -C")->plan.phases[1].Own<MdtestPlan>().md_items,
            3072u);  // 3 directories
  auto w = Md("-n 2 -w 1m -e 1M -F");
  ASSERT_OK(w);
  EXPECT_EQ(w->plan.phases[1].Own<MdtestPlan>().md_write_bytes, 1u << 20);
  EXPECT_EQ(w->plan.phases[1].Own<MdtestPlan>().md_read_bytes, 1u << 20);
  EXPECT_EQ(Md("-n 2 -w 64m -F")->plan.phases[1].Own<MdtestPlan>().md_write_bytes, 64u << 20);
  EXPECT_THAT(MdError("-n 2 -w 1g -F"), HasSubstr("-w 1g: out of range; use 0 to 67108864"));
  // "1.5k" is 1 (the '.' is the one character after the number, no unit),
  // as real mdtest: -n 1.5k -F -C creates one file. Said in a note.
  auto odd = Md("-n 1.5k -F -C");
  ASSERT_OK(odd);
  EXPECT_EQ(odd->plan.phases[1].Own<MdtestPlan>().md_items, 1u);
  ASSERT_FALSE(odd->notes.empty());
  EXPECT_THAT(odd->notes[0], HasSubstr("-n 1.5k: read as 1, as mdtest's parser reads it"));
  EXPECT_EQ(Md("-n 4 -z 1.9 -b 2")->plan.phases[0].Own<MdtestPlan>().md_depth, 1u);
  EXPECT_THAT(MdError("-n 4 -z 1k"), HasSubstr("-z 1024: out of range; use 0 to 64"));
  EXPECT_THAT(MdError("-n 4 -b 1k -z 3"), HasSubstr("-b 1024 -z 3: a tree of"));
  EXPECT_EQ(Md("-n 4 -i 2k")->plan.repetitions, 2048u);
  // Garbage is -1 (sscanf matched nothing): an unsigned count of 2^64-1.
  EXPECT_THAT(MdError("-n abc"), HasSubstr("-n abc: mdtest reads it as -1 (string_to_bytes) into "
                                           "an unsigned count, 18446744073709551615"));
  EXPECT_THAT(MdError("-n -5"), HasSubstr("-n -5: mdtest reads it as -5"));
  EXPECT_THAT(MdError("-n 4 -w x"), HasSubstr("-w x: mdtest reads it as -1"));
  // mdtest's own checks, in its words.
  EXPECT_THAT(MdError("-n 4 -z -1"), HasSubstr("-z -1: mdtest refuses it (\"depth must be "
                                               "greater than or equal to zero\")"));
  EXPECT_THAT(MdError("-n 4 -z abc"), HasSubstr("-z -1: mdtest refuses it"));
  EXPECT_THAT(MdError("-n 4 -b 0 -z 1"), HasSubstr("-b 0: mdtest refuses it (\"branch factor"));
  EXPECT_EQ(MdError("-n 4 -b 0"), "OK");  // depth 0: the tree is its root, as mdtest runs it
  EXPECT_THAT(MdError("-n 4 -W 2 -b 2 -z 1"), HasSubstr("-W 2 -b 2: mdtest refuses it (\"Error, "
                                                        "stone wall timer"));
  EXPECT_THAT(MdError("-n 10 -I 3"), HasSubstr("-n -I: mdtest refuses it (\"items must be a "
                                               "multiple of items per directory\")"));
  EXPECT_THAT(MdError("-n 4 -X -e 8 -w 8 -C"), HasSubstr("-X: mdtest refuses it (\"Verify read "
                                                         "requires that the read test is used"));
  EXPECT_THAT(MdError("-n 4 -X"), HasSubstr("requires that read bytes is > 0"));
  EXPECT_THAT(MdError("-n 4 -i 3000000000"), HasSubstr("-i 3000000000: mdtest warns \"parsing "
                                                       "the number to integer, this produced an "
                                                       "overflow!\""));
  EXPECT_THAT(MdError("-n 4 -i 0"), HasSubstr("-i 0: out of range; use 1 to"));
  EXPECT_THAT(MdError("-n 4 -N -1"), HasSubstr("-N -1: out of range"));
  auto wall = Md("-n 4 -W -3 -F -C");  // mdtest: a stonewall only when > 0
  ASSERT_OK(wall);
  EXPECT_EQ(wall->plan.phases[1].Own<MdtestPlan>().md_stonewall_seconds, 0u);
  // -f/-l: one run of all tasks, as mdtest's loop from -f to -l makes it.
  EXPECT_EQ(MdError("-n 4 -f 3 --tasks 2"), "OK");  // without -l mdtest ignores -f
  EXPECT_THAT(MdError("-n 4 -f 3 -l 2 --tasks 2"), HasSubstr("first > last"));
  EXPECT_THAT(MdError("-n 4 -l 4 --tasks 2"), HasSubstr("last > number of processes"));
}

// Words as option.c groups them: each letter alone, '-' inside a word
// skipped ("-F-C" is -F -C, as real mdtest creates the files of -F -C),
// flags counted (-u -u is still unique), "=N" sets a flag to N.
TEST(MdtestOptionTable, WordsAsOptionCGroupsThem) {
  auto grouped = Md("-n 4 -F-C");
  ASSERT_OK(grouped);
  ASSERT_EQ(grouped->plan.phases.size(), 2u);
  EXPECT_EQ(grouped->plan.phases[1].Own<MdtestPlan>().md_op, v1::MD_FILE_CREATE);
  auto cluster = Md("-n 4 -FCu");
  ASSERT_OK(cluster);
  ASSERT_EQ(cluster->plan.phases.size(), 2u);
  EXPECT_TRUE(cluster->plan.phases[1].Own<MdtestPlan>().md_unique_dir);
  EXPECT_TRUE(Md("-n 4 -u -u -F -C")->plan.phases[1].Own<MdtestPlan>().md_unique_dir);
  EXPECT_FALSE(Md("-n 4 -u=0 -F -C")->plan.phases[1].Own<MdtestPlan>().md_unique_dir);
  // A value letter after the first takes the next word: "-Fn 8" is -F -n 8.
  EXPECT_EQ(Md("-Fn 8 -C")->plan.phases[1].Own<MdtestPlan>().md_items, 8u);
  // Letters after a glued value are read as options too (option.c): "-n8F".
  auto glued = Md("-n8F -C");
  ASSERT_OK(glued);
  EXPECT_EQ(glued->plan.phases[1].Own<MdtestPlan>().md_op, v1::MD_FILE_CREATE);
}

}  // namespace
}  // namespace lockstep
