#include "controller/plan/plan_toml.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/names.h"
#include "controller/plan/phase_kind.h"

namespace lockstep {
namespace {

// [run]'s cache barrier (io500's drop-caches = TRUE sets it), where it is
// not the default.
void WriteCacheKeys(const Plan& plan, std::string* out) {
  if (plan.cache != "none") absl::StrAppendFormat(out, "cache = \"%s\"\n", plan.cache);
  if (plan.drop_mode != 3) absl::StrAppendFormat(out, "drop_mode = %u\n", plan.drop_mode);
  if (plan.cache_required) absl::StrAppend(out, "cache_required = true\n");
}

// A phase's own cache barrier, layout and client checksums, where set.
void WriteLayoutKeys(const PhasePlan& p, TomlLines* out) {
  if (!p.cache.empty()) out->String("cache", p.cache);
  if (p.set_stripe) {
    out->Int("stripe_count", p.stripe_count);
    out->Uint("stripe_size", p.stripe_size_bytes);
    if (p.stripe_index != -1) out->Int("stripe_index", p.stripe_index);
    if (!p.stripe_pool.empty()) out->String("stripe_pool", p.stripe_pool);
    out->Uint("object_size", p.object_size_bytes);
  }
  if (p.checksums != v1::CHECKSUMS_UNCHANGED) {
    out->BoolAlways("checksums", p.checksums == v1::CHECKSUMS_ON);
  }
}

}  // namespace

std::string PlanToToml(const Plan& plan) {
  std::string s = absl::StrFormat("# translated by lockstep\n[run]\nname = %s\nrepetitions = %u\nseed = %u\n",
                                  TomlQuoted(plan.name), plan.repetitions, plan.seed);
  WriteCacheKeys(plan, &s);
  for (const AgentPlan& a : plan.agents) {
    s += absl::StrFormat("\n[[agent]]\naddress = %s\nrole = \"%s\"\n", TomlQuoted(a.address),
                         RoleName(a.role));
  }
  for (const PhasePlan& p : plan.phases) {
    s += absl::StrFormat("\n[[phase]]\nname = %s\nkind = \"%s\"\n", TomlQuoted(p.name),
                         PhaseKindName(p.kind));
    TomlLines lines(&s);
    lines.String("dir", p.dir);
    lines.String("file_name", p.file_name);
    lines.UintAlways("tasks_per_agent", p.tasks_per_agent.empty() ? 1 : p.tasks_per_agent[0]);
    if (!p.file_names.empty()) lines.StringList("file_names", p.file_names);
    KindOf(p.kind).WriteToml(p, &lines);
    WriteLayoutKeys(p, &lines);
    if (!p.stonewall_count_from.empty()) lines.String("stonewall_count_from", p.stonewall_count_from);
  }
  return s;
}

absl::Status SetPlanText(Plan* plan, const std::string& tool) {
  plan->text = PlanToToml(*plan);
  absl::StatusOr<Plan> checked = ParsePlan(plan->text, "plan.toml");
  if (checked.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "these %s options make a plan that lockstep run refuses (%s); change the options it "
      "names",
      tool, checked.status().message()));
}

}  // namespace lockstep
