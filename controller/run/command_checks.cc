#include "controller/run/command_checks.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/command_rules.h"
#include "controller/plan/kinds/command_plan.h"

namespace lockstep {
namespace {

std::string AllowedList(const v1::HostFacts& facts) {
  if (facts.allowed_commands_size() == 0) return "none";
  return absl::StrJoin(facts.allowed_commands(), ", ");
}

// A regular file this process may execute.
bool IsProgram(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

absl::StatusOr<std::string> ProgramOnAgent(const std::string& argv0, const v1::HostFacts& facts) {
  const auto& allowed = facts.allowed_commands();
  if (!argv0.empty() && argv0[0] == '/') {
    if (std::find(allowed.begin(), allowed.end(), argv0) != allowed.end()) return argv0;
    return absl::PermissionDeniedError(absl::StrFormat(
        "does not allow %s (it allows: %s); add \"%s\" to allow_commands in its agent config "
        "(lockstep-agent --allow_command %s)",
        argv0, AllowedList(facts), argv0, argv0));
  }
  std::vector<std::string> matches;
  for (const std::string& program : allowed) {
    if (CommandBaseName(program) == argv0) matches.push_back(program);
  }
  if (matches.size() == 1) return matches[0];
  if (matches.empty()) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "allows no program named %s (it allows: %s); add its absolute path (\"/usr/bin/%s\") to "
        "allow_commands in its agent config, or give argv[0] as an absolute path",
        argv0, AllowedList(facts), argv0));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "allows several programs named %s (%s); give argv[0] as the absolute path of the one to run",
      argv0, absl::StrJoin(matches, ", ")));
}

RunError CheckCommandAgent(const std::string& phase, const std::string& argv0,
                           const AgentClient& agent) {
  const v1::HostFacts& f = agent.facts;
  const std::string who = absl::StrFormat("agent %s (host %s)", agent.address(), f.hostname());
  if (f.wire_minor() < kCommandWireMinor) {
    // An older agent has no workload for the kind.
    return Fail(RunFailure::kBadPlan,
                absl::StrFormat("phase '%s' runs a command, which %s (lockstep %s, wire protocol "
                                "1.%u) cannot do; upgrade it to wire protocol 1.%u or later",
                                phase, who, f.agent_version(), f.wire_minor(), kCommandWireMinor));
  }
  if (f.command_user().empty()) {
    return Fail(RunFailure::kBadPlan,
                absl::StrFormat("phase '%s': %s has no account to run programs as (its default, "
                                "nobody, does not exist there); set command_user in its agent "
                                "config",
                                phase, who));
  }
  auto program = ProgramOnAgent(argv0, f);
  if (program.ok()) return {};
  return Fail(RunFailure::kBadPlan,
              absl::StrFormat("phase '%s': %s %s", phase, who, program.status().message()));
}

RunError CheckCommandPhases(const Plan& plan, const std::vector<AgentClient*>& clients) {
  std::vector<std::string> refused;
  for (const PhasePlan& p : plan.phases) {
    if (p.kind != v1::COMMAND || p.Own<CommandPlan>().command_argv.empty()) continue;
    for (const AgentClient* c : clients) {
      if (RunError e = CheckCommandAgent(p.name, p.Own<CommandPlan>().command_argv[0], *c)) {
        refused.push_back(std::move(e.message));
      }
    }
  }
  if (refused.empty()) return {};
  return Fail(RunFailure::kBadPlan, absl::StrJoin(refused, "\n"));
}

void SetProgramForAgent(const v1::HostFacts& facts, v1::PhaseSpec* spec) {
  if (spec->kind() != v1::COMMAND || spec->command_argv_size() == 0) return;
  auto program = ProgramOnAgent(spec->command_argv(0), facts);
  if (program.ok()) spec->set_command_argv(0, *program);
}

RunError LocalCommandPrograms(const Plan& plan, std::vector<std::string>* programs) {
  std::set<std::string> found;
  for (const PhasePlan& p : plan.phases) {
    if (p.kind != v1::COMMAND || p.Own<CommandPlan>().command_argv.empty()) continue;
    const std::string& argv0 = p.Own<CommandPlan>().command_argv[0];
    std::string path;
    if (argv0[0] == '/') {
      path = IsProgram(argv0) ? argv0 : "";
    } else {
      for (absl::string_view dir : absl::StrSplit(kCommandSearchPath, ':')) {
        const std::string candidate = absl::StrFormat("%s/%s", dir, argv0);
        if (IsProgram(candidate)) {
          path = candidate;
          break;
        }
      }
    }
    if (path.empty()) {
      return Fail(RunFailure::kBadPlan,
                  absl::StrFormat("phase '%s': %s is not an executable program%s; give argv[0] as "
                                  "the absolute path of one",
                                  p.name, argv0,
                                  argv0[0] == '/' ? "" : absl::StrFormat(" in %s", kCommandSearchPath)));
    }
    found.insert(path);
  }
  programs->assign(found.begin(), found.end());
  return {};
}

}  // namespace lockstep
