// The real binaries' help: every subcommand's --help (and `lockstep help
// SUBCOMMAND`) exits 0 and lists each of its flags; the man pages the build
// made hold every flag; bad command lines exit 2 naming the fix.
#include <filesystem>

#include "agent/agent_flags.h"
#include "common/files.h"
#include "controller/cli/command_specs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/process_util.h"
#include "man_page_check.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

void ExpectListsEveryFlag(const CommandSpec& spec, const std::string& out) {
  for (const FlagSpec& f : spec.flags) {
    if (f.hidden) continue;
    EXPECT_THAT(out, HasSubstr("--" + std::string(f.name))) << spec.FullName() << " --" << f.name;
  }
}

TEST(CliHelp, EverySubcommandHelpListsItsFlags) {
  for (const CommandSpec* spec : LockstepCommands()) {
    const std::string name(spec->name);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{name, "--help"}, std::vector<std::string>{name, "-h"},
          std::vector<std::string>{"help", name}}) {
      CommandResult r = RunLockstep(args);
      EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
      EXPECT_THAT(r.out, HasSubstr("usage: lockstep " + name)) << name;
      ExpectListsEveryFlag(*spec, r.out);
      EXPECT_THAT(r.out, Not(HasSubstr("helpfull"))) << name;
    }
  }
  // ior, mdtest and iozone also list the tool's own options.
  EXPECT_THAT(RunLockstep({"ior", "-w", "--help"}).out, HasSubstr("-O summaryFormat="));
  EXPECT_THAT(RunLockstep({"mdtest", "-h"}).out, HasSubstr("-n N      items per task"));
  EXPECT_THAT(RunLockstep({"iozone", "-i", "0", "-h"}).out, HasSubstr("-+m FILE    IOzone's client file"));
}

TEST(CliHelp, ProgramHelp) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--help"}, std::vector<std::string>{"help"},
        std::vector<std::string>{"-h"}}) {
    CommandResult r = RunLockstep(args);
    EXPECT_EQ(r.exit_code, 0);
    for (const CommandSpec* spec : LockstepCommands()) {
      EXPECT_THAT(r.out, HasSubstr("lockstep " + std::string(spec->name))) << spec->name;
    }
  }
  CommandResult none = RunLockstep({});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("commands:"));
}

TEST(CliHelp, AgentHelpListsItsFlagsNotAbseils) {
  CommandResult r = RunCommand({BinDir() + "/lockstep-agent", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("usage: lockstep-agent --listen HOST:PORT"));
  ExpectListsEveryFlag(AgentCommandSpec(), r.out);
  EXPECT_THAT(r.out, HasSubstr("(default: 0.0.0.0:7070)"));
  EXPECT_THAT(r.out, Not(HasSubstr("--flagfile")));
  EXPECT_THAT(r.out, Not(HasSubstr("help-man")));
  CommandResult bad = RunCommand({BinDir() + "/lockstep-agent", "--lisen", "127.0.0.1:0"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--lisen: unknown flag; did you mean --listen?"));
}


TEST(CliHelp, TheBuildsManPagesAreTheBinariesOwn) {
  CommandResult lockstep = RunLockstep({"help", "--man"});
  EXPECT_EQ(lockstep.exit_code, 0);
  ExpectManPage(lockstep.out, LockstepProgram());
  CommandResult agent = RunCommand({BinDir() + "/lockstep-agent", "--help-man"});
  EXPECT_EQ(agent.exit_code, 0);
  ExpectManPage(agent.out, AgentProgram());
  // What `cmake --install` installs (the build's `man` target).
  auto built = ReadFileToString(BinDir() + "/man/lockstep.1");
  ASSERT_OK(built);
  EXPECT_EQ(*built, lockstep.out);
  auto built_agent = ReadFileToString(BinDir() + "/man/lockstep-agent.8");
  ASSERT_OK(built_agent);
  EXPECT_EQ(*built_agent, agent.out);
}

TEST(CliHelp, BadCommandLinesExitTwoNamingTheFix) {
  CommandResult r = RunLockstep({"run", "--lcoal", "2", "plan.toml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--lcoal: unknown flag; did you mean --local? (see lockstep run "
                               "--help)"));
  EXPECT_THAT(r.err, HasSubstr("usage: lockstep run "));
  r = RunLockstep({"run", "--local", "300", "plan.toml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--local 300: out of range; use 0 to 256"));
  r = RunLockstep({"gate", "RUN", "--max-drop"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--max-drop: needs a value (see lockstep gate --help)"));
  r = RunLockstep({"reprot", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown command \"reprot\"; did you mean report?"));
  r = RunLockstep({"help", "nope"});
  EXPECT_EQ(r.exit_code, 2);
  r = RunLockstep({"certs", "init"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--dir DIR is required"));
}

}  // namespace
}  // namespace lockstep::testing
