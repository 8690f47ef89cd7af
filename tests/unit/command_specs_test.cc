// The tables of `lockstep` and `lockstep-agent`: sound (unique names, help
// text, defaults their own kind accepts), and everything in them shown by
// --help and the man pages.
#include "controller/cli/command_specs.h"

#include <set>

#include "absl/strings/str_split.h"
#include "agent/agent_flags.h"
#include "controller/ior/ior_cli.h"
#include "controller/mdtest/mdtest_cli.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "man_page_check.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using ::lockstep::testing::ExpectManPage;

std::vector<const CommandSpec*> AllCommands() {
  std::vector<const CommandSpec*> out(LockstepCommands().begin(), LockstepCommands().end());
  out.push_back(&AgentCommandSpec());
  return out;
}

TEST(CommandSpecs, TablesAreSound) {
  for (const CommandSpec* c : AllCommands()) {
    SCOPED_TRACE(c->FullName());
    EXPECT_FALSE(c->synopsis.empty());
    EXPECT_FALSE(c->summary.empty());
    std::set<std::string> names;
    for (const FlagSpec& f : c->flags) {
      EXPECT_TRUE(names.insert(std::string(f.name)).second) << "--" << f.name << " twice";
      EXPECT_FALSE(f.help.empty()) << "--" << f.name;
      EXPECT_TRUE(f.kind == FlagKind::kBool || !f.value_name.empty()) << "--" << f.name;
      EXPECT_NE(f.name, "help");
    }
    // Every default parses as its own kind (a bad one aborts here).
    auto defaults = ParseFlags({}, *c);
    ASSERT_OK(defaults);
  }
  EXPECT_EQ(FindLockstepCommand("gate"), &GateCommandSpec());
  EXPECT_EQ(FindLockstepCommand("nope"), nullptr);
}

TEST(CommandSpecs, HelpListsEveryFlagWithItsDefault) {
  for (const CommandSpec* c : AllCommands()) {
    SCOPED_TRACE(c->FullName());
    const std::string help = FormatCommandHelp(*c);
    EXPECT_THAT(help, HasSubstr("usage: " + c->FullName() + " "));
    for (const FlagSpec& f : c->flags) {
      if (f.hidden) continue;
      EXPECT_THAT(help, HasSubstr("--" + std::string(f.name))) << f.name;
      if (!f.default_value.empty()) {
        EXPECT_THAT(help, HasSubstr("(default: " + std::string(f.default_value) + ")")) << f.name;
      }
    }
    // Usage lines are as long as a command line; the rest fits 80 columns.
    const size_t usage_end = help.find("\n\n");
    ASSERT_NE(usage_end, std::string::npos);
    const std::string body = help.substr(usage_end);
    for (absl::string_view line : absl::StrSplit(body, '\n')) {
      EXPECT_LE(line.size(), 80u) << line;
    }
  }
}

TEST(CommandSpecs, ProgramHelpNamesEveryCommand) {
  const std::string help = FormatProgramHelp(LockstepProgram());
  for (const CommandSpec* c : LockstepCommands()) {
    EXPECT_THAT(help, HasSubstr("  lockstep " + std::string(c->name) + " ")) << c->name;
  }
  EXPECT_THAT(help, HasSubstr("exit status:"));
}


TEST(CommandSpecs, ManPagesHaveEveryFlag) {
  const std::string lockstep = FormatManPage(LockstepProgram(), "0.1.0");
  EXPECT_THAT(lockstep, HasSubstr(".TH LOCKSTEP 1 "));
  EXPECT_THAT(lockstep, HasSubstr(".SS \"lockstep gate\"\n"));
  EXPECT_THAT(lockstep, HasSubstr(".SH EXIT STATUS\n"));
  ExpectManPage(lockstep, LockstepProgram());
  const std::string agent = FormatManPage(AgentProgram(), "0.1.0");
  EXPECT_THAT(agent, HasSubstr(".TH LOCKSTEP\\-AGENT 8 "));
  ExpectManPage(agent, AgentProgram());
  EXPECT_THAT(agent, ::testing::Not(HasSubstr("help\\-man")));
}

// The options the ior/mdtest help says are refused are refused by the
// translators, with the reason.
TEST(CommandSpecs, IorAndMdtestHelpMatchesTheTranslators) {
  auto refused_letters = [](const CommandSpec& c) {
    std::string notes(c.notes);
    std::string list = notes.substr(notes.find("Refused with the reason:"));
    std::vector<std::string> out;
    // The list ends where the reasons begin ("(-c is MPI-IO's; ...").
    for (absl::string_view w : absl::StrSplit(list, absl::ByAnyChar(" \n"), absl::SkipEmpty())) {
      if (w[0] == '(') break;
      if (w.size() >= 2 && w[0] == '-') out.emplace_back(w.substr(0, 2));
    }
    return out;
  };
  FileReader none = [](const std::string& p) -> absl::StatusOr<std::string> {
    return absl::NotFoundError(p);
  };
  auto ior = refused_letters(IorCommandSpec());
  EXPECT_GE(ior.size(), 10u);  // the list parsed (10 letters refused today)
  for (const std::string& o : ior) {
    auto c = ParseIorCommandLine({o, "1"}, none);  // a value for those that take one
    EXPECT_THAT(c.status().message(), HasSubstr(o + ": refused")) << o;
  }
  auto md = refused_letters(MdtestCommandSpec());
  EXPECT_GE(md.size(), 11u);
  for (const std::string& o : md) {
    auto c = ParseMdtestCommandLine({"-n", "1", o, "1"}, none);  // a value for those with one
    EXPECT_THAT(c.status().message(), HasSubstr(o + ": refused")) << o;
  }
  // Lockstep's own options go through the table, so their errors point to it.
  auto bad = ParseIorCommandLine({"--local", "300"}, none);
  EXPECT_EQ(bad.status().message(),
            "--local 300: out of range; use 1 to 256 (see lockstep ior --help)");
  bad = ParseMdtestCommandLine({"-n", "1", "--taks", "3"}, none);
  EXPECT_EQ(bad.status().message(),
            "--taks: unknown flag; did you mean --tasks? (see lockstep mdtest --help)");
  bad = ParseIorCommandLine({"--posix.odirec"}, none);
  EXPECT_EQ(bad.status().message(),
            "--posix.odirec: unknown flag; did you mean --posix.odirect? (see lockstep ior "
            "--help)");
  auto md_ok = ParseMdtestCommandLine({"-n", "8", "--tasks=4", "--local", "2"}, none);
  ASSERT_OK(md_ok);
  EXPECT_EQ(md_ok->plan.phases[0].tasks_per_agent, std::vector<uint32_t>{2});
}

}  // namespace
}  // namespace lockstep
