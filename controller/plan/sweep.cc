#include "controller/plan/sweep.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "absl/strings/str_join.h"
#include "controller/plan/phase_kind.h"

namespace lockstep {
namespace {

using Copier = std::function<void(const PhasePlan&, PhasePlan*)>;

// Key -> what it sets in a PhasePlan: the shared keys, then each kind's
// (PhaseKindDef::SweptKeys). tasks_per_agent is resolved by
// Plan::TasksPerAgent; the stripe keys also carry set_stripe.
const std::vector<std::pair<std::string, Copier>>& Copiers() {
  static const auto* table = [] {
    auto* rows = new std::vector<std::pair<std::string, Copier>>{
      {"tasks_per_agent", [](const PhasePlan&, PhasePlan*) {}},
      {"file_per_process", [](const PhasePlan& f, PhasePlan* t) { t->file_per_process = f.file_per_process; }},
      {"transfer_size", [](const PhasePlan& f, PhasePlan* t) { t->transfer_bytes = f.transfer_bytes; }},
      {"block_size", [](const PhasePlan& f, PhasePlan* t) { t->block_bytes = f.block_bytes; }},
      {"total_size", [](const PhasePlan& f, PhasePlan* t) { t->total_bytes = f.total_bytes; }},
      {"segments", [](const PhasePlan& f, PhasePlan* t) { t->segments = f.segments; }},
      {"fsync", [](const PhasePlan& f, PhasePlan* t) { t->fsync = f.fsync; }},
      {"fsync_per_transfer",
       [](const PhasePlan& f, PhasePlan* t) { t->fsync_per_transfer = f.fsync_per_transfer; }},
      {"direct", [](const PhasePlan& f, PhasePlan* t) { t->direct = f.direct; }},
      {"random_offsets", [](const PhasePlan& f, PhasePlan* t) { t->random_offsets = f.random_offsets; }},
      {"stripe_count",
       [](const PhasePlan& f, PhasePlan* t) {
         t->stripe_count = f.stripe_count;
         t->set_stripe = f.set_stripe;
       }},
      {"stripe_size",
       [](const PhasePlan& f, PhasePlan* t) {
         t->stripe_size_bytes = f.stripe_size_bytes;
         t->set_stripe = f.set_stripe;
       }},
      {"object_size",
       [](const PhasePlan& f, PhasePlan* t) {
         t->object_size_bytes = f.object_size_bytes;
         t->set_stripe = f.set_stripe;
       }},
      {"stripe_index",
       [](const PhasePlan& f, PhasePlan* t) {
         t->stripe_index = f.stripe_index;
         t->set_stripe = f.set_stripe;
       }},
      {"checksums", [](const PhasePlan& f, PhasePlan* t) { t->checksums = f.checksums; }},
    };
    for (const PhaseKindDef* kind : AllKinds()) {
      for (SweptKey& k : kind->SweptKeys()) rows->emplace_back(k.key, std::move(k.copy));
    }
    return rows;
  }();
  return *table;
}

}  // namespace

const std::vector<std::string>& SweepableKeys() {
  static const auto* keys = [] {
    auto* k = new std::vector<std::string>;
    for (const auto& [key, copy] : Copiers()) k->push_back(key);
    return k;
  }();
  return *keys;
}

bool IsSweepableKey(const std::string& key) {
  const auto& k = SweepableKeys();
  return std::find(k.begin(), k.end(), key) != k.end();
}

void CopySweptKey(const std::string& key, const PhasePlan& from, PhasePlan* to) {
  for (const auto& [k, copy] : Copiers()) {
    if (k == key) copy(from, to);
  }
}

PhasePlan ResolvePhase(const Plan& plan, const PhasePlan& phase, uint32_t test) {
  // The values alone: the lists (one entry per test) are not copied.
  PhasePlan r;
  static_cast<PhaseValues&>(r) = static_cast<const PhaseValues&>(phase);
  if (!phase.points.empty()) {
    const PhasePlan& point = phase.points[std::min<size_t>(test, phase.points.size() - 1)];
    for (const PhaseSweep& s : phase.sweep) CopySweptKey(s.key, point, &r);
  }
  r.tasks_per_agent = {plan.TasksPerAgent(phase, test)};
  return r;
}

ResolvedPlan ResolvePlan(const Plan& plan) {
  ResolvedPlan out;
  out.tests.resize(plan.tests());
  for (uint32_t t = 0; t < plan.tests(); ++t) {
    out.tests[t].reserve(plan.phases.size());
    for (const PhasePlan& phase : plan.phases) out.tests[t].push_back(ResolvePhase(plan, phase, t));
  }
  return out;
}

void MarkSharedSweeps(Plan* plan) {
  // Key -> the phases that sweep it and their values.
  std::map<std::string, std::vector<PhaseSweep*>> by_key;
  for (PhasePlan& p : plan->phases) {
    for (PhaseSweep& s : p.sweep) by_key[s.key].push_back(&s);
  }
  for (auto& [key, all] : by_key) {
    const bool shared = all.size() == plan->phases.size() &&
                        std::all_of(all.begin(), all.end(), [&](const PhaseSweep* o) {
                          return o->values == all.front()->values;
                        });
    for (PhaseSweep* s : all) s->shared = shared;
  }
}

std::vector<v1::SweepValue> SweepValuesOf(const Plan& plan, uint32_t test) {
  std::vector<v1::SweepValue> out;
  if (plan.client_agents.size() > 1) {  // [run] client_agents: every phase's
    v1::SweepValue& v = out.emplace_back();
    v.set_key("client_agents");
    v.set_value(std::to_string(plan.ClientAgents(test)));
  }
  std::set<std::string> emitted;  // shared keys, once
  for (const PhasePlan& p : plan.phases) {
    for (const PhaseSweep& s : p.sweep) {
      if (s.shared && !emitted.insert(s.key).second) continue;
      v1::SweepValue& v = out.emplace_back();
      v.set_phase(s.shared ? "" : p.name);
      v.set_key(s.key);
      v.set_value(s.values[std::min<size_t>(test, s.values.size() - 1)]);
    }
  }
  return out;
}

std::string SweepLabel(const google::protobuf::RepeatedPtrField<v1::SweepValue>& sweep) {
  std::vector<std::string> parts;
  for (const v1::SweepValue& v : sweep) {
    parts.push_back((v.phase().empty() ? "" : v.phase() + ":") + v.key() + "=" + v.value());
  }
  return absl::StrJoin(parts, " ");
}

}  // namespace lockstep
