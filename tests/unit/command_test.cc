// Command phases without processes: the plan keys (controller/plan/
// command_keys.h), the agent config keys, the rules both sides share
// (common/command_rules.h), the controller's resolution of argv[0] against
// an agent's allow_commands, the reduction and the lines a run prints.
#include <unistd.h>

#include <string>
#include <vector>

#include "agent/config.h"
#include "agent/workloads/command_process.h"
#include "agent/workloads/workload.h"
#include "common/command_rules.h"
#include "controller/record/command_summary.h"
#include "controller/plan/plan.h"
#include "controller/run/agent_checks.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "unit/plan_text.h"
#include "controller/plan/kinds/command_plan.h"

namespace lockstep {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using plan_text::Error;

std::string Command(const std::string& extra, const std::string& argv = "[\"tar\", \"xf\", \"a.tar\"]") {
  return "[[phase]]\nname = \"untar\"\nkind = \"command\"\ndir = \"build\"\nargv = " + argv + "\n" +
         extra;
}

TEST(CommandPlan, ParsesTheKeys) {
  auto plan = ParsePlan(Command("env = [\"MAKEFLAGS=-j4\", \"X=a=b\"]\ntimeout_seconds = 600\n"
                                "tail_size = \"8k\"\n"),
                        "plan.toml");
  ASSERT_OK(plan);
  const PhasePlan& p = plan->phases[0];
  EXPECT_EQ(p.kind, v1::COMMAND);
  EXPECT_THAT(p.Own<CommandPlan>().command_argv, ElementsAre("tar", "xf", "a.tar"));
  EXPECT_THAT(p.Own<CommandPlan>().command_env, ElementsAre("MAKEFLAGS=-j4", "X=a=b"));
  EXPECT_EQ(p.Own<CommandPlan>().command_timeout_seconds, 600u);
  EXPECT_EQ(p.Own<CommandPlan>().command_tail_bytes, 8192u);
  auto defaults = ParsePlan(Command("", "[\"/usr/bin/make\"]"), "plan.toml");
  ASSERT_OK(defaults);
  EXPECT_EQ(defaults->phases[0].Own<CommandPlan>().command_timeout_seconds,
            0u);  // the agent's default
  EXPECT_EQ(defaults->phases[0].Own<CommandPlan>().command_tail_bytes, 4096u);
}

TEST(CommandPlan, BadInputNamesTheKeyAndTheFix) {
  EXPECT_THAT(Error("[[phase]]\nname = \"c\"\nkind = \"command\"\ndir = \"d\"\n"),
              AllOf(HasSubstr("plan.toml:1:1"), HasSubstr("has no 'argv'"),
                    HasSubstr("argv = [\"tar\", \"xf\", \"linux.tar\"]")));
  EXPECT_THAT(Error(Command("", "[]")), AllOf(HasSubstr("key 'argv'"), HasSubstr("empty")));
  EXPECT_THAT(Error(Command("", "\"tar xf a.tar\"")),
              AllOf(HasSubstr("plan.toml:5:"), HasSubstr("expected a list of strings")));
  EXPECT_THAT(Error(Command("", "[\"bin/tar\"]")),
              AllOf(HasSubstr("relative path"), HasSubstr("\"tar\"")));
  EXPECT_THAT(Error(Command("env = [\"LD_PRELOAD=/tmp/x.so\"]\n")),
              AllOf(HasSubstr("key 'env'"), HasSubstr("LD_PRELOAD is refused")));
  EXPECT_THAT(Error(Command("env = [\"NOEQUALS\"]\n")), HasSubstr("is not KEY=VALUE"));
  EXPECT_THAT(Error(Command("env = [\"1X=y\"]\n")), HasSubstr("not a variable name"));
  EXPECT_THAT(Error(Command("tail_size = \"1m\"\n")),
              AllOf(HasSubstr("key 'tail_size'"), HasSubstr("over the limit of 65536")));
  EXPECT_THAT(Error(Command("timeout_seconds = 0\n")), HasSubstr("key 'timeout_seconds'"));
  // One program per agent: tasks_per_agent is refused with the fix.
  EXPECT_THAT(Error(Command("tasks_per_agent = 4\n")),
              AllOf(HasSubstr("key 'tasks_per_agent'"), HasSubstr("once on every client agent"),
                    HasSubstr("set it to 1")));
  EXPECT_THAT(Error(Command("tasks_per_agent = [1, 2]\n")), HasSubstr("not 2 times"));
  EXPECT_EQ(Error(Command("tasks_per_agent = 1\n")), "OK");
  // The command keys belong to command phases.
  EXPECT_THAT(Error("[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"d\"\nargv = [\"x\"]\n"),
              AllOf(HasSubstr("key 'argv'"), HasSubstr("applies to command phases")));
}

TEST(CommandRules, EnvironmentEntries) {
  EXPECT_OK(CheckCommandEnvEntry("A_1=x y z"));
  EXPECT_OK(CheckCommandEnvEntry("EMPTY="));
  for (const char* refused : {"LD_LIBRARY_PATH=/x", "LD_AUDIT=a", "GCONV_PATH=/x",
                              "GLIBC_TUNABLES=glibc.x=1", "=v", "A-B=1"}) {
    EXPECT_FALSE(CheckCommandEnvEntry(refused).ok()) << refused;
  }
  EXPECT_EQ(CommandBaseName("/usr/bin/tar"), "tar");
  EXPECT_EQ(CommandBaseName("tar"), "tar");
}

TEST(CommandRules, RankExpandsInArgumentsOnly) {
  EXPECT_THAT(ExpandCommandArgv({"/usr/bin/{rank}", "cf", "linux-{rank}.tar", "{rank}/{rank}",
                                 "{ran}", "plain"},
                                3),
              ::testing::ElementsAre("/usr/bin/{rank}", "cf", "linux-00000003.tar",
                                     "00000003/00000003", "{ran}", "plain"));
  EXPECT_THAT(ExpandCommandArgv({"/bin/true"}, 12345678), ::testing::ElementsAre("/bin/true"));
}

TEST(CommandRules, EndingsAndLastLines) {
  v1::CommandResult r;
  EXPECT_EQ(CommandEnding(r, 1000), "exit 0");
  EXPECT_FALSE(CommandFailed(r));
  r.set_exit_code(3);
  EXPECT_EQ(CommandEnding(r, 1000), "exit 3");
  EXPECT_TRUE(CommandFailed(r));
  r.set_exit_code(-1);
  r.set_signal(9);
  EXPECT_EQ(CommandEnding(r, 1000), "killed by signal 9 (Killed)");
  r.set_timed_out(true);
  r.set_signal(15);
  EXPECT_EQ(CommandEnding(r, 2000),
            "timed out after 2 s, killed with its process group (signal 15)");
  EXPECT_EQ(LastLines("a\nb\n\nc\n", 2), "b | c");
  EXPECT_EQ(LastLines("", 2), "");
  const std::string long_line(400, 'x');
  EXPECT_EQ(LastLines(long_line, 1).size(), 303u);
}

TEST(CommandAgentConfig, AllowCommandsAreAbsolutePaths) {
  auto c = ParseAgentConfig(
      "allow_commands = [\"/usr/bin/tar\", \"/usr/bin/make\"]\ncommand_user = \"nobody\"\n",
      "a.toml");
  ASSERT_OK(c);
  EXPECT_THAT(c->options.allow_commands, ElementsAre("/usr/bin/tar", "/usr/bin/make"));
  EXPECT_EQ(c->options.command_user, "nobody");
  auto relative = ParseAgentConfig("listen = \"x:1\"\nallow_commands = [\"/bin/ls\", \"tar\"]\n",
                                   "a.toml");
  EXPECT_THAT(relative.status().message(),
              AllOf(HasSubstr("a.toml:2:"), HasSubstr("key 'allow_commands'"),
                    HasSubstr("\"tar\" is not an absolute path"), HasSubstr("/usr/bin/tar")));
  auto type = ParseAgentConfig("allow_commands = \"/bin/ls\"\n", "a.toml");
  EXPECT_THAT(type.status().message(), HasSubstr("expected a list of strings"));
  auto empty_user = ParseAgentConfig("command_user = \"\"\n", "a.toml");
  EXPECT_THAT(empty_user.status().message(),
              AllOf(HasSubstr("a.toml:1:"), HasSubstr("key 'command_user'"), HasSubstr("empty")));
}

TEST(CommandAccount, DefaultIsUnprivilegedUnderRoot) {
  auto self = ResolveCommandAccount("");
  if (::geteuid() == 0) {
    if (!self.ok()) GTEST_SKIP() << "no nobody account here: " << self.status();
    EXPECT_EQ(self->name, "nobody");
    EXPECT_NE(self->uid, 0u);
    EXPECT_TRUE(self->switch_user);
    auto root = ResolveCommandAccount("root");
    ASSERT_OK(root);
    EXPECT_EQ(root->uid, 0u);  // only when named
    EXPECT_FALSE(root->switch_user);
  } else {
    ASSERT_OK(self);
    EXPECT_EQ(self->uid, ::geteuid());
    EXPECT_FALSE(self->switch_user);
    auto other = ResolveCommandAccount("root");
    EXPECT_THAT(other.status().message(), HasSubstr("cannot run programs as another account"));
  }
  auto unknown = ResolveCommandAccount("no-such-user-lockstep");
  EXPECT_THAT(unknown.status().message(),
              AllOf(HasSubstr("command_user \"no-such-user-lockstep\""),
                    HasSubstr("not an account on this host")));
}

TEST(CommandAccount, CleanEnvironment) {
  CommandAccount a{.name = "u", .home = "/home/u"};
  EXPECT_THAT(CommandEnvironment(a, {"LANG=en_US.UTF-8", "A=1"}),
              ElementsAre("PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/u",
                          "LANG=en_US.UTF-8", "A=1"));
}

TEST(CommandWorkload, TheAgentRefusesWhatItsConfigDoesNotAllow) {
  v1::PhaseSpec s;
  s.set_phase_id("t0/r0/id");
  s.set_kind(v1::COMMAND);
  s.set_file_name("f");
  s.set_tasks(1);
  s.set_total_tasks(1);
  s.add_command_argv("/usr/bin/id");
  WorkloadOptions o;
  o.allow_commands = {"/usr/bin/tar"};
  auto validate = [&](const v1::PhaseSpec& spec) {
    auto w = MakeWorkload(spec, o);
    EXPECT_OK(w);
    return w.ok() ? (*w)->Validate() : w.status();
  };
  absl::Status refused = validate(s);
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.message(),
              AllOf(HasSubstr("phase t0/r0/id"), HasSubstr("does not allow /usr/bin/id"),
                    HasSubstr("allow_commands: [/usr/bin/tar]"),
                    HasSubstr("--allow_command /usr/bin/id")));
  v1::PhaseSpec bare = s;
  bare.set_command_argv(0, "tar");
  EXPECT_THAT(validate(bare).message(), HasSubstr("not an absolute path"));
  v1::PhaseSpec tasks = s;
  tasks.set_tasks(2);
  tasks.set_total_tasks(2);
  EXPECT_THAT(validate(tasks).message(), HasSubstr("one task per agent"));
  v1::PhaseSpec env = s;
  env.set_command_argv(0, "/usr/bin/tar");
  env.add_command_env("LD_PRELOAD=/tmp/evil.so");
  EXPECT_THAT(validate(env).message(), HasSubstr("LD_PRELOAD is refused"));
  v1::PhaseSpec allowed = s;
  allowed.set_command_argv(0, "/usr/bin/tar");
  if (ResolveCommandAccount("").ok()) EXPECT_OK(validate(allowed));
}

v1::HostFacts Allowing(std::vector<std::string> programs, uint32_t minor = 3) {
  v1::HostFacts f;
  f.set_hostname("n01");
  f.set_wire_minor(minor);
  f.set_agent_version("0.1.0");
  f.set_command_user("nobody");
  for (const std::string& p : programs) f.add_allowed_commands(p);
  return f;
}

TEST(CommandChecks, ProgramsResolveAgainstAllowCommands) {
  const v1::HostFacts f = Allowing({"/usr/bin/tar", "/usr/bin/make", "/opt/gnu/bin/make"});
  EXPECT_EQ(ProgramOnAgent("tar", f).value(), "/usr/bin/tar");
  EXPECT_EQ(ProgramOnAgent("/usr/bin/tar", f).value(), "/usr/bin/tar");
  EXPECT_THAT(ProgramOnAgent("/bin/tar", f).status().message(),
              AllOf(HasSubstr("does not allow /bin/tar"), HasSubstr("allow_commands"),
                    HasSubstr("--allow_command /bin/tar")));
  EXPECT_THAT(ProgramOnAgent("cp", f).status().message(),
              AllOf(HasSubstr("allows no program named cp"), HasSubstr("allow_commands")));
  EXPECT_THAT(ProgramOnAgent("make", f).status().message(),
              AllOf(HasSubstr("several programs named make"), HasSubstr("/opt/gnu/bin/make")));

  AgentClient old("10.0.0.1:7070", v1::CLIENT, grpc::InsecureChannelCredentials());
  old.facts = Allowing({"/usr/bin/tar"}, 2);
  auto parsed = ParsePlan(Command(""), "plan.toml");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const PhasePlan& untar = parsed->phases[0];
  RunError e = CheckAgentForPhase(untar, old);
  EXPECT_EQ(e.kind, RunFailure::kBadPlan);
  EXPECT_THAT(e.message, AllOf(HasSubstr("phase 'untar'"), HasSubstr("10.0.0.1:7070"),
                               HasSubstr("wire protocol 1.2"), HasSubstr("1.3 or later")));
  AgentClient agent("10.0.0.2:7070", v1::CLIENT, grpc::InsecureChannelCredentials());
  agent.facts = Allowing({"/usr/bin/make"});
  e = CheckAgentForPhase(untar, agent);
  EXPECT_THAT(e.message, AllOf(HasSubstr("phase 'untar': agent 10.0.0.2:7070 (host n01)"),
                               HasSubstr("allows no program named tar"),
                               HasSubstr("allow_commands")));
  agent.facts = Allowing({"/usr/bin/tar"});
  EXPECT_FALSE(CheckAgentForPhase(untar, agent));
  EXPECT_FALSE(CheckPhasesOnAgents(*parsed, {&agent}, {}));
  EXPECT_THAT(CheckPhasesOnAgents(*parsed, {&old, &agent}, {}).message, HasSubstr("10.0.0.1:7070"));
  v1::PhaseSpec spec;
  spec.set_kind(v1::COMMAND);
  spec.add_command_argv("tar");
  spec.add_command_argv("xf");
  AdaptSpecForAgent(agent.facts, &spec);
  EXPECT_THAT(spec.command_argv(), ElementsAre("/usr/bin/tar", "xf"));
}

v1::TaskResult Ran(int64_t real_ms, int exit_code, const std::string& err = "") {
  v1::TaskResult t;
  v1::CommandResult* c = t.mutable_command();
  c->set_real_ns(real_ms * 1'000'000);
  c->set_user_ns(267'000'000);
  c->set_sys_ns(3'727'000'000);
  c->set_exit_code(exit_code);
  c->set_stderr_tail(err);
  return t;
}

TEST(CommandSummary, ReducesAndPrintsAsTimeDoes) {
  v1::PhaseRecord pr;
  pr.set_kind(v1::COMMAND);
  pr.mutable_spec()->add_command_argv("/usr/bin/tar");
  const std::vector<std::pair<std::string, v1::TaskResult>> hosts = {
      {"10.0.0.1:7070", Ran(13'559, 0)},
      {"10.0.0.2:7070", Ran(13'900, 0)},
      {"10.0.0.3:7070", Ran(13'600, 2, "tar: x: Cannot open\ntar: Error is not recoverable\n")}};
  std::vector<const v1::TaskResult*> tasks;
  for (const auto& [address, t] : hosts) {
    v1::AgentPhaseRecord* a = pr.add_agents();
    a->set_address(address);
    a->set_role(v1::CLIENT);
    *a->add_tasks() = t;
  }
  for (const v1::AgentPhaseRecord& a : pr.agents()) tasks.push_back(&a.tasks(0));
  ReduceCommand(tasks, 0, &pr);
  EXPECT_EQ(pr.command().hosts(), 3u);
  EXPECT_EQ(pr.command().failed(), 1u);
  EXPECT_DOUBLE_EQ(pr.command().real_min_s(), 13.559);
  EXPECT_DOUBLE_EQ(pr.command().real_median_s(), 13.6);
  EXPECT_DOUBLE_EQ(pr.command().real_max_s(), 13.9);
  EXPECT_DOUBLE_EQ(pr.command().sys_median_s(), 3.727);
  EXPECT_EQ(pr.row().access(), "command");
  EXPECT_DOUBLE_EQ(pr.row().total_s(), 13.9);
  EXPECT_EQ(TimeOfDuration(61'000'400'000), "1m1.000s");
  const std::map<std::string, std::string> names = {
      {"10.0.0.1:7070", "n01"}, {"10.0.0.2:7070", "n02"}, {"10.0.0.3:7070", "n03"}};
  EXPECT_THAT(CommandReportLines(pr, names),
              ElementsAre("n01: real 0m13.559s user 0m0.267s sys 0m3.727s exit 0",
                          "n02: real 0m13.900s user 0m0.267s sys 0m3.727s exit 0",
                          "n03: real 0m13.600s user 0m0.267s sys 0m3.727s exit 2; stderr: tar: "
                          "x: Cannot open | tar: Error is not recoverable",
                          "command tar: 3 hosts, real min 13.6 s median 13.6 s max 13.9 s, 1 "
                          "failed"));
  // Agents on one host (local agents) are told apart by address.
  const std::map<std::string, std::string> one_host = {
      {"10.0.0.1:7070", "vm"}, {"10.0.0.2:7070", "vm"}, {"10.0.0.3:7070", "n03"}};
  EXPECT_THAT(CommandReportLines(pr, one_host)[0], HasSubstr("10.0.0.1:7070: real 0m13.559s"));
  EXPECT_THAT(CommandReportLines(pr, one_host)[2], HasSubstr("n03: real"));
}

}  // namespace
}  // namespace lockstep
