// FormatBashCompletion (common/flags.h): the script is valid bash and, run by
// bash as the completion machinery would, offers commands, flags, a flag's
// values (directories, files, listed words), the literal first words of a
// synopsis and files; names that are not plain words never reach the script.
#include <array>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_split.h"
#include "common/flags.h"
#include "controller/cli/command_specs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

constexpr std::array<FlagSpec, 7> kRunFlags = {{
    {.name = "insecure", .kind = FlagKind::kBool, .help = "plaintext"},
    {.name = "local", .kind = FlagKind::kUint, .value_name = "N", .help = "agents"},
    {.name = "out", .value_name = "DIR", .help = "results"},
    {.name = "db", .value_name = "FILE", .help = "history"},
    {.name = "role", .value_name = "client|oss|mds", .help = "role"},
    {.name = "secret", .value_name = "DIR", .help = "not shown", .hidden = true},
    {.name = "x;rm", .kind = FlagKind::kBool, .help = "not a plain name"},
}};
constexpr std::array<FlagSpec, 1> kCertsFlags = {{
    {.name = "dir", .value_name = "DIR", .help = "where"},
}};
constexpr CommandSpec kRun = {.program = "tool", .name = "run", .synopsis = "[flags] PLAN.toml",
                              .flags = kRunFlags};
constexpr CommandSpec kCerts = {.program = "tool", .name = "certs",
                                .synopsis = "init --dir DIR\nissue --dir DIR\ninit --again",
                                .flags = kCertsFlags};
constexpr CommandSpec kHelp = {.program = "tool", .name = "help", .synopsis = "[COMMAND]"};
constexpr const CommandSpec* kCommands[] = {&kRun, &kCerts, &kHelp};
constexpr ProgramSpec kTool = {.name = "tool", .commands = kCommands};

constexpr CommandSpec kDaemon = {.program = "my-daemon", .flags = kRunFlags};
constexpr const CommandSpec* kDaemonCommands[] = {&kDaemon};
constexpr ProgramSpec kDaemonProgram = {.name = "my-daemon", .commands = kDaemonCommands};

// Runs the completion function of `program` in bash, in a directory holding
// plan.toml and sub/, with the command line `words` (the last one is the
// word being completed), and returns COMPREPLY sorted.
class BashCompletion : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_ / "plan.toml") << "";
    std::filesystem::create_directory(dir_ / "sub");
  }

  std::vector<std::string> Complete(const ProgramSpec& program,
                                    const std::vector<std::string>& words) {
    const std::string script = script_dir_ / "completion.bash";
    std::ofstream(script) << FormatBashCompletion(program);
    std::string fn = "_" + std::string(program.name);
    std::replace(fn.begin(), fn.end(), '-', '_');
    std::vector<std::string> argv = {
        "/bin/bash", "-c",
        "cd \"$1\" && source \"$2\" && fn=$3 && shift 3 && COMP_WORDS=(\"$@\") && "
        "COMP_CWORD=$(($# - 1)) && \"$fn\" && printf '%s\\n' \"${COMPREPLY[@]}\"",
        "bash", dir_.path(), script, fn};
    argv.insert(argv.end(), words.begin(), words.end());
    testing::CommandResult r = testing::RunCommand(argv, std::chrono::seconds(20));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    std::vector<std::string> out = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
    std::sort(out.begin(), out.end());
    return out;
  }

  testing::TempDir dir_;
  testing::TempDir script_dir_;
};

TEST_F(BashCompletion, CommandsFlagsAndValues) {
  EXPECT_THAT(Complete(kTool, {"tool", ""}), ElementsAre("--help", "certs", "help", "run"));
  EXPECT_THAT(Complete(kTool, {"tool", "r"}), ElementsAre("run"));
  // Visible flags only; the hidden one and the one that is not a plain name
  // are not offered.
  EXPECT_THAT(Complete(kTool, {"tool", "run", "--"}),
              UnorderedElementsAre("--insecure", "--local", "--out", "--db", "--role", "--help"));
  EXPECT_THAT(Complete(kTool, {"tool", "run", "--out", ""}), ElementsAre("sub"));
  EXPECT_THAT(Complete(kTool, {"tool", "run", "--db", ""}), ElementsAre("plan.toml", "sub"));
  EXPECT_THAT(Complete(kTool, {"tool", "run", "--role", ""}), ElementsAre("client", "mds", "oss"));
  EXPECT_THAT(Complete(kTool, {"tool", "run", "--role", "o"}), ElementsAre("oss"));
  // --role=VALUE: bash has split the word at '='.
  EXPECT_THAT(Complete(kTool, {"tool", "run", "--role", "=", ""}),
              ElementsAre("client", "mds", "oss"));
  EXPECT_THAT(Complete(kTool, {"tool", "run", "--local", ""}), IsEmpty());
  // After a flag's value and after a bool, positional words are files.
  EXPECT_THAT(Complete(kTool, {"tool", "run", "--out", "sub", "--insecure", "p"}),
              ElementsAre("plan.toml"));
}

TEST_F(BashCompletion, PositionalWordsFromTheSynopsis) {
  EXPECT_THAT(Complete(kTool, {"tool", "certs", ""}), ElementsAre("init", "issue"));
  EXPECT_THAT(Complete(kTool, {"tool", "certs", "--dir", "sub", "i"}), ElementsAre("init", "issue"));
  EXPECT_THAT(Complete(kTool, {"tool", "certs", "init", "p"}), ElementsAre("plan.toml"));
  EXPECT_THAT(Complete(kTool, {"tool", "help", ""}), ElementsAre("certs", "help", "run"));
}

TEST_F(BashCompletion, ProgramWithoutSubcommands) {
  EXPECT_THAT(Complete(kDaemonProgram, {"my-daemon", "--r"}), ElementsAre("--role"));
  EXPECT_THAT(Complete(kDaemonProgram, {"my-daemon", "--insecure", "--role", ""}),
              ElementsAre("client", "mds", "oss"));
  EXPECT_THAT(FormatBashCompletion(kDaemonProgram), HasSubstr("complete -F _my_daemon my-daemon\n"));
}

TEST_F(BashCompletion, LockstepsScriptHasEveryVisibleFlag) {
  const std::string script = FormatBashCompletion(LockstepProgram());
  EXPECT_THAT(script, Not(HasSubstr("--bash-completion")));  // hidden, like --man
  EXPECT_THAT(script, Not(HasSubstr("--man")));
  for (const CommandSpec* c : LockstepCommands()) {
    for (const FlagSpec& f : c->flags) {
      if (!f.hidden) {
        EXPECT_THAT(script, HasSubstr("--" + std::string(f.name))) << f.name;
      }
    }
  }
  EXPECT_THAT(Complete(LockstepProgram(), {"lockstep", "certs", ""}), ElementsAre("init", "issue"));
  EXPECT_THAT(Complete(LockstepProgram(), {"lockstep", "run", "--tls_dir", ""}), ElementsAre("sub"));
  EXPECT_THAT(Complete(LockstepProgram(), {"lockstep", "ru"}), ElementsAre("run"));
}

}  // namespace
}  // namespace lockstep
