// `lockstep io500` against the real io500 app: for each case of
// tests/conformance/io500/ (README.md there), the result directory Lockstep
// writes for the same ini has the structure the app's had (its files,
// result.txt's sections, keys and exe lines, the CSVs' first lines,
// config.ini), which the app's verifier accepted; and config.ini is the
// app's own form, so that `io500-verify config.ini result.txt` parses it.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "conformance/conformance.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep::conformance {
namespace {

using ::lockstep::testing::CommandResult;
using ::lockstep::testing::RunCommand;
using ::lockstep::testing::TempDir;

const std::string kCases = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/conformance/io500";
const std::string kLockstep = std::string(LOCKSTEP_BIN_DIR) + "/lockstep";

// Paths, IO500's timestamps and -G seeds as io500_structure.sh writes them.
std::string Normal(const std::string& text, const std::string& data,
                   const std::string& results) {
  static const std::regex stamp(R"([0-9]{4}\.[0-9]{2}\.[0-9]{2}-[0-9]{2}\.[0-9]{2}\.[0-9]{2})");
  const std::string s = absl::StrReplaceAll(text, {{results, "@RESULTS@"}, {data, "@DATA@"}});
  return std::regex_replace(s, stamp, "@TS@");
}

// tests/conformance/tools/io500_structure.sh, in C++.
std::string Structure(const std::string& dir, const std::string& data,
                      const std::string& results) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name != "lockstep.txt") files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  std::string out = "== files\n" + absl::StrJoin(files, "\n") + "\n== result.txt\n";
  static const std::regex seed(R"(-G[ =]-?[0-9]+)");
  for (absl::string_view line :
       absl::StrSplit(Normal(Read(dir + "/result.txt"), data, results), '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "[")) {
      absl::StrAppend(&out, line, "\n");
    } else if (absl::StartsWith(line, "; START ") || absl::StartsWith(line, "; END ")) {
      absl::StrAppend(&out, line.substr(0, line.find(' ', 2)), "\n");
    } else if (absl::StartsWith(line, ";")) {
      continue;
    } else if (absl::StartsWith(line, "exe ")) {
      std::string exe(absl::StripLeadingAsciiWhitespace(line.substr(line.find('=') + 1)));
      absl::StrAppend(&out, "exe = ", std::regex_replace(exe, seed, "-G#"), "\n");
    } else if (line.find('=') != absl::string_view::npos) {
      absl::StrAppend(&out, absl::StripAsciiWhitespace(line.substr(0, line.find('='))), "\n");
    }
  }
  out += "== csv\n";
  static const std::regex number("[0-9.]+");
  for (const std::string& f : files) {
    if (!absl::EndsWith(f, ".csv")) continue;
    const std::string text = Read(dir + "/" + f);
    absl::StrAppend(&out, f, ": ", std::regex_replace(text.substr(0, text.find('\n')), number, "#"),
                    "\n");
  }
  return out + "== config.ini\n" + Normal(Read(dir + "/config.ini"), data, results);
}

// The first lines where `want` and `got` differ, with their numbers.
std::string Differences(const std::string& want, const std::string& got) {
  std::vector<std::string> a = absl::StrSplit(want, '\n'), b = absl::StrSplit(got, '\n');
  std::string out;
  int shown = 0;
  for (size_t i = 0; i < std::max(a.size(), b.size()) && shown < 12; ++i) {
    const std::string x = i < a.size() ? a[i] : "(none)", y = i < b.size() ? b[i] : "(none)";
    if (x == y) continue;
    absl::StrAppend(&out, "\n  line ", i + 1, ": io500: ", x, "\n           lockstep: ", y);
    ++shown;
  }
  return out;
}

class Io500Conformance : public ::testing::TestWithParam<std::string> {};

TEST_P(Io500Conformance, ResultDirectoryHasTheAppsStructure) {
  const std::string cdir = kCases + "/" + GetParam();
  TempDir work;
  const std::string data = work.path() + "/data", results = work.path() + "/results";
  const std::string ini = work.path() + "/io500.ini";
  std::ofstream(ini) << absl::StrReplaceAll(Read(cdir + "/io500.ini"),
                                            {{"@DATA@", data}, {"@RESULTS@", results}});
  const std::string ranks(absl::StripAsciiWhitespace(Read(cdir + "/ranks")));
  CommandResult r = RunCommand({kLockstep, "io500", ini, "--local", "1", "--tasks-per-agent",
                                ranks, "--out", work.path() + "/out"},
                               std::chrono::minutes(4), /*merge_stderr=*/true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::vector<std::string> dirs;
  for (const auto& e : std::filesystem::directory_iterator(results)) {
    dirs.push_back(e.path().string());
  }
  ASSERT_EQ(dirs.size(), 1u) << r.out;
  const std::string want = Read(cdir + "/structure.txt");
  const std::string got = Structure(dirs[0], data, results);
  EXPECT_EQ(want, got) << "differences from the real io500's directory:"
                       << Differences(want, got);
  // Lockstep's own lines are in a file of their own, not in IO500's.
  EXPECT_TRUE(absl::StrContains(Read(dirs[0] + "/lockstep.txt"), "not an official IO500 list"));
}

INSTANTIATE_TEST_SUITE_P(Golden, Io500Conformance, ::testing::ValuesIn(CaseNames(kCases)),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return absl::StrReplaceAll(info.param, {{"-", "_"}});
                         });

}  // namespace
}  // namespace lockstep::conformance
