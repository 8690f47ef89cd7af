#include "controller/plan/plan_smoke.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/checked_math.h"
#include "common/names.h"
#include "common/sizes.h"
#include "controller/plan/phase_kind.h"
#include "controller/plan/sweep.h"
#include "controller/plan/kinds/mdtest_plan.h"

namespace lockstep {
namespace {

// ---- smoke ------------------------------------------------------------------

class Capper : public SmokeCapper {
 public:
  Capper(Plan* plan, const PhasePlan* phase) : plan_(plan), phase_(phase) {}

  // value = min(value, cap), noting "phase P: KEY FROM -> TO".
  void Bytes(const char* key, uint64_t cap, uint64_t* value) override {
    if (*value <= cap) return;
    Note(key, HumanBytes(*value), HumanBytes(cap));
    *value = cap;
  }
  void Count(const char* key, uint64_t cap, uint64_t* value) override { CountOf(key, cap, value); }
  void Count(const char* key, uint32_t cap, uint32_t* value) override { CountOf(key, cap, value); }
  void Count(const char* key, double cap, double* value) override { CountOf(key, cap, value); }
  template <typename T>
  void CountOf(const char* key, T cap, T* value) {
    if (*value <= cap) return;
    Note(key, absl::StrCat(*value), absl::StrCat(cap));
    *value = cap;
  }
  void Note(const char* key, const std::string& from, const std::string& to) override {
    Add(absl::StrFormat("%s: %s %s -> %s", Where(), key, from, to));
  }
  void Dropped(const std::string& what, const std::string& why) override {
    Add(absl::StrFormat("%s: %s left out (%s)", Where(), what, why));
  }

 private:
  // Once each: a sweep's points repeat their phase's values.
  void Add(const std::string& line) {
    std::vector<std::string>& c = plan_->smoke_changes;
    if (std::find(c.begin(), c.end(), line) == c.end()) c.push_back(line);
  }

  std::string Where() const {
    return phase_ == nullptr ? "[run]" : absl::StrCat("phase ", phase_->name);
  }
  Plan* plan_;
  const PhasePlan* phase_;
};

void SmokePhase(const SmokeOptions& o, Plan* plan, PhasePlan* p) {
  Capper c(plan, p);
  for (uint32_t& tpa : p->tasks_per_agent) c.Count("tasks_per_agent", o.max_tasks_per_agent, &tpa);
  c.Bytes("transfer_size", o.max_bytes, &p->transfer_bytes);
  if (p->block_bytes > o.max_bytes) {
    // A block stays a whole number of transfers.
    const uint64_t cap = std::max(p->transfer_bytes, o.max_bytes / p->transfer_bytes * p->transfer_bytes);
    c.Bytes("block_size", cap, &p->block_bytes);
  }
  if (p->block_bytes > 0) {
    c.Count("segments", std::max<uint64_t>(1, o.max_bytes / p->block_bytes), &p->segments);
  }
  if (p->total_bytes > 0) {
    // total_size: at most the cap per task of one agent (fewer with more agents).
    uint32_t most_tasks = 1;
    for (uint32_t tpa : p->tasks_per_agent) most_tasks = std::max(most_tasks, tpa);
    c.Bytes("total_size", o.max_bytes * most_tasks, &p->total_bytes);
  }
  KindOf(p->kind).CapForSmoke(o, &c, p);
  c.Count("stonewall_seconds", o.max_stonewall_seconds, &p->stonewall_seconds);
  c.Count("delay_seconds", uint32_t{0}, &p->delay_seconds);
  if (o.lustre) return;
  if (p->set_stripe) {
    c.Dropped("striping (stripe_count/stripe_size/stripe_index/stripe_pool/object_size)",
              "the directories are not on Lustre");
    p->set_stripe = false;
  }
  if (p->checksums != v1::CHECKSUMS_UNCHANGED) {
    c.Dropped(absl::StrCat("checksums = ", p->checksums == v1::CHECKSUMS_ON ? "true" : "false"),
              "the directories are not on Lustre");
    p->checksums = v1::CHECKSUMS_UNCHANGED;
  }
}

// ---- dry run ----------------------------------------------------------------

PhaseEstimate EstimatePhase(const Plan& plan, const PhasePlan& p, uint32_t test,
                            uint32_t clients, const DryRunOptions& o) {
  PhaseEstimate e;
  const uint32_t tpa = plan.TasksPerAgent(p, test);
  e.tasks = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{tpa} * clients, UINT32_MAX));
  KindOf(p.kind).Estimate(plan, p, test, clients, &e);
  const double bytes = static_cast<double>(e.bytes_per_task) * e.tasks;
  const double ops = static_cast<double>(e.ops_per_task) * e.tasks;
  e.seconds = e.ops_rate_only ? ops / o.rate_ops_s
                              : bytes / (o.rate_mib_s * 1048576.0) + ops / o.rate_ops_s;
  if (e.timed_seconds > 0) e.seconds = e.timed_seconds;
  const uint32_t wall = std::max(p.stonewall_seconds, p.Own<MdtestPlan>().md_stonewall_seconds);
  if (wall > 0 && e.seconds > wall) {
    e.seconds = wall;
    e.note = absl::StrFormat("stonewall %u s: ends it sooner, the bytes an upper bound", wall);
  }
  return e;
}

std::string Duration(double s) {
  if (s < 120) return absl::StrFormat("%.1f s", s);
  if (s < 7200) return absl::StrFormat("%.1f min", s / 60);
  return absl::StrFormat("%.1f h", s / 3600);
}

}  // namespace

void MakeSmokePlan(const SmokeOptions& options, Plan* plan) {
  plan->smoke = true;
  Capper run(plan, nullptr);
  run.Count("repetitions", uint32_t{1}, &plan->repetitions);
  if (options.max_client_agents > 0) {
    for (uint32_t& n : plan->client_agents) {
      run.Count("client_agents", options.max_client_agents, &n);
    }
  }
  if (!options.lustre && plan->lustre_lru_clear) {
    run.Dropped("lustre_lru_clear", "the directories are not on Lustre");
    plan->lustre_lru_clear = false;
  }
  for (PhasePlan& p : plan->phases) {
    SmokePhase(options, plan, &p);
    // A sweep's tests run its points (controller/plan/sweep.h).
    for (PhasePlan& point : p.points) {
      point.name = p.name;
      SmokePhase(options, plan, &point);
    }
  }
}

std::string FormatDryRun(const Plan& plan, const DryRunAgents& agents,
                         const DryRunOptions& options) {
  std::string out = absl::StrFormat(
      "dry run of %s: nothing is sent to any agent, no file is touched\n"
      "agents: %u client(s), %u server(s) (%s)\n"
      "%u test(s) x %u repetition(s); estimates at %.0f MiB/s and %.0f metadata ops/s\n",
      plan.source, agents.clients, agents.servers, agents.source, plan.tests(), plan.repetitions,
      options.rate_mib_s, options.rate_ops_s);
  if (plan.smoke) {
    out += "smoke plan (--smoke): sizes capped, one repetition:\n";
    for (const std::string& c : plan.smoke_changes) out += "  " + c + "\n";
  }
  double total_bytes = 0, total_s = 0;
  uint64_t phases = 0;
  for (uint32_t t = 0; t < plan.tests(); ++t) {
    const uint32_t clients =
        plan.ClientAgents(t) > 0 ? std::min(plan.ClientAgents(t), agents.clients) : agents.clients;
    absl::StrAppendFormat(&out, "test %u: %u client agent(s), %u task(s) per agent%s\n", t,
                          clients, plan.TasksPerAgent(plan.phases.front(), t),
                          plan.ClientAgents(t) > agents.clients
                              ? absl::StrFormat(" (client_agents asks for %u: the run would "
                                                "refuse this test)",
                                                plan.ClientAgents(t))
                              : "");
    for (const PhasePlan& phase : plan.phases) {
      const PhasePlan p = ResolvePhase(plan, phase, t);
      const PhaseEstimate e = EstimatePhase(plan, p, t, clients, options);
      // Saturated: the run refuses what does not fit (SplitAggregate).
      const uint64_t per_agent = SaturatingMul(e.bytes_per_task, plan.TasksPerAgent(p, t));
      const uint64_t all = SaturatingMul(e.bytes_per_task, e.tasks);
      absl::StrAppendFormat(
          &out, "  %-18s %-11s %5u tasks  %10s/agent  %10s in all  %8llu files  ~%s%s\n",
          p.name, PhaseKindName(p.kind), e.tasks, HumanBytes(per_agent), HumanBytes(all),
          static_cast<unsigned long long>(e.files), Duration(e.seconds),
          e.note.empty() ? "" : absl::StrCat("  (", e.note, ")"));
      total_bytes += static_cast<double>(all) * plan.repetitions;
      total_s += e.seconds * plan.repetitions;
      phases += plan.repetitions;
    }
  }
  absl::StrAppendFormat(&out,
                        "total: %llu phase runs, %s moved, ~%s of I/O (plus set-up, cache "
                        "barriers and removal)\n",
                        static_cast<unsigned long long>(phases),
                        HumanBytes(static_cast<uint64_t>(total_bytes)), Duration(total_s));
  return out;
}

}  // namespace lockstep
