// End to end: `lockstep iozone` with IOzone's own throughput-mode command
// line on local agents, and its lines checked against IOzone's layout.
#include <filesystem>
#include <regex>

#include "absl/strings/str_split.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/process_util.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;

// `lockstep iozone ARGS` run in `dir` (IOzone writes to its working
// directory without -F).
CommandResult IozoneIn(const std::string& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/env", "-C", dir, BinDir() + "/lockstep", "iozone"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

// The value of IOzone's line starting with `label` (tabs and all), or -1.
double Figure(const std::string& out, const std::string& label) {
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (!absl::StartsWith(line, label)) continue;
    const size_t eq = line.find("= ");
    if (eq == absl::string_view::npos) return -1;
    return std::stod(std::string(line.substr(eq + 2)));
  }
  return -1;
}

TEST(IozoneCli, ThroughputModeOnLocalAgents) {
  TestCluster tmp;  // no agents: local ones
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  CommandResult r =
      IozoneIn(data, {"-i", "0", "-i", "1", "-r", "64k", "-s", "1m", "-t", "2", "--out",
                      tmp.results_dir()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // IOzone's header lines.
  EXPECT_THAT(r.out, HasSubstr("\tCommand line used: iozone -i 0 -i 1 -r 64k -s 1m -t 2\n"));
  EXPECT_THAT(r.out, HasSubstr("\tOutput is in kBytes/sec\n"));
  EXPECT_THAT(r.out, HasSubstr("\tThroughput test with 2 processes\n"));
  EXPECT_THAT(r.out, HasSubstr("\tEach process writes a 1024 kByte file in 64 kByte records\n"));
  // Every test's block, IOzone's text line for line, in IOzone's order.
  const std::regex block(
      "\n\tChildren see throughput for ( 2 initial writers \t| 2 rewriters \t| 2 readers \t\t|2 "
      "re-readers \t)= +[0-9]+\\.[0-9]{2} kB/sec\n"
      "\tParent sees throughput for [^\n]*= +[0-9]+\\.[0-9]{2} kB/sec\n"
      "\tMin throughput per process \t\t\t= +[0-9]+\\.[0-9]{2} kB/sec \n"
      "\tMax throughput per process \t\t\t= +[0-9]+\\.[0-9]{2} kB/sec\n"
      "\tAvg throughput per process \t\t\t= +[0-9]+\\.[0-9]{2} kB/sec\n"
      "\tMin xfer \t\t\t\t\t= +[0-9]+\\.[0-9]{2} kB\n");
  const auto found = std::distance(std::sregex_iterator(r.out.begin(), r.out.end(), block),
                                   std::sregex_iterator());
  EXPECT_EQ(found, 4) << r.out;
  EXPECT_LT(r.out.find("initial writers"), r.out.find("rewriters"));
  EXPECT_LT(r.out.find("rewriters"), r.out.find(" readers"));
  EXPECT_LT(r.out.find(" readers"), r.out.find("re-readers"));
  EXPECT_THAT(r.out, HasSubstr("\niozone test complete.\n"));
  EXPECT_THAT(r.out, HasSubstr("# lockstep iozone: stonewalling as IOzone"));
  // IOzone's arithmetic: Avg = Children see / children, Min <= Avg <= Max,
  // Min xfer at most a whole file (1024 kB).
  const double children = Figure(r.out, "\tChildren see throughput for  2 initial writers");
  const double avg = Figure(r.out, "\tAvg throughput per process");
  EXPECT_GT(children, 0);
  EXPECT_NEAR(avg, children / 2, 0.01);
  EXPECT_LE(Figure(r.out, "\tMin throughput per process"), avg + 0.01);
  EXPECT_GE(Figure(r.out, "\tMax throughput per process"), avg - 0.01);
  const double min_xfer = Figure(r.out, "\tMin xfer");
  EXPECT_GE(min_xfer, 0);
  EXPECT_LE(min_xfer, 1024);

  const std::string run_dir = RunDirFromOutput(r.out);
  ASSERT_FALSE(run_dir.empty()) << r.out;
  v1::RunRecord rec = ReadRunJson(run_dir);
  EXPECT_EQ(rec.iozone_command_line(), "iozone -i 0 -i 1 -r 64k -s 1m -t 2");
  EXPECT_EQ(rec.status(), "complete");
  ASSERT_EQ(rec.tests_size(), 1);
  ASSERT_EQ(rec.tests(0).phases_size(), 4);
  for (const v1::PhaseRecord& p : rec.tests(0).phases()) {
    uint64_t whole = 0;
    for (const v1::AgentPhaseRecord& a : p.agents()) {
      for (const v1::TaskResult& t : a.tasks()) {
        EXPECT_EQ(t.bytes(), 1u << 20) << p.phase();
        // 0 is possible: a child that had not moved a record when the first ended.
        EXPECT_LE(t.bytes_at_first_done(), t.bytes()) << p.phase();
        whole += t.bytes_at_first_done() == t.bytes() ? 1 : 0;
      }
    }
    EXPECT_GE(whole, 1u) << p.phase() << ": the first child to end moved its whole file";
  }
  // No -w: the files are gone, as IOzone unlinks them; summary.txt is the text.
  EXPECT_TRUE(ListFiles(data).empty());
  EXPECT_EQ(*ReadFileToString(run_dir + "/summary.txt"), r.out);
  // `lockstep report` prints it again, as IOzone's layout (not IOR's).
  ExpectReportReprintsRun(run_dir);
}

TEST(IozoneCli, TwoAgentsKeepFilesAndRefusals) {
  TestCluster tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  CommandResult r = IozoneIn(tmp.path(), {"-i", "0", "-r", "64k", "-s", "256k", "-t", "4", "-w",
                                          "-F", data + "/a", data + "/b", data + "/c", data + "/d",
                                          "--local", "2", "--out", tmp.results_dir()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("\tSetting no_unlink\n"));
  EXPECT_THAT(r.out, HasSubstr("\tChildren see throughput for  4 initial writers \t="));
  EXPECT_THAT(r.out, HasSubstr("stonewalling per agent"));
  // -w: IOzone's files stay, under -F's names as given, one per child.
  EXPECT_THAT(ListFiles(data), ::testing::UnorderedElementsAre("a", "b", "c", "d"));
  for (const char* name : {"a", "b", "c", "d"}) {
    EXPECT_EQ(std::filesystem::file_size(data + "/" + name), 256u << 10) << name;
  }

  CommandResult bad = IozoneIn(tmp.path(), {"-i", "0", "-t", "2", "-j", "4"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("lockstep iozone: option -j is not supported by lockstep iozone;"));
}

// -+k: -s is the aggregate, the plan's total_size; its rounding is said.
TEST(IozoneCli, AggregateSplitOverTheChildren) {
  TestCluster tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  CommandResult r = IozoneIn(data, {"-i", "0", "-r", "64k", "-s", "1m", "-t", "3", "-+k",
                                    "--out", tmp.results_dir()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("# phase 'initial-write' test 0: total_size 1 MiB over 3 tasks: "
                               "block 320 KiB each, 65536 bytes (64 KiB) not moved"));
  EXPECT_THAT(r.out, HasSubstr("\tEach process writes a 341 kByte file in 64 kByte records\n"));
  v1::RunRecord rec = ReadRunJson(RunDirFromOutput(r.out));
  ASSERT_EQ(rec.tests_size(), 1);
  for (const v1::AgentPhaseRecord& a : rec.tests(0).phases(0).agents()) {
    for (const v1::TaskResult& t : a.tasks()) EXPECT_EQ(t.bytes(), 320u << 10);
  }
}

// A system directory named by -F is refused as `lockstep run` refuses it,
// before anything is written there (issue 39 item 4: /etc/iozone.DUMMY.00000000
// was written as root); --root DIR is the fix it names.
TEST(IozoneCli, SystemDirectoryOfDashFIsRefused) {
  TestCluster tmp;
  const std::string file = "/etc/lockstep-iozone-test-x";
  CommandResult r = IozoneIn(tmp.path(), {"-i", "0", "-r", "64k", "-s", "1m", "-t", "1", "-w",
                                          "-F", file, "--local", "1", "--out", tmp.results_dir()});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("lockstep iozone: -F's directory \"/etc\" is a system directory"));
  EXPECT_THAT(r.err, HasSubstr("--root /etc"));
  EXPECT_FALSE(std::filesystem::exists(file));
  EXPECT_FALSE(std::filesystem::exists("/etc/iozone.DUMMY.00000000"));
  EXPECT_FALSE(std::filesystem::exists("/etc/lockstep-iozone-test-x.00000000"));
}

// A missing -F directory: IOzone does not create it and neither does the
// front end; the message is the one ior, mdtest and iozone share
// (SetUpTranslatedAgents), and nothing runs.
TEST(IozoneCli, AMissingDashFDirectoryIsNamed) {
  TestCluster tmp;
  const std::string missing = tmp.path() + "/not-here";
  CommandResult r = IozoneIn(tmp.path(), {"-i", "0", "-r", "64k", "-s", "1m", "-t", "1", "-w",
                                          "-F", missing + "/f", "--local", "1", "--out",
                                          tmp.results_dir()});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("lockstep iozone: directory " + missing +
                               " does not exist; create it first (IOzone does not create it "
                               "either)"));
  EXPECT_FALSE(std::filesystem::exists(missing));
}

}  // namespace
}  // namespace lockstep::testing
