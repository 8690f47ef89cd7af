#include "controller/cli/run_preview.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/files.h"
#include "common/fs_type.h"
#include "controller/cli/exit_codes.h"
#include "controller/cli/reach_agents.h"
#include "controller/plan/plan_smoke.h"
#include "controller/plan/sweep.h"

namespace lockstep {
namespace {

// Whether no [[agent]] table and no agent flag names an agent: the run
// starts local ones.
bool RunsLocally(const ParsedFlags& f, const Plan& plan) {
  if (f.GetUint("local") > 0) return true;
  return plan.agents.empty() && !f.Has("agents") && !f.Has("hostfile") && !f.Has("agents-from");
}

// The agents a dry run counts; InvalidArgument for an unreadable hostfile
// or --agents-from without --expect.
absl::StatusOr<DryRunAgents> CountAgents(const ParsedFlags& f, const Plan& plan) {
  DryRunAgents a;
  if (f.GetUint("local") > 0 || RunsLocally(f, plan)) {
    a.clients = f.GetUint("local") > 0 ? static_cast<uint32_t>(f.GetUint("local")) : 2;
    a.source = absl::StrFormat("--local %u", a.clients);
    return a;
  }
  if (!plan.agents.empty()) {
    for (const AgentPlan& p : plan.agents) (p.role == v1::CLIENT ? a.clients : a.servers)++;
    a.source = "the plan's [[agent]] tables";
    return a;
  }
  const char* unknown_roles = "roles are the agents' own: all counted as clients";
  if (f.Has("agents")) {
    a.clients = static_cast<uint32_t>(f.GetList("agents").size());
    a.source = absl::StrFormat("--agents; %s", unknown_roles);
    return a;
  }
  if (f.Has("hostfile")) {
    for (const std::string& path : f.GetList("hostfile")) {
      auto text = ReadPlanInput(path, "a hostfile");
      if (!text.ok()) return absl::InvalidArgumentError(std::string(text.status().message()));
      auto hosts = ParseHostfile(*text, path);
      if (!hosts.ok()) return hosts.status();
      a.clients += static_cast<uint32_t>(hosts->size());
    }
    a.source = absl::StrFormat("--hostfile; %s", unknown_roles);
    return a;
  }
  if (!f.Has("expect")) {
    return absl::InvalidArgumentError(
        "--dry-run with --agents-from cannot know how many agents will announce: give --expect N");
  }
  a.clients = static_cast<uint32_t>(f.GetUint("expect"));
  a.source = absl::StrFormat("--agents-from, --expect %u; %s", a.clients, unknown_roles);
  return a;
}

// Every test's phases: block × segments × tasks within 64-bit offsets
// (SplitAggregate's OutOfRange).
absl::Status CheckTestSizes(const Plan& plan, uint32_t clients) {
  for (uint32_t t = 0; t < plan.tests(); ++t) {
    const uint32_t c = plan.ClientAgents(t) > 0 ? std::min(plan.ClientAgents(t), clients) : clients;
    for (const PhasePlan& phase : plan.phases) {
      auto split = SplitAggregate(plan, ResolvePhase(plan, phase, t), t, c);
      if (!split.ok() && absl::IsOutOfRange(split.status())) return split.status();
    }
  }
  return absl::OkStatus();
}

}  // namespace

int DryRun(const ParsedFlags& f, const Plan& plan) {
  auto agents = CountAgents(f, plan);
  if (!agents.ok()) {
    std::fprintf(stderr, "lockstep run: %s\n", std::string(agents.status().message()).c_str());
    return kExitUsage;
  }
  if (agents->clients == 0) {
    std::fprintf(stderr,
                 "lockstep run: %s: no client agent: the plan's [[agent]] tables name only "
                 "servers; add a client (role = \"client\")\n",
                 plan.source.c_str());
    return kExitUsage;
  }
  // Sizes beyond 64 bits are refused as the run refuses them (its
  // CheckAggregates), not shown as a wrapped figure.
  if (absl::Status s = CheckTestSizes(plan, agents->clients); !s.ok()) {
    std::fprintf(stderr, "lockstep run: %s\n", std::string(s.message()).c_str());
    return kExitUsage;
  }
  DryRunOptions o;
  o.rate_mib_s = static_cast<double>(f.GetUint("rate_mib_s"));
  o.rate_ops_s = static_cast<double>(f.GetUint("rate_ops_s"));
  const std::string text = FormatDryRun(plan, *agents, o);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

void ApplySmoke(const ParsedFlags& f, Plan* plan) {
  SmokeOptions o;
  if (RunsLocally(f, *plan)) {
    const std::string root = f.GetString("local_root").empty() ? "/tmp" : f.GetString("local_root");
    o.lustre = FileSystemType(root) == "lustre";
    o.max_client_agents = f.GetUint("local") > 0 ? static_cast<uint32_t>(f.GetUint("local")) : 2;
  } else {
    o.lustre = true;  // the agents check their own directories
  }
  MakeSmokePlan(o, plan);
}

}  // namespace lockstep
