// The README and docs/ say what the programs accept:
//   - every `lockstep ...` and `lockstep-agent ...` command line they show
//     (fenced blocks and inline code) names a command that exists and flags
//     that command's table declares, with values its parser takes;
//   - docs/command-help.md is the programs' --help, rendered from the same
//     flag tables (common/flags.h), so that the reference cannot drift.
#include <dirent.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/agent_flags.h"
#include "common/files.h"
#include "common/flags.h"
#include "controller/cli/command_specs.h"
#include "controller/cli/exit_codes.h"
#include "controller/plan/plan.h"
#include "gtest/gtest.h"
#include "docs_lines.h"
#include "test_util.h"

namespace lockstep {
namespace {

using testing::CommandLine;
using testing::Doc;
using testing::CommandLines;
using testing::ReadDocs;

// Synopsis punctuation off a word: "[--dirs]" is "--dirs", "(--tls_ca" is
// "--tls_ca"; "|" and "..." are no words.
std::vector<std::string> Cleaned(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (std::string w : words) {
    while (!w.empty() && (w.front() == '[' || w.front() == '(')) w.erase(0, 1);
    while (!w.empty() && (w.back() == ']' || w.back() == ')')) w.pop_back();
    if (w.empty() || w == "|" || w == "..." || absl::StrContains(w, "...")) continue;
    out.push_back(w);
  }
  return out;
}

// The front ends that take another tool's options besides their own flags.
bool TakesToolOptions(absl::string_view command) {
  return command == "ior" || command == "mdtest" || command == "iozone";
}

std::string CheckLine(const CommandLine& line) {
  std::vector<std::string> w = Cleaned(line.words);
  if (w.empty()) return "";
  const bool agent = absl::EndsWith(w[0], "lockstep-agent");
  w.erase(w.begin());
  const CommandSpec* command = nullptr;
  if (agent) {
    command = &AgentCommandSpec();
  } else {
    if (w.empty() || w[0] == "--help" || w[0] == "-h") return "";
    if (absl::StartsWith(w[0], "-") || absl::StartsWith(w[0], "<") || w[0] == "SUBCOMMAND" ||
        w[0] == "COMMAND") {
      return "";  // "lockstep --version", "lockstep COMMAND --help"
    }
    command = FindLockstepCommand(w[0]);
    if (command == nullptr) return absl::StrCat(line.where, ": no command `lockstep ", w[0], "`");
    w.erase(w.begin());
  }
  if (TakesToolOptions(command->name)) {
    for (const std::string& word : w) {
      if (!absl::StartsWith(word, "--") || word == "--" || word == "--help" ||
          absl::StrContains(word, ".")) {
        continue;
      }
      std::string name = word.substr(2, word.find('=') - 2);
      if (command->Find(name) == nullptr) {
        return absl::StrCat(line.where, ": ", command->FullName(), " has no flag --", name);
      }
    }
    return "";
  }
  // A placeholder value ("--expect N", "--max_bytes SIZE") stands for one
  // of its kind.
  for (size_t i = 0; i + 1 < w.size(); ++i) {
    if (!absl::StartsWith(w[i], "--") || absl::StrContains(w[i], "=")) continue;
    const FlagSpec* flag = command->Find(w[i].substr(2));
    const std::string& v = w[i + 1];
    const bool placeholder = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
      return (c >= 'A' && c <= 'Z') || c == '_';
    });
    if (flag == nullptr || !placeholder) continue;
    if (flag->kind == FlagKind::kInt || flag->kind == FlagKind::kUint) w[i + 1] = "1";
    if (flag->kind == FlagKind::kSize) w[i + 1] = "1m";
  }
  // Prose names a flag without its value ("`lockstep run --hostfile`"): the
  // flag must exist.
  if (!w.empty() && absl::StartsWith(w.back(), "--") && !absl::StrContains(w.back(), "=") &&
      w.back() != "--help") {
    const FlagSpec* last = command->Find(w.back().substr(2));
    if (last == nullptr) {
      return absl::StrCat(line.where, ": ", command->FullName(), " has no flag ", w.back());
    }
    if (last->kind != FlagKind::kBool) w.pop_back();
  }
  absl::StatusOr<ParsedFlags> parsed = ParseFlags(w, *command);
  if (!parsed.ok()) return absl::StrCat(line.where, ": ", parsed.status().message());
  return "";
}

TEST(Docs, EveryCommandLineNamesRealCommandsAndFlags) {
  size_t checked = 0;
  for (const Doc& doc : ReadDocs()) {
    for (const CommandLine& line : CommandLines(doc)) {
      ++checked;
      const std::string error = CheckLine(line);
      EXPECT_EQ(error, "") << absl::StrJoin(line.words, " ");
    }
  }
  EXPECT_GE(checked, 40u) << "the README and docs/ show fewer command lines than expected";
}

// The checker itself: the mistakes it is for.
TEST(Docs, TheCheckerCatchesAWrongCommandOrFlag) {
  auto check = [](const std::string& text) {
    std::vector<CommandLine> lines = CommandLines({"x.md", text});
    EXPECT_EQ(lines.size(), 1u) << text;
    return lines.empty() ? std::string("none") : CheckLine(lines[0]);
  };
  EXPECT_EQ(check("```\nlockstep run --local 2 --smoke plan.toml  # a comment --nope\n```\n"), "");
  EXPECT_EQ(check("```\nlockstep run --lcoal 2 plan.toml\n```\n").substr(0, 15), "x.md:2: --lcoal");
  EXPECT_EQ(check("Use `lockstep frobnicate --x`.\n"), "x.md:1: no command `lockstep frobnicate`");
  EXPECT_EQ(check("```\nlockstep ior -w -r --lokal 2\n```\n"), "x.md:2: lockstep ior has no flag --lokal");
  EXPECT_EQ(check("Run `lockstep run --hostfile`.\n"), "");
  EXPECT_EQ(check("Run `lockstep run --hostfiles`.\n"), "x.md:1: lockstep run has no flag --hostfiles");
  EXPECT_EQ(check("```\nlockstep-agent --listen 0.0.0.0:7070 \\\n  --root /tmp --nope\n```\n"),
            "x.md:2: lockstep-agent has no flag --nope");
  EXPECT_EQ(check("```toml\nlockstep = 1\n```\n```\nlockstep check [--dirs] PLAN\n```\n"), "");
  // An inline span that goes on on the next line is one command line.
  std::vector<CommandLine> wrapped = CommandLines({"x.md", "run `lockstep check\n--dirs p.toml` first\n"});
  ASSERT_EQ(wrapped.size(), 1u);
  EXPECT_EQ(absl::StrJoin(wrapped[0].words, " "), "lockstep check --dirs p.toml");
}

// The keys a plan's table accepts, as its "unknown key" error lists them.
std::vector<std::string> ValidKeys(const std::string& plan_text) {
  absl::StatusOr<Plan> plan = ParsePlan(plan_text, "probe.toml");
  EXPECT_FALSE(plan.ok()) << plan_text;
  if (plan.ok()) return {};
  const std::string message(plan.status().message());
  const size_t at = message.find("valid keys: ");
  EXPECT_NE(at, std::string::npos) << message;
  if (at == std::string::npos) return {};
  return absl::StrSplit(message.substr(at + 12), ", ");
}

// docs/plans.md names every key the parser takes, of [run], [[agent]] and
// [[phase]] (each as `key`). A phase that names no kind is told every
// phase key, of all kinds.
TEST(Docs, PlansNameEveryKeyThePlanParserTakes) {
  absl::StatusOr<std::string> doc =
      ReadFileToString(std::string(LOCKSTEP_SOURCE_DIR) + "/docs/plans.md");
  ASSERT_TRUE(doc.ok()) << doc.status();
  const std::string phase = "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"d\"\n";
  size_t keys = 0;
  for (const std::string& text :
       {std::string("[run]\nno_such_key = 1\n") + phase,
        std::string("[[agent]]\naddress = \"h:1\"\nno_such_key = 1\n") + phase,
        std::string("[[phase]]\nname = \"w\"\nno_such_key = 1\n")}) {
    for (const std::string& key : ValidKeys(text)) {
      ++keys;
      EXPECT_NE(doc->find("`" + key + "`"), std::string::npos)
          << "docs/plans.md does not name the plan key `" << key << "`";
    }
  }
  EXPECT_GE(keys, 60u);
}

// docs/exit-codes.md has a row for each of lockstep's exit codes, and no other.
TEST(Docs, ExitCodesTableHasEveryCode) {
  absl::StatusOr<std::string> doc =
      ReadFileToString(std::string(LOCKSTEP_SOURCE_DIR) + "/docs/exit-codes.md");
  ASSERT_TRUE(doc.ok()) << doc.status();
  std::set<int> documented;
  for (absl::string_view line : absl::StrSplit(*doc, '\n')) {
    int code = 0;
    if (std::sscanf(std::string(line).c_str(), "| %d |", &code) == 1) documented.insert(code);
  }
  const std::set<int> codes = {kExitOk,       kExitFailure, kExitUsage, kExitConnect,
                               kExitAgentLost, kExitIoError, kExitVerify, kExitSkew,
                               kExitVersion,  kExitAuBelowThreshold, kExitOutOfMemory,
                               kExitInterrupted};
  EXPECT_EQ(documented, codes);
}

// docs/command-help.md: every command's --help, from the flag tables.
std::string CommandHelpMarkdown() {
  std::string out =
      "# Command reference\n\n"
      "Every command's `--help`, rendered from the flag tables the programs parse with\n"
      "(`common/flags.h`); the unit test `Docs.CommandHelpIsTheProgramsHelp` checks that this\n"
      "file is current, and writes the current text when it is not. The same text is in\n"
      "the man pages `lockstep(1)` and `lockstep-agent(8)`. What the commands are for:\n"
      "[commands.md](commands.md).\n\n";
  for (const CommandSpec* c : LockstepCommands()) {
    absl::StrAppend(&out, "## ", c->FullName(), "\n\n```text\n", FormatCommandHelp(*c), "```\n\n");
  }
  absl::StrAppend(&out, "## lockstep-agent\n\n```text\n", FormatCommandHelp(AgentCommandSpec()),
                  "```\n");
  return out;
}

TEST(Docs, CommandHelpIsTheProgramsHelp) {
  const std::string want = CommandHelpMarkdown();
  const std::string path = std::string(LOCKSTEP_SOURCE_DIR) + "/docs/command-help.md";
  absl::StatusOr<std::string> have = ReadFileToString(path);
  if (have.ok() && *have == want) return;
  // Left in place for the fix the message names.
  std::string dir = "/tmp/lockstep-docs-XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::string fresh = dir + "/command-help.md";
  ASSERT_TRUE(WriteFileAtomically(fresh, want).ok());
  ADD_FAILURE() << path << " is not the programs' current --help (a flag or command changed): "
                << "cp " << fresh << " " << path;
}

}  // namespace
}  // namespace lockstep
