#include "controller/run/agent_endpoints.h"

#include <filesystem>
#include <set>
#include <string>

#include "absl/strings/str_format.h"
#include "common/net.h"
#include "common/tls.h"
#include "controller/plan/phase_kind.h"
#include "controller/run/agent_checks.h"

namespace lockstep {
namespace {

// The plan's absolute phase directories, as further allowed roots of the
// local agents (those below --local_root need none); relative ones go below
// the temporary root and must stay there (created by LocalAgents, except a
// command phase's, which its agent makes for the program's account).
RunError ExtraRoots(const Plan& plan, const std::string& local_root,
                    std::vector<std::string>* roots, std::vector<std::string>* relative) {
  std::set<std::string> extra, below;
  for (const PhasePlan& p : plan.phases) {
    const std::string dir = std::filesystem::path(p.dir).lexically_normal().string();
    if (!p.dir.empty() && p.dir[0] == '/') {
      // Below --local_root already (mdtest's -d, made by the agent): no root of its own.
      if (local_root.empty() || (dir != local_root && dir.rfind(local_root + "/", 0) != 0)) {
        extra.insert(dir);
      }
      continue;
    }
    if (dir == ".." || dir.rfind("../", 0) == 0) {
      return Fail(RunFailure::kBadPlan,
                  absl::StrFormat("phase '%s': dir \"%s\" climbs out of the local agents' root; "
                                  "with --local use an absolute dir, or --local_root DIR",
                                  p.name, p.dir));
    }
    // A directory the agent makes itself (a command's, owned by the account
    // its program runs as) is not made here.
    if (!KindOf(p.kind).AgentMakesDir() && !p.dir.empty() && dir != ".") below.insert(dir);
  }
  roots->assign(extra.begin(), extra.end());
  relative->assign(below.begin(), below.end());
  return {};
}

RunError StartLocalAgents(const Plan& plan, const RunOptions& options, int count,
                          AgentEndpoints* out) {
  LocalAgentsOptions lo;
  lo.count = count;
  lo.root = options.local_root;
  lo.named_roots = options.named_roots;
  if (RunError e = ExtraRoots(plan, options.local_root, &lo.extra_roots, &lo.relative_dirs)) {
    return e;
  }
  // The user runs both sides: the agents allow the plan's own programs.
  if (RunError e = LocalPrograms(plan, &lo.allow_commands)) return e;
  out->local_allow_commands = lo.allow_commands;
  auto started = LocalAgents::Start(lo);
  if (!started.ok()) return Fail(RunFailure::kConnect, std::string(started.status().message()));
  out->local = std::move(*started);
  for (const std::string& address : out->local->addresses()) {
    out->agents.push_back({address, v1::CLIENT});
  }
  return {};
}

}  // namespace

RunError ResolveAgentEndpoints(const Plan& plan, const RunOptions& options,
                               AgentEndpoints* out) {
  if (!options.agents.empty() && !plan.agents.empty()) {
    return Fail(RunFailure::kBadPlan,
                absl::StrFormat("%s lists its agents in [[agent]] tables and the command line "
                                "names agents too (--agents, --hostfile or --agents-from): "
                                "remove the tables or the flags",
                                plan.source));
  }
  if (!options.agents.empty() && options.local_agents > 0) {
    return Fail(RunFailure::kBadPlan,
                "--local cannot be combined with --agents, --hostfile or --agents-from");
  }
  out->agents = options.agents.empty() ? plan.agents : options.agents;
  out->tls_files = options.tls_files;
  int local = options.local_agents;
  if (local == 0 && out->agents.empty()) local = 2;
  bool insecure = options.insecure;
  if (local > 0) {
    out->agents.clear();
    if (RunError e = StartLocalAgents(plan, options, local, out)) return e;
    // TLS with this run's own certificates (LocalAgents): no other process
    // can drive them, even on loopback.
    out->tls_files = {};
    out->credentials = out->local->credentials();
    return {};
  }
  if (!insecure) {
    out->credentials = options.credentials;
    if (out->credentials) return {};
    return Fail(RunFailure::kBadPlan,
                "no TLS material: pass --tls_dir DIR (made by deploy/certs.sh), or --insecure "
                "for agents on loopback");
  }
  for (const AgentPlan& a : out->agents) {
    auto hp = SplitHostPort(a.address);
    if (!hp.ok() || !IsLoopbackHost(hp->first)) {
      return Fail(RunFailure::kBadPlan,
                  absl::StrFormat("--insecure is allowed only for loopback agents, and %s is "
                                  "not one: set up certificates (deploy/certs.sh) and pass "
                                  "--tls_dir",
                                  a.address));
    }
  }
  out->tls_files = {};
  out->credentials = grpc::InsecureChannelCredentials();
  return {};
}

}  // namespace lockstep
