#include "controller/run/agent_setup.h"

#include <map>
#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/errors.h"
#include "common/names.h"
#include "common/tls_inspect.h"
#include "common/wire_version.h"
#include "controller/run/agent_client.h"
#include "controller/run/agent_text.h"
#include "controller/run/bounded_parallel.h"
#include "controller/run/clock_sync.h"
#include "controller/run/host_clocks.h"

namespace lockstep {

// Connects to all at once: the slowest decides, not the sum.
RunError AgentSetUp::Connect() {
  const std::vector<absl::Status> connected =
      ConnectAll(roster.all(), absl::Milliseconds(plan.connect_timeout_ms),
                 {.interrupted = options.interrupted}, kMaxAgentWorkThreads);
  if (interrupted()) return Fail(RunFailure::kInterrupted, "interrupted while connecting");
  std::vector<std::string> unreachable;
  for (size_t i = 0; i < roster.size(); ++i) {
    v1::AgentRecord* ar = record.add_agents();
    ar->set_address(roster.at(i)->address());
    ar->set_role(roster.at(i)->role());
    ar->set_status(connected[i].ok() ? "ok" : "unreachable");
    if (!connected[i].ok()) {
      ar->set_error(std::string(connected[i].message()));
      unreachable.push_back(std::string(connected[i].message()));
    }
  }
  if (unreachable.empty()) return {};
  // A fleet mostly down: the first ones say why, run.json has every agent's.
  constexpr size_t kNamed = 20;
  if (unreachable.size() > kNamed) {
    const size_t more = unreachable.size() - kNamed;
    unreachable.resize(kNamed);
    unreachable.push_back(absl::StrFormat(
        "... and %d more of the %d agents (run.json's agents give each one's error)", more,
        roster.size()));
  }
  return Fail(RunFailure::kConnect, absl::StrJoin(unreachable, "\n"));
}

RunError AgentSetUp::Attach(const std::string& controller_name) {
  std::vector<v1::AttachRequest> requests(roster.size());
  for (auto& r : requests) {
    r.set_run_id(record.run_id());
    r.set_controller(controller_name);
    r.set_lease_ms(lease_ms);
    SetWireVersion(&r);
  }
  const CallWatch watch{nullptr, options.interrupted};
  auto replies = FanOut<v1::AttachRequest, v1::AttachReply>(roster.all(), requests, kRpcTimeout,
                                                            LOCKSTEP_ASYNC(Attach), &watch);
  std::vector<std::string> refused;
  bool version_mismatch = false;
  for (size_t i = 0; i < roster.size(); ++i) {
    AgentClient* agent = roster.at(i);
    v1::AgentRecord* ar = record.mutable_agents(static_cast<int>(i));
    absl::Status s = replies[i].status();
    if (s.ok()) {
      // Sessions taken are released at detach even when refused below.
      agent->session_id = replies[i]->session_id();
      EscapeAgentText(replies[i]->mutable_facts());  // controller/run/agent_text.h
      agent->facts = replies[i]->facts();
      *ar->mutable_facts() = replies[i]->facts();  // run.json: every agent's versions
      s = CheckAgentWireVersion(agent->facts, agent->address());
    } else if (KindOf(s) == v1::BUSY && absl::StrContains(s.message(), record.run_id())) {
      // Busy with this very run: the list names one agent twice.
      return Fail(RunFailure::kBadPlan,
                  absl::StrFormat("%s is already attached to this run under another name: "
                                  "the same agent listed twice; list each agent once (%s)",
                                  agent->address(), s.message()));
    }
    if (!s.ok()) {
      version_mismatch |= KindOf(s) == v1::VERSION_MISMATCH;
      ar->set_status("refused");
      ar->set_error(std::string(s.message()));
      refused.push_back(std::string(s.message()));
      continue;
    }
    if (agent->role() == v1::ROLE_UNSPECIFIED) {
      // --agents/--hostfile: the agent says what it is (its --role).
      agent->set_role(replies[i]->facts().role());
      ar->set_role(agent->role());
    } else if (replies[i]->facts().role() != agent->role()) {
      refused.push_back(absl::StrFormat(
          "agent %s runs with role %s but the plan says %s; fix the plan or the agent's --role",
          agent->address(), RoleName(replies[i]->facts().role()), RoleName(agent->role())));
    }
  }
  if (interrupted()) return Fail(RunFailure::kInterrupted, "interrupted while attaching");
  if (!refused.empty()) {
    return Fail(version_mismatch ? RunFailure::kVersion : RunFailure::kConnect,
                absl::StrJoin(refused, "\n"));
  }
  return CheckAttached();
}

// One process listed twice under two names (an alias, an IP and a name)
// would get two shares of every phase: refused. Agent certificates that
// expire soon are warned about, naming the agent.
RunError AgentSetUp::CheckAttached() {
  std::map<std::string, std::string> by_instance;
  for (size_t i = 0; i < roster.size(); ++i) {
    const AgentClient* agent = roster.at(i);
    const std::string& instance = agent->facts.agent_instance();
    if (instance.empty()) continue;
    auto [it, fresh] = by_instance.emplace(instance, agent->address());
    if (!fresh) {
      return Fail(RunFailure::kBadPlan,
                  absl::StrFormat("%s and %s are the same agent (host %s, pid %u) listed twice "
                                  "under two names: list each agent once",
                                  it->second, agent->address(), agent->facts.hostname(),
                                  agent->facts.pid()));
    }
    auto not_after = agent->facts.extra().find("tls_cert_not_after");
    absl::Time t;
    std::string err;
    if (not_after != agent->facts.extra().end() &&
        absl::ParseTime(absl::RFC3339_full, not_after->second, &t, &err) &&
        t - absl::Now() < kCertExpiryWarning) {
      events.Note(absl::StrFormat(
          "warning: agent %s: its certificate expires on %s: issue a new one (lockstep certs "
          "issue --dir DIR --agent %s --force) and restart the agent",
          agent->address(), not_after->second, agent->facts.hostname()));
    }
  }
  return {};
}

// Maps every agent timestamp into our time base; re-measured before every
// test so that drift over a long run stays small. Lost agents keep their
// last estimate.
RunError AgentSetUp::MeasureClocks() {
  std::vector<absl::StatusOr<ClockEstimate>> estimates(roster.size(), ClockEstimate{});
  BoundedParallelFor(roster.size(), kMaxAgentWorkThreads, [&](size_t i) {
    if (!roster.IsLost(roster.at(i))) estimates[i] = EstimateClock(roster.at(i), 8);
  });
  std::vector<std::string> clock_ids(roster.size());
  std::vector<std::optional<ClockEstimate>> measured(roster.size());
  for (size_t i = 0; i < roster.size(); ++i) {
    if (roster.IsLost(roster.at(i))) continue;
    if (!estimates[i].ok()) {
      return Fail(RunFailure::kAgentLost, std::string(estimates[i].status().message()));
    }
    clock_ids[i] = roster.at(i)->facts.clock_id();
    measured[i] = *estimates[i];
  }
  // Agents of one host read one clock: one offset for them all.
  const std::vector<std::optional<HostClockShare>> shares = ShareHostClocks(clock_ids, measured);
  std::vector<std::string> bad;
  for (size_t i = 0; i < roster.size(); ++i) {
    if (!shares[i]) continue;
    const ClockEstimate& c = shares[i]->shared;
    estimates[i] = c;
    v1::ClockEstimate* ce = record.mutable_agents(static_cast<int>(i))->mutable_clock();
    ce->set_offset_ns(c.offset_ns);
    ce->set_delay_ns(c.delay_ns);
    ce->set_uncertainty_ns(c.delay_ns / 2);
    ce->set_samples(c.samples);
    ce->set_measured_offset_ns(shares[i]->measured_offset_ns);
    ce->set_host_clock_agents(shares[i]->agents);
    const int64_t bound_ns = int64_t{plan.max_clock_uncertainty_us} * 1000;
    if (bound_ns > 0 && c.delay_ns / 2 > bound_ns) {
      bad.push_back(absl::StrFormat(
          "agent %s: clock offset uncertainty %.1f us (half the best of %u round trips of %.1f "
          "us) exceeds max_clock_uncertainty_us = %u; the network is too slow or loaded for "
          "that bound",
          roster.at(i)->address(), c.delay_ns / 2e3, c.samples, c.delay_ns / 1e3,
          plan.max_clock_uncertainty_us));
    }
  }
  for (size_t i = 0; i < roster.size(); ++i) {
    if (!roster.IsLost(roster.at(i))) roster.set_clock(i, *estimates[i]);
  }
  if (bad.empty()) return {};
  if (plan.on_clock == "fail") return Fail(RunFailure::kConnect, absl::StrJoin(bad, "\n"));
  for (const std::string& b : bad) events.Note("warning: " + b);
  return {};
}

}  // namespace lockstep
