#include "controller/plan/command_keys.h"

#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/command_rules.h"
#include "common/limits.h"
#include "common/names.h"
#include "common/status_macros.h"
#include "controller/plan/limits.h"

namespace lockstep {
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
  RETURN_IF_ERROR(ReadStrings(r, "argv", &p->command_argv));
  if (r.Get("argv") == nullptr) {
    return r.Missing("argv", "add argv = [\"tar\", \"xf\", \"linux.tar\"] (the program and its "
                             "arguments; no shell)");
  }
  if (absl::Status s = CheckCommandArgv(p->command_argv); !s.ok()) {
    return r.Error(*r.Get("argv"), "argv", std::string(s.message()));
  }
  const std::string& program = p->command_argv[0];
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
  RETURN_IF_ERROR(ReadStrings(r, "env", &p->command_env));
  if (absl::Status s = CheckCommandEnv(p->command_env); !s.ok()) {
    return r.Error(*r.Get("env"), "env", std::string(s.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadCommandKeys(const TableReader& r, PhasePlan* p) {
  const bool command = p->kind == v1::COMMAND;
  for (const char* key : kCommandKeys) {
    if (!command && r.Get(key) != nullptr) {
      return r.Error(*r.Get(key), key,
                     absl::StrFormat("applies to command phases, not to kind = \"%s\"",
                                     PhaseKindName(p->kind)));
    }
  }
  if (!command) return absl::OkStatus();
  RETURN_IF_ERROR(ReadArgv(r, p));
  RETURN_IF_ERROR(ReadEnv(r, p));
  RETURN_IF_ERROR(r.Uint32("timeout_seconds", 1, kMaxCommandTimeoutMs / 1000,
                           &p->command_timeout_seconds));
  if (r.Get("tail_size")) {
    RETURN_IF_ERROR(r.Size("tail_size", &p->command_tail_bytes));
    if (p->command_tail_bytes > kMaxCommandTailBytes) {
      return r.Error(*r.Get("tail_size"), "tail_size",
                     absl::StrFormat("%u bytes is over the limit of %u (each agent sends this "
                                     "much of stdout and of stderr back)",
                                     p->command_tail_bytes, kMaxCommandTailBytes));
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

}  // namespace lockstep
