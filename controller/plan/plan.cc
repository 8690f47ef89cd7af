#include "controller/plan/plan.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/checked_math.h"
#include "common/files.h"
#include "common/names.h"
#include "common/net.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "common/text_escape.h"
#include "common/utf8.h"
#include "controller/plan/limits.h"
#include "controller/plan/phase_table.h"
#include "controller/plan/plan_bounds.h"
#include "controller/plan/sweep.h"
#include "controller/plan/table_reader.h"

#include <toml++/toml.h>

namespace lockstep {
namespace {

const std::vector<std::string> kTopKeys = {"run", "agent", "phase"};
const std::vector<std::string> kRunKeys = {
    "name",          "repetitions",     "connect_timeout_ms", "lease_ms",
    "progress_interval_ms", "seed",     "cache",              "drop_mode",
    "cache_required", "lustre_lru_clear", "max_start_skew_us", "on_skew",
    "max_clock_uncertainty_us", "on_clock", "on_agent_loss", "io_stall_timeout_ms",
    "client_agents", "push",   "push_credentials", "push_ca", "push_visibility"};
const std::vector<std::string> kAgentKeys = {"address", "role"};

// The TOML document; TOML++ throws on malformed text, caught here.
absl::StatusOr<toml::table> ParseToml(const std::string& text, const std::string& source) {
  try {
    return toml::parse(std::string_view(text), std::string(source));
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    return absl::InvalidArgumentError(absl::StrFormat("%s:%d:%d: malformed TOML: %s", source,
                                                      b.line, b.column,
                                                      std::string(e.description())));
  }
}

absl::Status CheckTopLevelKeys(const toml::table& root, const std::string& source) {
  for (const auto& [k, v] : root) {
    std::string key(k.str());
    if (std::find(kTopKeys.begin(), kTopKeys.end(), key) == kTopKeys.end()) {
      const auto& b = v.source().begin;
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s:%d:%d: unknown top-level key '%s'; valid: [run], [[agent]], [[phase]]", source,
          b.line, b.column, key));
    }
  }
  return absl::OkStatus();
}

// [run] client_agents: an integer, or a non-empty list (a sweep).
absl::Status ReadClientAgents(const TableReader& r, Plan* plan) {
  const toml::node* n = r.Get("client_agents");
  if (n == nullptr) return absl::OkStatus();
  std::vector<const toml::node*> values;
  if (const toml::array* a = n->as_array()) {
    if (a->empty()) return r.Error(*n, "client_agents", "the list is empty");
    for (const toml::node& e : *a) values.push_back(&e);
  } else {
    values.push_back(n);
  }
  for (const toml::node* e : values) {
    uint64_t v = 0;
    RETURN_IF_ERROR(r.UintNode(*e, "client_agents", 1, kMaxPlanAgents, &v));
    plan->client_agents.push_back(static_cast<uint32_t>(v));
  }
  return absl::OkStatus();
}

// [run]: the plan's settings.
absl::Status ParseRun(const toml::table& t, const std::string& source, Plan* plan) {
  TableReader r(t, source, "[run]", kRunKeys);
  RETURN_IF_ERROR(r.CheckUnknown());
  RETURN_IF_ERROR(r.String("name", &plan->name));
  plan->name = EscapeForTerminal(plan->name);  // shown everywhere: common/text_escape.h
  RETURN_IF_ERROR(r.Uint32("repetitions", 1, kMaxRepetitions, &plan->repetitions));
  RETURN_IF_ERROR(r.Uint32("connect_timeout_ms", kMinConnectTimeoutMs, kMaxConnectTimeoutMs,
                           &plan->connect_timeout_ms));
  RETURN_IF_ERROR(r.Uint32("lease_ms", kMinLeaseMs, kMaxLeaseMs, &plan->lease_ms));
  plan->lease_ms_given = t.contains("lease_ms");
  RETURN_IF_ERROR(r.Uint32("progress_interval_ms", kMinProgressIntervalMs,
                           kMaxProgressIntervalMs, &plan->progress_interval_ms));
  RETURN_IF_ERROR(r.Uint("seed", 0, kMaxSeed, &plan->seed));
  RETURN_IF_ERROR(r.OneOf("cache", {"none", "clients", "all"}, &plan->cache));
  RETURN_IF_ERROR(r.Uint32("drop_mode", 1, kMaxDropMode, &plan->drop_mode));
  RETURN_IF_ERROR(r.Bool("cache_required", &plan->cache_required));
  RETURN_IF_ERROR(r.Bool("lustre_lru_clear", &plan->lustre_lru_clear));
  RETURN_IF_ERROR(r.Uint32("max_start_skew_us", 0, kMaxSkewBoundUs, &plan->max_start_skew_us));
  RETURN_IF_ERROR(r.OneOf("on_skew", {"mark", "repeat", "fail"}, &plan->on_skew));
  RETURN_IF_ERROR(r.Uint32("max_clock_uncertainty_us", 0, kMaxSkewBoundUs,
                           &plan->max_clock_uncertainty_us));
  RETURN_IF_ERROR(r.OneOf("on_clock", {"warn", "fail"}, &plan->on_clock));
  RETURN_IF_ERROR(r.Uint32("io_stall_timeout_ms", 0, kMaxIoStallTimeoutMs,
                           &plan->io_stall_timeout_ms));
  RETURN_IF_ERROR(ReadClientAgents(r, plan));
  // Where `lockstep run` pushes the run at its end (read by the CLI from the
  // plan's text, controller/cli/push_command.h); checked here as strings.
  for (const char* key : {"push", "push_credentials", "push_ca", "push_visibility"}) {
    std::string ignored;
    RETURN_IF_ERROR(r.String(key, &ignored));
  }
  return r.OneOf("on_agent_loss", {"stop", "continue"}, &plan->on_agent_loss);
}

// One [[agent]]: a HOST:PORT listed once, and its role.
absl::Status ParseAgent(const toml::table& t, const std::string& source, int index, Plan* plan) {
  TableReader r(t, source, absl::StrFormat("[[agent]] #%d", index + 1), kAgentKeys);
  RETURN_IF_ERROR(r.CheckUnknown());
  AgentPlan a;
  RETURN_IF_ERROR(r.String("address", &a.address));
  if (a.address.empty()) return r.Missing("address", "add address = \"HOST:PORT\"");
  auto hp = SplitHostPort(a.address);
  if (!hp.ok()) return r.Error(*r.Get("address"), "address", std::string(hp.status().message()));
  if (hp->second == 0) return r.Error(*r.Get("address"), "address", "port 0 is not an agent's port");
  std::string role = "client";
  RETURN_IF_ERROR(r.String("role", &role));
  auto parsed = ParseRole(role);
  if (!parsed) {
    return r.Error(*r.Get("role"), "role",
                   absl::StrFormat("\"%s\" is not a role; use client, oss or mds", role));
  }
  a.role = *parsed;
  for (const AgentPlan& other : plan->agents) {
    if (other.address == a.address) {
      return r.Error(*r.Get("address"), "address",
                     absl::StrFormat("%s is listed twice; each agent once", a.address));
    }
  }
  plan->agents.push_back(a);
  return absl::OkStatus();
}

absl::Status ReadRunTable(const toml::table& root, const std::string& source, Plan* plan) {
  const toml::node* run = root.get("run");
  if (run == nullptr) return absl::OkStatus();
  if (!run->is_table()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: 'run' must be a table: write [run]", source));
  }
  return ParseRun(*run->as_table(), source, plan);
}

// The [[key]] tables of the plan, nullptr when it has none; `key` given as
// anything but an array of tables is an error.
absl::StatusOr<const toml::array*> TablesOf(const toml::table& root, const char* key,
                                            const std::string& source) {
  const toml::node* n = root.get(key);
  if (n == nullptr) return static_cast<const toml::array*>(nullptr);
  if (!n->is_array_of_tables()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s:%d: '%s' must be an array of tables: write [[%s]] for each %s", source,
        n->source().begin.line, key, key, key));
  }
  return n->as_array();
}

absl::Status ReadAgentTables(const toml::table& root, const std::string& source, Plan* plan) {
  ASSIGN_OR_RETURN(const toml::array* agents, TablesOf(root, "agent", source));
  if (agents == nullptr) return absl::OkStatus();
  int i = 0;
  for (const toml::node& a : *agents) RETURN_IF_ERROR(ParseAgent(*a.as_table(), source, i++, plan));
  return absl::OkStatus();
}

absl::Status ReadPhaseTables(const toml::table& root, const std::string& source, Plan* plan,
                             PhaseAgreement* agreement) {
  ASSIGN_OR_RETURN(const toml::array* phases, TablesOf(root, "phase", source));
  if (phases == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the plan has no [[phase]]; add at least one, e.g. [[phase]] name = \"w\" kind = "
        "\"write\" dir = \"/scratch/lockstep\"",
        source));
  }
  int i = 0;
  for (const toml::node& p : *phases) {
    RETURN_IF_ERROR(ParsePhase(*p.as_table(), source, i++, plan, agreement));
  }
  return absl::OkStatus();
}

// Repetitions: IOR repeats all phases of a test together (-i), so phases
// that set their own must agree with each other and with [run].
absl::Status AgreeOnRepetitions(const toml::table& root, const PhaseAgreement& agreement,
                                Plan* plan) {
  const bool run_sets_reps = root["run"]["repetitions"].is_integer();
  std::string first_name;
  uint64_t first_reps = 0;
  for (const auto& [name, reps] : agreement.repetitions) {
    if (first_name.empty()) {
      first_name = name;
      first_reps = reps;
    } else if (reps != first_reps) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: phase '%s' has repetitions = %u but phase '%s' has %u; a test repeats all its "
          "phases together (IOR -i): use one value, best in [run]",
          plan->source, name, reps, first_name, first_reps));
    }
  }
  if (first_name.empty()) return absl::OkStatus();
  if (run_sets_reps && first_reps != plan->repetitions) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: phase '%s' has repetitions = %u but [run] has %u; keep one of them", plan->source,
        first_name, first_reps, plan->repetitions));
  }
  plan->repetitions = static_cast<uint32_t>(first_reps);
  return absl::OkStatus();
}

// A plan without [run] name is named after its file: "scaling.toml" -> "scaling".
std::string NameFromSource(const std::string& source) {
  std::string base = source.substr(source.find_last_of('/') + 1);
  if (base.size() > 5 && base.substr(base.size() - 5) == ".toml") base.resize(base.size() - 5);
  return base.empty() ? "lockstep" : base;
}

// client_agents sweeps with the phases' lists (same length), and asks for no
// more clients than the [[agent]] tables list.
absl::Status CheckClientAgents(const toml::table& root, const Plan& plan) {
  if (plan.client_agents.empty()) return absl::OkStatus();
  const toml::node* n = root["run"]["client_agents"].node();
  const int line = n != nullptr ? n->source().begin.line : 0;
  size_t phase_sweep = 1;
  std::string owner;
  for (const PhasePlan& p : plan.phases) {
    const size_t len = std::max(p.tasks_per_agent.size(), p.points.size());
    if (len > phase_sweep) {
      phase_sweep = len;
      owner = p.name;
    }
  }
  if (plan.client_agents.size() > 1 && phase_sweep > 1 && plan.client_agents.size() != phase_sweep) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s:%d: [run] client_agents: a sweep of %u values, but phase '%s' sweeps %u; test i "
        "uses value i of every list, so give lists of the same length",
        plan.source, line, plan.client_agents.size(), owner, phase_sweep));
  }
  size_t clients = 0;
  for (const AgentPlan& a : plan.agents) clients += a.role == v1::CLIENT ? 1 : 0;
  const uint32_t most = *std::max_element(plan.client_agents.begin(), plan.client_agents.end());
  if (!plan.agents.empty() && most > clients) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s:%d: [run] client_agents asks for %u client agents, but the [[agent]] tables list "
        "%u; add agents or lower the value",
        plan.source, line, most, clients));
  }
  return absl::OkStatus();
}

absl::Status CheckClockBounds(const Plan& plan) {
  if (plan.max_clock_uncertainty_us > 0 && plan.max_start_skew_us > 0 &&
      plan.max_clock_uncertainty_us > plan.max_start_skew_us) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: max_clock_uncertainty_us = %u is larger than max_start_skew_us = %u: a skew bound "
        "tighter than the clocks' uncertainty cannot be checked; raise the skew bound or lower "
        "the uncertainty bound",
        plan.source, plan.max_clock_uncertainty_us, plan.max_start_skew_us));
  }
  return absl::OkStatus();
}

// The agents the phases need: a client at all, one client for intra-phase
// barriers, two agents to read another node's data.
absl::Status CheckAgentsForPhases(const Plan& plan) {
  size_t clients = 0;
  for (const AgentPlan& a : plan.agents) clients += a.role == v1::CLIENT ? 1 : 0;
  if (!plan.agents.empty() && clients == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: no [[agent]] has role = \"client\"; phases need at least one client to run tasks",
        plan.source));
  }
  for (const PhasePlan& p : plan.phases) {
    if (p.reorder_tasks && plan.agents.size() == 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: phase '%s' has reorder_tasks = true with one agent: the tasks would read their own "
          "node's data; list two or more client agents",
          plan.source, p.name));
    }
  }
  return absl::OkStatus();
}

}  // namespace

uint32_t Plan::tests() const {
  size_t n = std::max<size_t>(1, client_agents.size());
  for (const PhasePlan& p : phases) {
    n = std::max({n, p.tasks_per_agent.size(), p.points.size()});
  }
  return static_cast<uint32_t>(n);
}

uint32_t Plan::ClientAgents(uint32_t t) const {
  if (client_agents.empty()) return 0;
  return client_agents[std::min<size_t>(t, client_agents.size() - 1)];
}

uint32_t Plan::TasksPerAgent(const PhasePlan& p, uint32_t t) const {
  if (p.tasks_per_agent.empty()) return 1;
  if (p.tasks_per_agent.size() == 1) return p.tasks_per_agent[0];
  return p.tasks_per_agent[std::min<size_t>(t, p.tasks_per_agent.size() - 1)];
}

absl::StatusOr<AggregateSplit> SplitAggregate(const Plan& plan, const PhasePlan& p,
                                              uint32_t test, size_t client_agents) {
  const uint64_t tasks = uint64_t{plan.TasksPerAgent(p, test)} * std::max<size_t>(client_agents, 1);
  if (p.total_bytes == 0) {
    const std::optional<uint64_t> all = CheckedProduct({p.block_bytes, p.segments, tasks});
    if (!all || *all > kMaxFileOffsetBytes) {
      return absl::OutOfRangeError(absl::StrFormat(
          "%s: phase '%s' test %u: block_size %s x segments %u x %u tasks (%u client agent(s) "
          "x tasks_per_agent %u) is more than %s, the most a phase can address (64-bit file "
          "offsets); lower block_size, segments or the tasks",
          plan.source, p.name, test, HumanBytes(p.block_bytes), p.segments, tasks,
          std::max<size_t>(client_agents, 1), plan.TasksPerAgent(p, test),
          HumanBytes(kMaxFileOffsetBytes)));
    }
    return AggregateSplit{p.block_bytes, 0};
  }
  const uint64_t shares = tasks * std::max<uint64_t>(p.segments, 1);
  const uint64_t xfer = std::max<uint64_t>(p.transfer_bytes, 1);
  const uint64_t block = p.total_bytes / shares / xfer * xfer;
  if (block == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: phase '%s' test %u: total_size %s is smaller than %u tasks%s x transfer_size %s "
        "(%s): each task needs at least one transfer; raise total_size to %s or more, or use "
        "fewer tasks or a smaller transfer_size",
        plan.source, p.name, test, HumanBytes(p.total_bytes), tasks,
        p.segments > 1 ? absl::StrFormat(" x %u segments", p.segments) : "",
        HumanBytes(p.transfer_bytes), HumanBytes(shares * xfer), HumanBytes(shares * xfer)));
  }
  return AggregateSplit{block, p.total_bytes - block * shares};
}

std::string AggregateNote(const PhasePlan& p, uint32_t test, size_t tasks,
                          const AggregateSplit& split) {
  if (p.total_bytes == 0 || split.dropped_bytes == 0) return "";
  return absl::StrFormat(
      "phase '%s' test %u: total_size %s over %u tasks: block %s each, %u bytes (%s) not "
      "moved (the block is rounded down to a multiple of transfer_size %s)",
      p.name, test, HumanBytes(p.total_bytes), tasks, HumanBytes(split.block_bytes),
      split.dropped_bytes, HumanBytes(split.dropped_bytes), HumanBytes(p.transfer_bytes));
}

absl::StatusOr<Plan> ParsePlan(const std::string& text, const std::string& source) {
  Plan plan;
  plan.source = source;
  plan.text = text;
  ASSIGN_OR_RETURN(const toml::table root, ParseToml(text, source));
  RETURN_IF_ERROR(CheckPlanBounds(root, source));
  RETURN_IF_ERROR(CheckTopLevelKeys(root, source));
  RETURN_IF_ERROR(ReadRunTable(root, source, &plan));
  RETURN_IF_ERROR(ReadAgentTables(root, source, &plan));
  PhaseAgreement agreement;
  RETURN_IF_ERROR(ReadPhaseTables(root, source, &plan, &agreement));
  RETURN_IF_ERROR(AgreeOnRepetitions(root, agreement, &plan));
  MarkSharedSweeps(&plan);
  if (plan.name.empty()) plan.name = NameFromSource(source);
  RETURN_IF_ERROR(CheckClockBounds(plan));
  RETURN_IF_ERROR(CheckAgentsForPhases(plan));
  RETURN_IF_ERROR(CheckClientAgents(root, plan));
  RETURN_IF_ERROR(CheckPhaseRuns(plan));
  return plan;
}

absl::StatusOr<Plan> LoadPlan(const std::string& path) {
  auto text = ReadPlanInput(path, "a plan file");
  if (!text.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat("cannot read plan: %s",
                                                      std::string(text.status().message())));
  }
  return ParsePlan(*text, path);
}

absl::StatusOr<std::string> ReadPlanInput(const std::string& path, const char* what) {
  absl::StatusOr<std::string> text = ReadFileAtMost(path, kMaxPlanFileBytes, what);
  if (!text.ok()) return text;
  // Its values end in a plan text, the record and the wire, all UTF-8: a
  // byte that is not is refused here, where its line can still be named.
  if (const size_t bad = FirstNonUtf8(*text); bad != std::string::npos) {
    const size_t newline = bad == 0 ? std::string::npos : text->rfind('\n', bad - 1);
    const size_t column = newline == std::string::npos ? bad + 1 : bad - newline;
    const auto line = 1 + std::count(text->begin(), text->begin() + bad, '\n');
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s:%d:%d: byte 0x%02x is not UTF-8; %s is read as UTF-8 text: save it as UTF-8 "
        "(iconv -t UTF-8)",
        path, line, column, static_cast<unsigned char>((*text)[bad]), what));
  }
  return text;
}

}  // namespace lockstep
