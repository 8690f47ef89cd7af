#include "controller/cli/agents_command.h"

#include <cstdio>
#include <filesystem>
#include <limits>
#include <set>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "common/names.h"
#include "common/net.h"
#include "common/sizes.h"
#include "common/text_escape.h"
#include "controller/cli/command_specs.h"
#include "controller/cli/exit_codes.h"
#include "controller/cli/reach_agents.h"
#include "controller/plan/plan.h"
#include "controller/run/agent_client.h"
#include "controller/run/bounded_parallel.h"
#include "controller/run/fd_limit.h"

namespace lockstep {
namespace {

constexpr int kClockSamples = 5;
constexpr size_t kParallelProbes = 64;  // threads asking agents at once

struct Probe {
  std::string address;
  absl::Status status;
  v1::HostFacts facts;
  int64_t offset_ns = 0;  // agent clock - ours, from the fastest round trip
  int64_t rtt_ns = std::numeric_limits<int64_t>::max();
};

// Asks a connected agent Identify kClockSamples times (NTP's arithmetic
// with T2 = T3 = the agent's clock reading).
void AskAgent(AgentClient* agent, absl::Duration timeout, Probe* out) {
  for (int i = 0; i < kClockSamples; ++i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
    v1::IdentifyRequest request;
    v1::HostFacts facts;
    const int64_t t1 = RealtimeNs();
    grpc::Status s = agent->stub()->Identify(&ctx, request, &facts);
    const int64_t t4 = RealtimeNs();
    if (!s.ok()) {
      out->status = FromGrpcStatus(s, agent->address());
      return;
    }
    if (absl::Status role = agent->CheckAgentRole(ctx); !role.ok()) {
      out->status = Annotate(role, agent->address());
      return;
    }
    if (t4 - t1 < out->rtt_ns) {
      out->rtt_ns = t4 - t1;
      out->offset_ns = facts.agent_unix_ns() - (t1 + (t4 - t1) / 2);
      out->facts = std::move(facts);
    }
  }
}

std::string Roots(const v1::HostFacts& facts) {
  std::vector<std::string> out;
  for (const v1::RootFacts& r : facts.roots()) {
    out.push_back(absl::StrFormat("%s (%s, %s free)", r.path(), r.fs_type(),
                                  HumanBytes(r.free_bytes())));
  }
  return out.empty() ? "-" : absl::StrJoin(out, " ");
}

std::string Line(const Probe& p) {
  if (!p.status.ok()) return absl::StrFormat("%-22s  NOT ANSWERING: %s", p.address, p.status.message());
  const v1::HostFacts& f = p.facts;
  auto cert = f.extra().find("tls_cert_not_after");
  return absl::StrFormat(
      "%-22s  %-6s  %-10s  %-16s  %3u  %9s  %-6s  %+9.3f ms ±%.3f  %-10s  %s", p.address,
      RoleName(f.role()), absl::StrFormat("%s/w%u", f.agent_version(), f.wire_version()),
      f.hostname(), f.cores(), HumanBytes(f.memory_bytes()), f.can_drop_caches() ? "yes" : "no",
      p.offset_ns / 1e6, p.rtt_ns / 2e6,
      cert == f.extra().end() ? "-" : cert->second.substr(0, 10), Roots(f));
}

// "  commands: /usr/bin/tar, /usr/bin/make as nobody" under an agent that
// allows command phases; "" otherwise.
std::string CommandsLine(const Probe& p) {
  const v1::HostFacts& f = p.facts;
  if (!p.status.ok() || f.allowed_commands_size() == 0) return "";
  return absl::StrFormat("  commands: %s as %s\n",
                         EscapeForTerminal(absl::StrJoin(f.allowed_commands(), ", ")),
                         EscapeForTerminal(f.command_user().empty() ? "(no account)"
                                                                    : f.command_user()));
}

}  // namespace

int AgentsCommand(const std::vector<std::string>& args, const std::atomic<bool>* interrupted) {
  const CommandSpec& spec = AgentsCommandSpec();
  auto flags = ParseFlags(args, spec);
  if (auto code = HelpOrUsageExit(spec, flags)) return *code;
  const ParsedFlags& f = *flags;
  auto bad = [](const std::string& why) {
    std::fprintf(stderr, "lockstep agents: %s\n", why.c_str());
    return kExitUsage;
  };
  if (!f.positional().empty()) return bad("takes no arguments, only flags (see --help)");
  auto agents = AgentsFromFlags(f, absl::Seconds(5), interrupted);
  if (!agents.ok()) {
    std::fprintf(stderr, "lockstep agents: %s\n", std::string(agents.status().message()).c_str());
    return absl::IsDeadlineExceeded(agents.status()) ? kExitConnect : kExitUsage;
  }
  if (agents->empty()) return bad("which agents? give --agents, --hostfile or --agents-from");
  std::shared_ptr<grpc::ChannelCredentials> creds;
  const TlsFiles files = f.GetBool("insecure") ? TlsFiles{} : TlsFilesFromFlags(f);
  if (f.GetBool("insecure")) {
    for (const AgentPlan& a : *agents) {
      if (!IsLoopbackHost(a.address)) {
        return bad(absl::StrFormat("--insecure is allowed only for loopback agents, and %s is "
                                   "not one: pass --tls_dir",
                                   a.address));
      }
    }
    creds = grpc::InsecureChannelCredentials();
  } else {
    if (files.ca_pem.empty()) return bad("no TLS material: pass --tls_dir DIR, or --insecure for loopback agents");
    auto made = ControllerCredentials(files);
    if (!made.ok()) return bad(std::string(made.status().message()));
    creds = *made;
  }
  // A connection (a descriptor) per agent, as a run holds them.
  if (absl::Status fds = EnsureFileLimit(agents->size()); !fds.ok()) {
    std::fprintf(stderr, "lockstep agents: %s\n", std::string(fds.message()).c_str());
    return kExitConnect;
  }
  std::vector<std::unique_ptr<AgentClient>> clients;
  for (const AgentPlan& a : *agents) {
    clients.push_back(std::make_unique<AgentClient>(a.address, a.role, creds, files));
  }
  // All connect at once: a refused or unreachable address, or a failed
  // handshake, fails at once with its cause; only silence waits for the
  // timeout, once for all.
  const absl::Duration timeout = absl::Milliseconds(f.GetUint("timeout_ms"));
  std::vector<AgentClient*> all;
  for (const auto& c : clients) all.push_back(c.get());
  const std::vector<absl::Status> connected =
      ConnectAll(all, timeout,
                 {.fail_fast = true, .interrupted = interrupted, .timeout_setting = "--timeout_ms"},
                 kParallelProbes);
  std::vector<Probe> probes(clients.size());
  BoundedParallelFor(clients.size(), kParallelProbes, [&](size_t i) {
    probes[i].address = clients[i]->address();
    probes[i].status = connected[i];
    if (connected[i].ok()) AskAgent(clients[i].get(), timeout, &probes[i]);
  });
  std::printf("%-22s  %-6s  %-10s  %-16s  %3s  %9s  %-6s  %-21s  %-10s  %s\n", "AGENT", "ROLE",
              "VERSION", "HOST", "CPU", "MEMORY", "CACHES", "CLOCK OFFSET ± UNCERT", "CERT UNTIL",
              "ROOTS");
  size_t answered = 0;
  std::set<std::string> versions;
  for (const Probe& p : probes) {
    // An agent's facts are its to say: escaped, so that a hostname or a root
    // with terminal controls cannot rewrite the screen.
    std::printf("%s\n%s", EscapeForTerminal(Line(p)).c_str(), CommandsLine(p).c_str());
    if (p.status.ok()) {
      ++answered;
      versions.insert(absl::StrFormat("%s/w%u", p.facts.agent_version(), p.facts.wire_version()));
    }
  }
  std::printf("%zu of %zu agents answered; versions: %s (this controller: %s)\n", answered,
              probes.size(), versions.empty() ? "-" : absl::StrJoin(versions, ", ").c_str(),
              LOCKSTEP_VERSION);
  return answered == probes.size() ? kExitOk : kExitConnect;
}

int CheckCommand(const std::vector<std::string>& args) {
  const CommandSpec& spec = CheckCommandSpec();
  auto flags = ParseFlags(args, spec);
  if (auto code = HelpOrUsageExit(spec, flags)) return *code;
  if (flags->positional().size() != 1) {
    std::fprintf(stderr, "lockstep check: give one PLAN.toml\n%s", FormatUsage(spec).c_str());
    return kExitUsage;
  }
  auto plan = LoadPlan(flags->positional()[0]);
  if (!plan.ok()) {
    std::fprintf(stderr, "lockstep check: %s\n", std::string(plan.status().message()).c_str());
    return kExitUsage;
  }
  std::set<std::string> dirs;
  for (const PhasePlan& p : plan->phases) {
    if (flags->GetBool("dirs") && (p.dir.empty() || p.dir[0] != '/')) {
      std::fprintf(stderr,
                   "lockstep check: %s: phase '%s' has the relative dir \"%s\": it lies below "
                   "the agents' roots, which the plan cannot name; give the agents --root\n",
                   plan->source.c_str(), p.name.c_str(), p.dir.c_str());
      return kExitUsage;
    }
    std::string dir = std::filesystem::path(p.dir).lexically_normal().string();
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    dirs.insert(dir);
  }
  if (flags->GetBool("dirs")) {
    for (const std::string& d : dirs) std::printf("%s\n", d.c_str());
    return kExitOk;
  }
  const std::string agents =
      plan->agents.empty() ? "no [[agent]] tables (agents from the command line, or local)"
                           : absl::StrFormat("%zu agent(s)", plan->agents.size());
  std::printf("%s: valid: %u test(s) x %u repetition(s), %zu phase(s), %s\n",
              plan->source.c_str(), plan->tests(), plan->repetitions, plan->phases.size(),
              agents.c_str());
  for (const PhasePlan& p : plan->phases) {
    std::printf("  phase %-16s %-12s dir %s\n", p.name.c_str(), PhaseKindName(p.kind), p.dir.c_str());
  }
  return kExitOk;
}

}  // namespace lockstep
