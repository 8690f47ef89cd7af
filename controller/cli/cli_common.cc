#include "controller/cli/cli_common.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/files.h"
#include "common/net.h"
#include "controller/cli/reach_agents.h"
#include "common/status_macros.h"
#include "controller/plan/limits.h"
#include "controller/results/history.h"

namespace lockstep {

absl::Status CliBad(const std::string& option, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", option, why));
}

absl::StatusOr<std::vector<ShortOption>> SplitShortOptions(const std::vector<std::string>& args,
                                                           size_t* i, std::string_view with_value,
                                                           absl::Span<const CliRefusal> refused,
                                                           std::string_view tool) {
  const std::string& a = args[*i];
  if (a.size() < 2 || a[0] != '-') {
    return CliBad(a, absl::StrFormat("unexpected argument; %s options start with '-'", tool));
  }
  std::vector<ShortOption> out;
  for (size_t j = 1; j < a.size(); ++j) {
    ShortOption o;
    o.letter = a[j];
    o.name = std::string("-") + o.letter;
    for (const CliRefusal& ref : refused) {
      if (ref.letter == o.letter) return CliBad(o.name, absl::StrFormat("refused: %s", ref.why));
    }
    if (with_value.find(o.letter) != std::string_view::npos) {
      o.has_value = true;
      if (j + 1 < a.size()) {
        o.value = a.substr(j + 1);
      } else if (*i + 1 < args.size()) {
        o.value = args[++*i];
      } else {
        return CliBad(o.name, "needs a value");
      }
      out.push_back(std::move(o));
      break;  // the value ended the word
    }
    out.push_back(std::move(o));
  }
  return out;
}

absl::StatusOr<uint64_t> CliUint(const std::string& opt, const std::string& v, uint64_t min,
                                 uint64_t max) {
  uint64_t n = 0;
  if (!absl::SimpleAtoi(v, &n) || v.empty() || v[0] == '-' || v[0] == '+') {
    return CliBad(opt + " " + v, "expected a whole number");
  }
  if (n < min || n > max) {
    return CliBad(opt + " " + v, absl::StrFormat("out of range; use %u to %u", min, max));
  }
  return n;
}

absl::StatusOr<bool> ParseControllerOption(const std::vector<std::string>& args, size_t* i,
                                           const CommandSpec& command, ControllerCli* c,
                                           const FileReader& read_file) {
  ASSIGN_OR_RETURN(std::optional<FlagValue> flag, ParseOneFlag(args, i, command));
  if (!flag) return false;
  const absl::string_view name = flag->spec->name;
  if (name == "agents") {
    for (const std::string& part : flag->items) {
      RETURN_IF_ERROR(AddAgentAddress(part, "--agents", &c->agents));
    }
  } else if (name == "hostfile") {
    const std::string& path = flag->text;
    auto text = read_file(path);
    if (!text.ok()) return CliBad("--hostfile " + path, std::string(text.status().message()));
    ASSIGN_OR_RETURN(std::vector<AgentPlan> listed, ParseHostfileAgents(*text, path));
    for (const AgentPlan& a : listed) {
      if (a.role == v1::OSS || a.role == v1::MDS) {
        c->servers.push_back(a);
      } else {
        RETURN_IF_ERROR(AddAgentAddress(a.address, "--hostfile " + path, &c->agents));
      }
    }
  } else if (name == "local") {
    c->local_agents = static_cast<int>(flag->u);
  } else if (name == "tasks-per-agent") {
    c->tasks_per_agent = static_cast<uint32_t>(flag->u);
  } else if (name == "out") {
    c->out_dir = flag->text;
  } else if (name == "tls_dir") {
    c->tls_dir = flag->text;
  } else if (name == "insecure") {
    c->insecure = flag->b;
  } else if (name == "tasks") {
    c->total_tasks = static_cast<uint32_t>(flag->u);
  } else if (name == "root") {
    c->roots.insert(c->roots.end(), flag->items.begin(), flag->items.end());
  } else if (name == "history") {
    c->history.enabled = flag->b;
  } else if (name == "db") {
    c->history.db = flag->text;
  } else if (name == "site") {
    c->history.site = flag->text;
  } else if (name == "tag") {
    c->history.tags.insert(c->history.tags.end(), flag->items.begin(), flag->items.end());
  } else {
    return absl::InternalError(absl::StrFormat("--%s is in the table of %s but not handled",
                                               name, command.FullName()));
  }
  return true;
}

absl::Status PlaceTasks(uint32_t total_tasks, const std::string& total_opt, CliCommand* cmd) {
  ControllerCli& c = cmd->controller;
  if (!c.agents.empty() && c.local_agents > 0) {
    return CliBad("--local", "cannot be combined with --agents or --hostfile");
  }
  if (c.agents.empty() && !c.servers.empty()) {
    return CliBad("--hostfile", "names only oss/mds agents; list the client agents too (role "
                                "client, or no role)");
  }
  for (const std::string& a : c.agents) cmd->plan.agents.push_back({a, v1::CLIENT});
  for (const AgentPlan& a : c.servers) cmd->plan.agents.push_back(a);
  // As `mpirun -np N` on one node: one local agent with all the tasks.
  if (c.agents.empty() && c.local_agents == 0) c.local_agents = 1;
  const uint32_t agents = c.agents.empty() ? static_cast<uint32_t>(c.local_agents)
                                           : static_cast<uint32_t>(c.agents.size());
  uint32_t tpa = c.tasks_per_agent == 0 ? 1 : c.tasks_per_agent;
  if (total_tasks > 0) {
    if (total_tasks % agents != 0) {
      return CliBad(absl::StrFormat("%s %u", total_opt, total_tasks),
                 absl::StrFormat("%u tasks cannot be spread evenly over %u agents; use a "
                                 "multiple of %u or change the agents",
                                 total_tasks, agents, agents));
    }
    if (c.tasks_per_agent != 0 && c.tasks_per_agent * agents != total_tasks) {
      return CliBad(absl::StrFormat("%s %u", total_opt, total_tasks),
                 absl::StrFormat("disagrees with --tasks-per-agent %u on %u agents (%u tasks)",
                                 c.tasks_per_agent, agents, c.tasks_per_agent * agents));
    }
    tpa = total_tasks / agents;
    if (tpa > kMaxAgentTasks) {
      return CliBad(absl::StrFormat("%s %u", total_opt, total_tasks),
                 absl::StrFormat("%u tasks per agent is above the limit %u", tpa,
                                 kMaxAgentTasks));
    }
  }
  for (PhasePlan& p : cmd->plan.phases) p.tasks_per_agent = {tpa};
  cmd->notes.push_back(absl::StrFormat("%u agent%s (%s) x %u task%s = %u tasks", agents,
                                       agents == 1 ? "" : "s",
                                       c.agents.empty() ? "local" : absl::StrJoin(c.agents, ","),
                                       tpa, tpa == 1 ? "" : "s", agents * tpa));
  return absl::OkStatus();
}

void SplitOutputPath(const std::string& path, std::string* dir, std::string* file) {
  // Built by construction: GCC 12 at -O3 falsely warns (-Wrestrict) when a
  // short literal is assigned here (GCC bug 105329).
  const size_t slash = path.find_last_of('/');
  *dir = slash == std::string::npos ? std::string(1, '.')
         : slash == 0               ? std::string(1, '/')
                                    : path.substr(0, slash);
  *file = slash == std::string::npos ? path : path.substr(slash + 1);
}

HistoryRecording HistoryRecordingOf(const ParsedFlags& f) {
  return {.enabled = f.GetBool("history"),
          .db = f.GetString("db"),
          .site = f.GetString("site"),
          .tags = f.GetList("tag")};
}

void RecordRunInHistory(const ParsedFlags& f, const std::string& out_dir,
                        const RunOutcome& outcome, const std::string& program) {
  RecordRunInHistory(HistoryRecordingOf(f), out_dir, outcome, program);
}

void RecordRunInHistory(const HistoryRecording& h, const std::string& out_dir,
                        const RunOutcome& outcome, const std::string& program) {
  if (!h.enabled || outcome.run_dir.empty()) return;
  std::string db = h.db;
  if (db.empty()) db = out_dir + "/history.db";
  auto store = HistoryStore::Open(db);
  // run.json as written: outcome.record no longer holds the phases'
  // per-agent records (RunStore offloads them to keep memory bounded).
  // Passed as a view: a large run's run.json is tens of MB, and no copy is
  // needed.
  auto json = ReadFileToString(outcome.run_dir + "/run.json");
  absl::Status s = store.ok()
                       ? (*store)->Record(outcome.record, h.site, h.tags,
                                          json.ok() ? std::string_view(*json) : std::string_view())
                       : store.status();
  if (!s.ok()) {
    std::fprintf(stderr,
                 "%s: warning: run not recorded in history (%s); its files are in %s and "
                 "`lockstep import %s/run.json` records it later\n",
                 program.c_str(), std::string(s.message()).c_str(), outcome.run_dir.c_str(),
                 outcome.run_dir.c_str());
  }
}

}  // namespace lockstep
