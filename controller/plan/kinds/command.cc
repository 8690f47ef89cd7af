// kind = "command": a program started at the start instant on every client
// agent (one task each). Its keys argv, env, timeout_seconds and tail_size
// are checked against common/command_rules.h, the rules the agent checks again.
//
//   [[phase]]
//   name = "untar"
//   kind = "command"
//   dir = "build"                        # the working directory (created if missing)
//   argv = ["tar", "xf", "../linux.tar"] # no shell; argv[0] a bare name or an absolute path
//   env = ["MAKEFLAGS=-j4"]              # added to PATH, HOME and LANG=C
//   timeout_seconds = 600                # default: 1 hour
//   tail_size = "4k"                     # of stdout and of stderr; default 4 KiB
//
// A bare argv[0] ("tar") is resolved on each agent against its
// allow_commands by base name (ProgramOnAgent); a name with a '/' must be
// an absolute path. Before anything runs the controller asks each client
// whether it can run the phase (RefuseAgent: wire minor, account, program
// allowed; the agent checks again, agent/workloads/command.h), and each
// agent's copy of the spec names its own program (AdaptForAgent).
#include "controller/plan/kinds/registry.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/command_rules.h"
#include "common/limits.h"
#include "common/names.h"
#include "common/status_macros.h"
#include "controller/plan/limits.h"
#include "controller/record/command_summary.h"
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

namespace kinds {
namespace {

// A list of strings; *out unchanged when the key is absent.
absl::Status ReadStrings(const TableReader& r, const char* key, std::vector<std::string>* out) {
  const toml::node* n = r.Get(key);
  if (n == nullptr) return absl::OkStatus();
  if (!n->is_array()) {
    return r.Error(*n, key,
                   absl::StrFormat("expected a list of strings such as [\"tar\", \"xf\", "
                                   "\"linux.tar\"], got %s",
                                   TableReader::TypeName(*n)));
  }
  out->clear();
  for (const toml::node& e : *n->as_array()) {
    if (!e.is_string()) {
      return r.Error(e, key,
                     absl::StrFormat("expected a list of strings, got %s in it (quote it)",
                                     TableReader::TypeName(e)));
    }
    out->push_back(e.as_string()->get());
  }
  return absl::OkStatus();
}

// argv: present, within the limits, argv[0] a bare name or an absolute path.
absl::Status ReadArgv(const TableReader& r, PhasePlan* p) {
  CommandPlan& cp = p->Own<CommandPlan>();
  RETURN_IF_ERROR(ReadStrings(r, "argv", &cp.command_argv));
  if (r.Get("argv") == nullptr) {
    return r.Missing("argv", "add argv = [\"tar\", \"xf\", \"linux.tar\"] (the program and its "
                             "arguments; no shell)");
  }
  if (absl::Status s = CheckCommandArgv(cp.command_argv); !s.ok()) {
    return r.Error(*r.Get("argv"), "argv", std::string(s.message()));
  }
  const std::string& program = cp.command_argv[0];
  if (program[0] != '/' && program.find('/') != std::string::npos) {
    return r.Error(*r.Get("argv"), "argv",
                   absl::StrFormat("argv[0] \"%s\" is a relative path; give a bare name (\"%s\", "
                                   "found in the agents' allow_commands) or an absolute path",
                                   program, CommandBaseName(program)));
  }
  if (program == "." || program == "..") {
    return r.Error(*r.Get("argv"), "argv", absl::StrFormat("argv[0] \"%s\" is no program", program));
  }
  return absl::OkStatus();
}

// env: "KEY=VALUE" entries, none the loader reads.
absl::Status ReadEnv(const TableReader& r, PhasePlan* p) {
  CommandPlan& cp = p->Own<CommandPlan>();
  RETURN_IF_ERROR(ReadStrings(r, "env", &cp.command_env));
  if (absl::Status s = CheckCommandEnv(cp.command_env); !s.ok()) {
    return r.Error(*r.Get("env"), "env", std::string(s.message()));
  }
  return absl::OkStatus();
}

// The keys of a command phase, its kind and tasks_per_agent already read.
absl::Status ReadCommandKeys(const TableReader& r, PhasePlan* p) {
  CommandPlan& cp = p->Own<CommandPlan>();
  RETURN_IF_ERROR(ReadArgv(r, p));
  RETURN_IF_ERROR(ReadEnv(r, p));
  RETURN_IF_ERROR(r.Uint32("timeout_seconds", 1, kMaxCommandTimeoutMs / 1000,
                           &cp.command_timeout_seconds));
  if (r.Get("tail_size")) {
    RETURN_IF_ERROR(r.Size("tail_size", &cp.command_tail_bytes));
    if (cp.command_tail_bytes > kMaxCommandTailBytes) {
      return r.Error(*r.Get("tail_size"), "tail_size",
                     absl::StrFormat("%u bytes is over the limit of %u (each agent sends this "
                                     "much of stdout and of stderr back)",
                                     cp.command_tail_bytes, kMaxCommandTailBytes));
    }
  }
  for (uint32_t tasks : p->tasks_per_agent) {
    if (tasks == 1) continue;
    return r.Error(*r.Get("tasks_per_agent"), "tasks_per_agent",
                   absl::StrFormat("a command phase runs its program once on every client agent "
                                   "(one task each), not %u times; remove tasks_per_agent or set "
                                   "it to 1 (a sweep: list 1 for this phase)",
                                   tasks));
  }
  return absl::OkStatus();
}

class CommandKind : public PhaseKindDef {
 public:
  v1::PhaseKind wire() const override { return v1::COMMAND; }
  // No shared I/O key: its directory is made by the command's own Prepare,
  // after the agent applies a layout or checksums (phase_preparer.cc).
  uint32_t IoKeys() const override { return 0; }
  std::string IoKeyHint(const std::string& key) const override {
    if (key.rfind("stripe_", 0) != 0 && key != "object_size" && key != "checksums") return "";
    return "the command's directory does not exist when they would be applied; set them on "
           "its directory beforehand (lfs setstripe), or in an earlier phase of that directory";
  }

  std::vector<std::string> OwnKeys() const override {
    return {"argv", "env", "timeout_seconds", "tail_size"};
  }

  // For a command phase argv is required, and tasks_per_agent must be 1
  // (one program per agent).
  absl::Status ReadKeys(const TableReader& r, const Plan&, PhasePlan* p) const override {
    RETURN_IF_ERROR(RefuseOwnKeys(r, *p));
    if (p->kind != wire()) return absl::OkStatus();
    return ReadCommandKeys(r, p);
  }

  void WriteToml(const PhasePlan& p, TomlLines* out) const override {
    const CommandPlan& cp = p.Own<CommandPlan>();
    WriteKeepAndDelay(p, out);
    out->StringList("argv", cp.command_argv);
    if (!cp.command_env.empty()) out->StringList("env", cp.command_env);
    out->Uint("timeout_seconds", cp.command_timeout_seconds);
    out->UintAlways("tail_size", cp.command_tail_bytes);
  }

  // argv[0] as the plan wrote it; each agent's copy names its program
  // (AdaptForAgent).
  void FillSpec(const PhasePlan& p, v1::PhaseSpec* s) const override {
    const CommandPlan& cp = p.Own<CommandPlan>();
    for (const std::string& a : cp.command_argv) s->add_command_argv(a);
    for (const std::string& e : cp.command_env) s->add_command_env(e);
    s->set_command_timeout_ms(cp.command_timeout_seconds * 1000);
    s->set_command_tail_bytes(static_cast<uint32_t>(cp.command_tail_bytes));
  }

  bool LeavesFiles(const PhasePlan&) const override { return false; }

  void Reduce(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec&,
              uint32_t rep, v1::PhaseRecord* pr) const override {
    ReduceCommand(tasks, rep, pr);
  }

  // An older agent has no workload for the kind; an agent without an
  // account to run programs as, or that does not allow the program, would
  // refuse it at Prepare.
  std::string RefuseAgent(const PhasePlan& p, const std::string& who,
                          const v1::HostFacts& f) const override {
    const CommandPlan& cp = p.Own<CommandPlan>();
    if (cp.command_argv.empty()) return "";
    if (f.wire_minor() < kCommandWireMinor) {
      return absl::StrFormat("phase '%s' runs a command, which %s (lockstep %s, wire protocol "
                             "1.%u) cannot do; upgrade it to wire protocol 1.%u or later",
                             p.name, who, f.agent_version(), f.wire_minor(), kCommandWireMinor);
    }
    if (f.command_user().empty()) {
      return absl::StrFormat("phase '%s': %s has no account to run programs as (its default, "
                             "nobody, does not exist there); set command_user in its agent config",
                             p.name, who);
    }
    auto program = ProgramOnAgent(cp.command_argv[0], f);
    if (program.ok()) return "";
    return absl::StrFormat("phase '%s': %s %s", p.name, who, program.status().message());
  }

  // A program the agent would refuse is left as it is (it says why in Prepare).
  void AdaptForAgent(const v1::HostFacts& facts, v1::PhaseSpec* spec) const override {
    if (spec->command_argv_size() == 0) return;
    auto program = ProgramOnAgent(spec->command_argv(0), facts);
    if (program.ok()) spec->set_command_argv(0, *program);
  }

  // The user runs both sides: local agents allow the plan's own programs,
  // each by its absolute path (a bare name looked up in kCommandSearchPath,
  // as a shell's PATH would, without a shell).
  absl::Status LocalPrograms(const PhasePlan& p, std::set<std::string>* programs) const override {
    const CommandPlan& cp = p.Own<CommandPlan>();
    if (cp.command_argv.empty()) return absl::OkStatus();
    const std::string& argv0 = cp.command_argv[0];
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
      return absl::InvalidArgumentError(absl::StrFormat(
          "phase '%s': %s is not an executable program%s; give argv[0] as the absolute path of "
          "one",
          p.name, argv0, argv0[0] == '/' ? "" : absl::StrFormat(" in %s", kCommandSearchPath)));
    }
    programs->insert(path);
    return absl::OkStatus();
  }

  // Its directory is owned by the account the program runs as.
  bool AgentMakesDir() const override { return true; }
  // A failed command still shows each host's times, status and stderr.
  bool ShowsFailedPhase() const override { return true; }

  bool IorReportRow() const override { return false; }

  std::vector<std::string> ReportNotes(
      const v1::PhaseRecord& p,
      const std::map<std::string, std::string>& host_by_address) const override {
    return CommandReportLines(p, host_by_address);
  }

  void Estimate(const Plan&, const PhasePlan& p, uint32_t, uint32_t,
                PhaseEstimate* e) const override {
    e->note = absl::StrFormat("runs %s; duration not estimated",
                              p.Own<CommandPlan>().command_argv.empty()
                                  ? "?"
                                  : p.Own<CommandPlan>().command_argv.front());
  }
};

}  // namespace

std::unique_ptr<PhaseKindDef> MakeCommandKind() { return std::make_unique<CommandKind>(); }

}  // namespace kinds
}  // namespace lockstep
