// The conformance suite: every real IOR 4.1 / mdtest output in golden/ is
// run again through `lockstep ior` / `lockstep mdtest` with the same command
// line and task count on one local agent (as `mpirun -np N` on one node),
// and compared by the rules of conformance.h: lines, parameters, columns,
// files left behind, JSON keys and CSV columns.
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "conformance/conformance.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep::conformance {
namespace {

using lockstep::testing::CommandResult;
using lockstep::testing::RunCommand;
using lockstep::testing::TempDir;

const std::string kGoldenDir = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/conformance/golden";
const std::string kSequenceDir =
    std::string(LOCKSTEP_SOURCE_DIR) + "/tests/conformance/sequences";
const std::string kLockstep = std::string(LOCKSTEP_BIN_DIR) + "/lockstep";

// What Lockstep prints differently on purpose (docs/front-ends.md, "Known
// differences").
const std::vector<KnownDifference>& Known() {
  static const auto* known = new std::vector<KnownDifference>{
      {MaskLine("IOR-4.1.0+dev: MPI Coordinated Test of Parallel I/O"),
       MaskLine("IOR-4.1.0+dev: Lockstep Coordinated Test of Parallel I/O"),
       "the tasks are coordinated by Lockstep, not MPI; the version is the IOR output format"},
  };
  return *known;
}

struct Case {
  std::string name;
  std::string tool;  // "ior" or "mdtest"
  std::vector<std::string> args;
  int ranks = 1;
};

Case ParseCmd(const std::string& name, const std::string& cmd_file) {
  Case c;
  c.name = name;
  c.tool = name.rfind("mdtest", 0) == 0 ? "mdtest" : "ior";
  std::vector<std::string> lines = absl::StrSplit(Read(cmd_file), '\n');
  c.args = absl::StrSplit(lines.empty() ? "" : lines[0], ' ', absl::SkipEmpty());
  for (const std::string& l : lines) {
    if (l.rfind("ranks=", 0) == 0) c.ranks = std::stoi(l.substr(6));
  }
  return c;
}

// Data on tmpfs where there is one, as the golden runs were.
std::string DataParent() {
  std::error_code ec;
  return std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0
             ? "/dev/shm"
             : "/tmp";
}

// A fresh directory lockstep-NAME-XXXXXX below DataParent(); "" where it
// cannot be made.
std::string MakeDataDir(const std::string& name) {
  std::string tmpl = DataParent() + "/lockstep-" + name + "-XXXXXX";
  return ::mkdtemp(tmpl.data()) != nullptr ? tmpl : "";
}

// Runs `lockstep TOOL ARGS` with @DIR@ = dir on one local agent and
// `ranks` tasks (or Lockstep's defaults when ranks == 0); the combined
// output with dir written back as @DIR@.
CommandResult RunCase(const Case& c, const std::string& dir, const std::string& results,
                      int ranks) {
  std::vector<std::string> argv = {kLockstep, c.tool};
  for (const std::string& a : c.args) argv.push_back(absl::StrReplaceAll(a, {{"@DIR@", dir}}));
  if (ranks > 0) {
    // IOR's ranks come from mpirun, not from its command line: Lockstep's
    // own option, so that IOR's "Command line" is the golden's.
    argv.insert(argv.end(), {"--local", "1", c.tool == "ior" ? "--tasks-per-agent" : "--tasks",
                             std::to_string(ranks)});
  }
  argv.insert(argv.end(), {"--out", results});
  CommandResult r = RunCommand(argv, std::chrono::minutes(4), /*merge_stderr=*/true);
  r.out = absl::StrReplaceAll(r.out, {{dir, "@DIR@"}});
  return r;
}

std::string Report(const std::vector<std::string>& diffs) {
  constexpr size_t kShown = 12;
  std::vector<std::string> shown(diffs.begin(), diffs.begin() + std::min(diffs.size(), kShown));
  std::string more = diffs.size() > kShown
                         ? absl::StrFormat("\n  (%u more differences)", diffs.size() - kShown)
                         : "";
  return "\n  " + absl::StrJoin(shown, "\n  ") + more;
}

void ExpectConformant(const std::string& golden, const CommandResult& r, const std::string& what) {
  std::vector<std::string> diffs;
  if (absl::StrContains(what, "JSON")) {
    diffs = CompareJsonKeys(golden, r.out);
  } else if (absl::StrContains(what, "CSV")) {
    diffs = CompareCsv(golden, r.out);
  } else {
    diffs = CompareOutputs(golden, r.out, Known());
  }
  EXPECT_TRUE(diffs.empty()) << what << ":" << Report(diffs) << "\n--- Lockstep printed:\n"
                             << r.out;
}

// A case whose IOR run fails (fails.txt: "exit=N", IOR's exit status, and
// "stop=TEXT", the start of IOR's first line about the failure): Lockstep
// must fail too, print what IOR printed before that line and, after it,
// "says=TEXT" (Lockstep's words for the failure).
struct Failing {
  bool fails = false;
  int ior_exit = 0;
  std::string stop;
  std::string says;
};

Failing ReadFailing(const std::string& gdir) {
  Failing f;
  const std::string text = Read(gdir + "/fails.txt");
  if (text.empty()) return f;
  f.fails = true;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (absl::ConsumePrefix(&line, "exit=")) f.ior_exit = std::stoi(std::string(line));
    if (absl::ConsumePrefix(&line, "stop=")) f.stop = std::string(line);
    if (absl::ConsumePrefix(&line, "says=")) f.says = std::string(line);
  }
  return f;
}

// `text` up to the line that starts with `stop` (IOR's output), or to the
// line after "Results:"'s column head (Lockstep's, which words its failure
// its own way).
std::string Before(const std::string& text, const std::string& stop) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!stop.empty() && absl::StartsWith(line, stop)) break;
    absl::StrAppend(&out, line, "\n");
    if (stop.empty() && absl::StartsWith(line, "------    ---------")) break;
  }
  return out;
}

// The path of -O summaryFile=F in the case's arguments (@DIR@ = dir), or "".
std::string SummaryFileOf(const Case& c, const std::string& dir) {
  for (const std::string& a : c.args) {
    if (absl::StartsWith(a, "summaryFile=")) {
      return absl::StrReplaceAll(a.substr(std::strlen("summaryFile=")), {{"@DIR@", dir}});
    }
  }
  return "";
}

// A files.txt listing without the line of `name` (all of it when empty).
std::string DropFile(const std::string& listing, const std::string& name) {
  if (name.empty()) return listing;
  std::string out;
  for (absl::string_view line : absl::StrSplit(listing, '\n', absl::SkipEmpty())) {
    if (!absl::StartsWith(line, name + " ")) absl::StrAppend(&out, line, "\n");
  }
  return out;
}

class Conformance : public ::testing::TestWithParam<std::string> {};

TEST_P(Conformance, MatchesIorLineForLine) {
  const std::string name = GetParam();
  const std::string gdir = kGoldenDir + "/" + name;
  Case c = ParseCmd(name, gdir + "/cmd.txt");
  TempDir results;
  const std::string data = MakeDataDir("conf");
  ASSERT_FALSE(data.empty());
  // @DIR@: a fresh, empty directory, as for the golden runs (mdtest makes
  // its -d @DIR@/md itself).
  const std::string dir = data + "/d";
  std::filesystem::create_directories(dir);
  const std::string format = absl::StrContains(absl::StrJoin(c.args, " "), "summaryFormat=JSON")
                                 ? "JSON"
                             : absl::StrContains(absl::StrJoin(c.args, " "), "summaryFormat=CSV")
                                 ? "CSV"
                                 : "text";

  if (std::filesystem::exists(gdir + "/setup-cmd.txt")) {
    Case setup = ParseCmd(name, gdir + "/setup-cmd.txt");
    CommandResult r = RunCase(setup, dir, results.path(), setup.ranks);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    ExpectConformant(Read(gdir + "/setup-stdout.txt"), r, "setup run");
    std::vector<std::string> diffs =
        CompareFiles(Read(gdir + "/setup-files.txt"), ListFilesWithSizes(dir), false);
    EXPECT_TRUE(diffs.empty()) << "setup run, files:" << Report(diffs);
  }
  CommandResult r = RunCase(c, dir, results.path(), c.ranks);
  const Failing failing = ReadFailing(gdir);
  if (failing.fails) {
    EXPECT_NE(failing.ior_exit, 0) << gdir << "/fails.txt";
    EXPECT_NE(r.exit_code, 0) << "IOR exits " << failing.ior_exit << "\n" << r.out;
    EXPECT_TRUE(absl::StrContains(r.out, failing.says)) << failing.says << "\n" << r.out;
    CommandResult head = r;
    head.out = Before(r.out, "");
    ExpectConformant(Before(Read(gdir + "/stdout.txt"), failing.stop), head,
                     format + " output before IOR's failure");
  } else if (std::filesystem::exists(gdir + "/summary-file.txt")) {
    // -O summaryFile=F: IOR's stdout is its one line, the report is in F.
    EXPECT_EQ(r.exit_code, 0) << r.out;
    ExpectConformant(Read(gdir + "/stdout.txt"), r, "stdout (text)");
    CommandResult file = r;
    file.out = absl::StrReplaceAll(Read(SummaryFileOf(c, dir)), {{dir, "@DIR@"}});
    ExpectConformant(Read(gdir + "/summary-file.txt"), file, "summaryFile " + format);
  } else {
    EXPECT_EQ(r.exit_code, 0) << r.out;
    ExpectConformant(Read(gdir + "/stdout.txt"), r, format + " output");
  }
  // The summary file's size is a measurement (its figures): names only.
  const std::string summary_name = std::filesystem::path(SummaryFileOf(c, dir)).filename();
  std::vector<std::string> diffs =
      CompareFiles(DropFile(Read(gdir + "/files.txt"), summary_name),
                   DropFile(ListFilesWithSizes(dir), summary_name),
                   /*sizes_vary=*/name == "ior-stonewall");
  if (!summary_name.empty()) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + summary_name)) << summary_name;
  }
  EXPECT_TRUE(diffs.empty()) << "files left behind:" << Report(diffs);
  if (c.tool == "mdtest") {
    // mdtest removes the -d directory it made: nothing at all is left.
    EXPECT_TRUE(std::filesystem::is_empty(dir)) << "directories left in @DIR@";
  }

  // IOR run without mpirun: Lockstep's defaults (no -N, no --local) must
  // give the same run, one task.
  if (std::filesystem::exists(gdir + "/stdout-nompi.txt")) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    CommandResult d = RunCase(c, dir, results.path(), /*ranks=*/0);
    EXPECT_EQ(d.exit_code, 0) << d.out;
    ExpectConformant(Read(gdir + "/stdout-nompi.txt"), d, "defaults (no -N, no --local)");
  }
  std::filesystem::remove_all(data);
}

INSTANTIATE_TEST_SUITE_P(Golden, Conformance, ::testing::ValuesIn(CaseNames(kGoldenDir)),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return absl::StrReplaceAll(info.param, {{"-", "_"}});
                         });


// A script of IOR command lines run one after another in one directory, as
// IOR's own testing/basic-tests.sh runs them (sequences/<name>/steps.txt:
// "RANKS<tab>ARGS" a line): after every step IOR's output and the files IOR
// left there (stdout-N.txt, files-N.txt), kept, removed and reused alike.
class Sequence : public ::testing::TestWithParam<std::string> {};

TEST_P(Sequence, LeavesIorsFilesAfterEveryStep) {
  const std::string sdir = kSequenceDir + "/" + GetParam();
  TempDir results;
  const std::string data = MakeDataDir("seq");
  ASSERT_FALSE(data.empty());
  const std::string dir = data + "/d";
  std::filesystem::create_directories(dir);
  int n = 0;
  for (absl::string_view line : absl::StrSplit(Read(sdir + "/steps.txt"), '\n', absl::SkipEmpty())) {
    ++n;
    std::vector<std::string> fields = absl::StrSplit(line, '\t');
    ASSERT_EQ(fields.size(), 2u) << line;
    Case c;
    c.name = GetParam();
    c.tool = "ior";
    c.args = absl::StrSplit(fields[1], ' ', absl::SkipEmpty());
    c.ranks = std::stoi(fields[0]);
    const std::string what = absl::StrFormat("step %d (ior %s, %d ranks)", n, fields[1], c.ranks);
    CommandResult r = RunCase(c, dir, results.path(), c.ranks);
    ASSERT_EQ(r.exit_code, 0) << what << "\n" << r.out;
    ExpectConformant(Read(absl::StrFormat("%s/stdout-%d.txt", sdir, n)), r, what);
    std::vector<std::string> diffs = CompareFiles(
        Read(absl::StrFormat("%s/files-%d.txt", sdir, n)), ListFilesWithSizes(dir), false);
    EXPECT_TRUE(diffs.empty()) << what << ", files after it:" << Report(diffs);
  }
  EXPECT_GT(n, 0) << sdir << "/steps.txt has no steps";
  std::filesystem::remove_all(data);
}

INSTANTIATE_TEST_SUITE_P(Golden, Sequence, ::testing::ValuesIn(CaseNames(kSequenceDir)),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return absl::StrReplaceAll(info.param, {{"-", "_"}});
                         });

}  // namespace
}  // namespace lockstep::conformance
