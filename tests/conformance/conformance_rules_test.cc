// The comparison rules catch the differences they exist for: each test
// feeds a real IOR output (golden/) and a copy with one known mistake.
#include <string>

#include "absl/strings/str_replace.h"
#include "common/files.h"
#include "conformance/conformance.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lockstep::conformance {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::string Golden(const std::string& name) {
  auto s = ReadFileToString(std::string(LOCKSTEP_SOURCE_DIR) + "/tests/conformance/golden/" + name);
  EXPECT_TRUE(s.ok()) << name;
  return s.ok() ? *s : "";
}

std::string Replace(const std::string& text, const std::string& from, const std::string& to) {
  EXPECT_THAT(text, HasSubstr(from));
  return absl::StrReplaceAll(text, {{from, to}});
}

TEST(ConformanceRules, AnOutputMatchesItself) {
  const std::string g = Golden("ior-basic-fpp/stdout.txt");
  EXPECT_THAT(CompareOutputs(g, g, {}), IsEmpty());
}

TEST(ConformanceRules, OtherMeasurementsDatesAndHostsMatch) {
  const std::string g = Golden("ior-single-task/stdout.txt");
  std::string l = Replace(g, "2423.14    2431.57", "97.50      100.12 ");
  l = Replace(l, "Mon Nov 30 16:49:04 2026", "Tue Dec  1 09:00:00 2026");
  l = Replace(l, "Linux vm", "Linux node-17.cluster");
  EXPECT_THAT(CompareOutputs(g, l, {}), IsEmpty());
}

TEST(ConformanceRules, LockstepHashLinesAndANeutralTrailerAreAllowed) {
  const std::string g = Golden("ior-single-task/stdout.txt");
  std::string l = Replace(g, "Results: \n", "Results: \n# agents: 1 local\n");
  l += "\n# phase iter start-skew(us)\n# write 0 1.5\nResults directory kept in /tmp/x\n";
  EXPECT_THAT(CompareOutputs(g, l, {}), IsEmpty());
}

TEST(ConformanceRules, CatchesALatencyColumnOneCharacterShort) {
  // Lockstep printed Latency(s) in 11 characters where IOR uses 12.
  const std::string g = Golden("ior-single-task/stdout.txt");
  std::string l = Replace(g, "0.000411    16384      1024.00    0.000015",
                          "0.000411   16384      1024.00    0.000015 ");
  auto diffs = CompareOutputs(g, l, {});
  ASSERT_THAT(diffs, Not(IsEmpty()));
  EXPECT_THAT(diffs[0], HasSubstr("spans columns"));
}

TEST(ConformanceRules, CatchesRowsAParserWouldTakeForResults) {
  const std::string g = Golden("ior-single-task/stdout.txt");
  // The start-skew table after everything, its rows starting with the phase.
  std::string l = g + "\nphase        iter  start skew(us)\nwrite           0           8100.4\n";
  auto diffs = CompareOutputs(g, l, {});
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_THAT(diffs[0], HasSubstr("an IOR parser would take it for a result"));
  // A remove row inside the per-iteration table.
  l = Replace(g, "read      4763 ", "remove    -          -          -          -          -          -          -          0.000100   0   \nread      4763 ");
  EXPECT_THAT(CompareOutputs(g, l, {}), Not(IsEmpty()));
}

TEST(ConformanceRules, CatchesParametersThatDiffer) {
  const std::string g = Golden("ior-basic-fpp/stdout.txt");
  // reordoff 0 where IOR prints 1.
  std::string l = Replace(g, "   2   1     0        1         0    0      1 16777216",
                          "   2   1     0        0         0    0      1 16777216");
  auto diffs = CompareOutputs(g, l, {});
  ASSERT_THAT(diffs, Not(IsEmpty()));
  EXPECT_THAT(diffs[0], HasSubstr("\"0\" where IOR has \"1\""));
  // Twice the tasks.
  l = Replace(g, "tasks               : 4", "tasks               : 8");
  EXPECT_THAT(CompareOutputs(g, l, {}), Not(IsEmpty()));
}

TEST(ConformanceRules, KnownDifferencesAreAcceptedByName) {
  const std::string g = Golden("ior-single-task/stdout.txt");
  std::string l = Replace(g, "MPI Coordinated Test", "Lockstep Coordinated Test");
  EXPECT_THAT(CompareOutputs(g, l, {}), Not(IsEmpty()));
  KnownDifference k{MaskLine("IOR-4.1.0+dev: MPI Coordinated Test of Parallel I/O"),
                    MaskLine("IOR-4.1.0+dev: Lockstep Coordinated Test of Parallel I/O"), "x"};
  EXPECT_THAT(CompareOutputs(g, l, {k}), IsEmpty());
}

TEST(ConformanceRules, FilesCompareNamesAndSizes) {
  const std::string g = "f.00000000 1048576\nf.00000001 1048576\n";
  EXPECT_THAT(CompareFiles(g, g, false), IsEmpty());
  EXPECT_THAT(CompareFiles(g, "f.00000000 1048576\n", false), Not(IsEmpty()));
  EXPECT_THAT(CompareFiles(g, g + "f.00000002 1048576\n", false), Not(IsEmpty()));
  EXPECT_THAT(CompareFiles(g, "f.00000000 1048576\nf.00000001 4096\n", false), Not(IsEmpty()));
  EXPECT_THAT(CompareFiles(g, "f.00000000 4096\nf.00000001 4096\n", true), IsEmpty());
  EXPECT_THAT(CompareFiles(g, "f.00000000 8192\nf.00000001 4096\n", true), Not(IsEmpty()));
  // Files left where IOR removes them (-r without -k).
  EXPECT_THAT(CompareFiles("", "f.00000000 4194304\n", false), Not(IsEmpty()));
}

TEST(ConformanceRules, JsonKeysAndCsvColumns) {
  const std::string j = Golden("ior-json/stdout.txt");
  EXPECT_THAT(CompareJsonKeys(j, j), IsEmpty());
  auto diffs = CompareJsonKeys(j, Replace(j, "\"iops\"", "\"IOPS\""));
  ASSERT_THAT(diffs, Not(IsEmpty()));
  EXPECT_THAT(diffs[0], HasSubstr("tests[0].Results[0].iops"));
  EXPECT_THAT(CompareJsonKeys(j, "# lockstep\n" + j), Not(IsEmpty()));  // not JSON any more
  const std::string c = Golden("ior-csv/stdout.txt");
  EXPECT_THAT(CompareCsv(c, c), IsEmpty());
  EXPECT_THAT(CompareCsv(c, Replace(c, "IOPS", "IOPs")), Not(IsEmpty()));
}

}  // namespace
}  // namespace lockstep::conformance
