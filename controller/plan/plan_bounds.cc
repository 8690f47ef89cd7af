#include "controller/plan/plan_bounds.h"

#include <cstdint>

#include "absl/strings/str_format.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "controller/plan/limits.h"

namespace lockstep {
namespace {

// Keys whose value is a list of a command's words: their own bounds.
bool IsCommandList(const std::string& key) { return key == "argv" || key == "env"; }

std::string Pos(const toml::node& n, const std::string& source) {
  const auto& b = n.source().begin;
  return absl::StrFormat("%s:%d:%d", source, b.line, b.column);
}

// A key for messages: long keys shortened (the refusal of one is the point).
std::string Shown(const std::string& key) {
  return key.size() <= 64 ? key : absl::StrFormat("%s... (%u bytes)", key.substr(0, 64), key.size());
}

class BoundsWalker {
 public:
  explicit BoundsWalker(const std::string& source) : source_(source) {}

  // `key` names the node ("[run] name", "[[phase]] #3 block_size").
  absl::Status Node(const toml::node& n, const std::string& key, bool command_list) {
    if (const toml::table* t = n.as_table()) return Table(*t, key);
    if (const toml::array* a = n.as_array()) return Array(*a, key, command_list);
    if (const toml::value<std::string>* s = n.as_string()) {
      const uint64_t most = command_list ? kMaxCommandArgBytes : kMaxPlanStringBytes;
      if (s->get().size() > most) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: %s: a string of %u bytes; the most a plan string may be is %s (%u bytes): "
            "shorten it",
            Pos(n, source_), key, s->get().size(), HumanBytes(most), most));
      }
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Table(const toml::table& t, const std::string& where) {
    for (const auto& [k, v] : t) {
      const std::string key(k.str());
      if (key.size() > kMaxPlanStringBytes) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: %s: a key of %u bytes (\"%s\"); the most is %u bytes: no plan key is that long",
            Pos(v, source_), where.empty() ? "the plan" : where, key.size(), Shown(key),
            kMaxPlanStringBytes));
      }
      RETURN_IF_ERROR(Node(v, where.empty() ? key : where + " " + key, IsCommandList(key)));
    }
    return absl::OkStatus();
  }

  absl::Status Array(const toml::array& a, const std::string& key, bool command_list) {
    uint64_t most = command_list ? kMaxCommandArgs : kMaxSweepPoints;
    const char* what = command_list ? "entries" : "values (a sweep's tests)";
    if (key == "phase") most = kMaxPlanPhases, what = "[[phase]] tables";
    if (key == "agent") most = kMaxPlanAgents, what = "[[agent]] tables";
    if (a.size() > most) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s: %u %s; the most a plan may have is %u: split the plan", Pos(a, source_), key,
          a.size(), what, most));
    }
    size_t i = 0;
    for (const toml::node& e : a) {
      ++i;
      const std::string name = a.is_array_of_tables() && (key == "phase" || key == "agent")
                                   ? absl::StrFormat("[[%s]] #%u", key, i)
                                   : key;
      RETURN_IF_ERROR(Node(e, name, command_list));
    }
    return absl::OkStatus();
  }

  const std::string& source_;
};

}  // namespace

absl::Status CheckPlanBounds(const toml::table& root, const std::string& source) {
  return BoundsWalker(source).Node(root, "", false);
}

absl::Status CheckPhaseRuns(const Plan& plan) {
  // Each factor is bounded (tests by kMaxSweepPoints, phases by
  // kMaxPlanPhases, repetitions by kMaxRepetitions): the product fits.
  const uint64_t runs = uint64_t{plan.tests()} * plan.phases.size() * plan.repetitions;
  if (runs <= kMaxPhaseRuns) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: %u test(s) x %u phase(s) x %u repetition(s) = %u phase runs; the most a plan may "
      "have is %u: lower repetitions, shorten the sweep lists or split the plan",
      plan.source, plan.tests(), plan.phases.size(), plan.repetitions, runs, kMaxPhaseRuns));
}

}  // namespace lockstep
