#include "controller/results/report_labels.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/sizes.h"
#include "controller/plan/sweep.h"

namespace lockstep {
namespace {

// The sorted distinct values of one agent fact over a run's agents.
std::string AgentFact(const v1::RunRecord& r,
                      const std::function<std::string(const v1::HostFacts&)>& fact) {
  std::set<std::string> values;
  for (const auto& a : r.agents()) {
    std::string v = fact(a.facts());
    if (!v.empty()) values.insert(std::move(v));
  }
  return absl::StrJoin(values, "+");
}

std::string FsTypes(const v1::HostFacts& f) {
  std::set<std::string> types;
  for (const auto& root : f.roots()) types.insert(root.fs_type());
  return absl::StrJoin(types, "+");
}

bool IsStripeKey(const std::string& key) {
  return key == "stripe_count" || key == "stripe_size" || key == "stripe_index" ||
         key == "stripe_pool" || key == "object_size";
}

// The specs of `test` for the phase `phase` ("" = every phase).
std::vector<const v1::PhaseSpec*> SpecsOf(const v1::TestRecord& test, const std::string& phase) {
  std::vector<const v1::PhaseSpec*> out;
  for (const auto& s : test.plan_specs()) {
    if (phase.empty() || s.phase_name() == phase) out.push_back(&s);
  }
  return out;
}

}  // namespace

std::vector<std::string> RunNames(const std::vector<v1::RunRecord>& runs,
                                  const std::vector<RunTags>& tags) {
  std::vector<std::string> names(runs.size());
  if (runs.size() < 2) return names;
  const bool have_tags = tags.size() == runs.size();
  using Attribute = std::function<std::string(size_t)>;
  const std::vector<Attribute> attributes = {
      [&](size_t i) { return runs[i].name(); },
      [&](size_t i) { return have_tags ? tags[i].site : std::string(); },
      [&](size_t i) { return have_tags ? absl::StrJoin(tags[i].tags, ",") : std::string(); },
      [&](size_t i) {
        std::string v = AgentFact(runs[i], [](const v1::HostFacts& f) { return f.lustre_version(); });
        return v.empty() ? v : absl::StrCat("Lustre ", v);
      },
      [&](size_t i) { return AgentFact(runs[i], [](const v1::HostFacts& f) { return f.kernel(); }); },
      [&](size_t i) { return AgentFact(runs[i], FsTypes); },
      [&](size_t i) { return absl::StrCat(runs[i].agents_size(), " agents"); },
      [&](size_t i) { return absl::StrCat("lockstep ", runs[i].lockstep_version()); },
  };
  for (const Attribute& value : attributes) {
    std::set<std::string> distinct;
    for (size_t i = 0; i < runs.size(); ++i) distinct.insert(value(i));
    if (distinct.size() < 2) continue;
    for (size_t i = 0; i < runs.size(); ++i) {
      const std::string v = value(i);
      if (!names[i].empty()) names[i].push_back(' ');
      names[i].append(v.empty() ? std::string_view("-") : std::string_view(v));
    }
  }
  std::set<std::string> distinct(names.begin(), names.end());
  if (distinct.size() < runs.size()) {
    for (size_t i = 0; i < runs.size(); ++i) names[i] = absl::StrCat("run ", i + 1);
  }
  return names;
}

std::string RanLabel(const v1::TestRecord& test) {
  std::vector<std::string> parts;
  for (const v1::SweepValue& v : test.sweep()) {
    const std::vector<const v1::PhaseSpec*> specs = SpecsOf(test, v.phase());
    std::string value = v.value();
    if (IsStripeKey(v.key()) && !specs.empty() &&
        std::none_of(specs.begin(), specs.end(),
                     [](const v1::PhaseSpec* s) { return s->set_stripe(); })) {
      continue;  // the layout was not set
    }
    if ((v.key() == "block_size" || v.key() == "transfer_size") && !specs.empty()) {
      const uint64_t sent = v.key() == "block_size" ? specs.front()->block_bytes()
                                                    : specs.front()->transfer_bytes();
      absl::StatusOr<uint64_t> planned = ParseSize(v.value());
      if (sent > 0 && (!planned.ok() || *planned != sent)) value = HumanBytes(sent);
    }
    if (v.key() == "client_agents" && test.client_agents() > 0) {
      value = absl::StrCat(test.client_agents());
    }
    if (v.key() == "tasks_per_agent" && test.tasks_per_agent() > 0) {
      value = absl::StrCat(test.tasks_per_agent());
    }
    std::string part = v.phase();
    if (!part.empty()) part += ':';
    absl::StrAppend(&part, v.key(), "=", value);
    parts.push_back(std::move(part));
  }
  return absl::StrJoin(parts, " ");
}

std::string TestName(const v1::RunRecord& run, const v1::TestRecord& test) {
  const std::string label = RanLabel(test);
  bool unique = !label.empty();
  for (const auto& other : run.tests()) {
    if (other.test_id() != test.test_id() && RanLabel(other) == label) unique = false;
  }
  if (unique) return label;
  std::string name = absl::StrCat("test ", test.test_id(), " (", test.total_tasks(), " tasks)");
  return label.empty() ? name : absl::StrCat(label, ", ", name);
}

std::string OperationName(const v1::SummaryRow& r) {
  return r.phase() == r.operation() ? r.operation() : absl::StrCat(r.phase(), "/", r.operation());
}

std::vector<std::string> PlanChanges(const std::vector<v1::RunRecord>& runs) {
  std::vector<std::string> out;
  for (const v1::RunRecord& r : runs) {
    for (const std::string& c : r.smoke_changes()) {
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    }
  }
  return out;
}

}  // namespace lockstep
