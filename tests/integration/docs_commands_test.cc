// The README's and docs/' command lines that can run on this machine do run,
// and exit 0: `lockstep check`, `lockstep help`, `lockstep history`, and
// `lockstep run` with --dry-run or --local on the repository's own plans.
// Each runs as written, except that the paths of the repository (deploy/...)
// are taken from the source tree and results go to a scratch directory
// (--out, --db). Lines with placeholders (PLAN, RUN_A, nodes.txt: anything
// that names a file that does not exist) are left to unit/docs_test.cc,
// which checks every line against the flag tables.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "docs_lines.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool Has(const std::vector<std::string>& words, const std::string& w) {
  return std::find(words.begin(), words.end(), w) != words.end();
}

// argv to run `words` here, or empty when the line cannot run here.
std::vector<std::string> Runnable(const std::vector<std::string>& words, const std::string& scratch) {
  if (words.size() < 2 || !absl::EndsWith(words[0], "lockstep")) return {};
  const std::string& command = words[1];
  const bool run = command == "run" && (Has(words, "--dry-run") || Has(words, "--local")) &&
                   absl::EndsWith(words.back(), ".toml");
  if (!run && command != "check" && command != "help" && command != "history") return {};
  std::vector<std::string> argv = {std::string(LOCKSTEP_BIN_DIR) + "/lockstep"};
  for (size_t i = 1; i < words.size(); ++i) {
    std::string w = words[i];
    if (w.find_first_of("[]|") != std::string::npos) return {};  // a synopsis
    if (std::all_of(w.begin(), w.end(), [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; })) {
      return {};  // a placeholder: COMMAND, N, RUN_A
    }
    if (absl::StartsWith(w, "deploy/")) w = std::string(LOCKSTEP_SOURCE_DIR) + "/" + w;
    if (absl::EndsWith(w, ".toml") && !Exists(w)) return {};   // a placeholder plan
    argv.push_back(w);
  }
  if (run) argv.insert(argv.end(), {"--out", scratch + "/results"});
  if (command == "history") argv.insert(argv.end(), {"--db", scratch + "/history.db"});
  return argv;
}

TEST(DocsCommands, TheLinesThatCanRunHereRunAndExitZero) {
  testing::TempDir scratch;
  int ran = 0;
  for (const testing::Doc& doc : testing::ReadDocs()) {
    for (const testing::CommandLine& line : testing::CommandLines(doc)) {
      std::vector<std::string> argv = Runnable(line.words, scratch.path());
      if (argv.empty()) continue;
      if (Has(argv, "history")) {
        // history reads the db the runs of this test recorded.
        argv.back() = scratch.path() + "/results/history.db";
      }
      ++ran;
      testing::CommandResult r = testing::RunCommand(argv, std::chrono::seconds(120));
      EXPECT_EQ(r.exit_code, 0) << line.where << ": " << absl::StrJoin(line.words, " ") << "\n"
                                << r.out.substr(0, 2000) << r.err.substr(0, 2000);
    }
  }
  EXPECT_GE(ran, 6) << "fewer runnable command lines in the README and docs/ than expected";
}

}  // namespace
}  // namespace lockstep
