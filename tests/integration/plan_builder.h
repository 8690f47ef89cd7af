// A small builder of plan TOML for integration and fault tests: a [run]
// table, [[agent]] tables and [[phase]] tables, written in that order.
//
//   std::string plan = cluster.WritePlan(
//       cluster.Plan()                                // [[agent]] per cluster agent
//           .Set("name", "e2e").Set("repetitions", 2) // [run]
//           .AddPhase(PlanPhase("w", "write")         // dir = "data" unless set
//                         .Set("file_per_process", true)
//                         .Set("tasks_per_agent", {1, 2})
//                         .Set("block_size", "1m")));
//
// Values: strings are written quoted (with \ and " escaped), integers and
// booleans bare, a braced list of integers and a vector of strings as TOML
// arrays. Keys keep the order of their first Set; setting a key again
// replaces its value in place.
// Plain values, no threads: copy freely.
#ifndef LOCKSTEP_TESTS_INTEGRATION_PLAN_BUILDER_H_
#define LOCKSTEP_TESTS_INTEGRATION_PLAN_BUILDER_H_

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace lockstep::testing {

// One TOML value as the plan file shows it.
class TomlValue {
 public:
  TomlValue(const char* s) : TomlValue(std::string(s)) {}  // NOLINT: implicit on purpose
  TomlValue(const std::string& s);                          // NOLINT
  TomlValue(bool b) : text_(b ? "true" : "false") {}        // NOLINT
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  TomlValue(T v) : text_(std::to_string(v)) {}  // NOLINT
  TomlValue(double d);                             // NOLINT: 0.005 (a TOML float)
  TomlValue(std::initializer_list<int64_t> list);  // NOLINT: [1, 2]
  // A list of strings: ["64k", "1m"] (each quoted and escaped).
  static TomlValue Strings(std::initializer_list<const char*> list);
  // A list of booleans: [true, false].
  static TomlValue Bools(std::initializer_list<bool> list);
  TomlValue(const std::vector<std::string>& list);  // NOLINT: ["tar", "xf", "a.tar"]

  const std::string& text() const { return text_; }

 private:
  TomlValue() = default;
  std::string text_;
};

// Ordered key = value lines of one table.
class TomlTable {
 public:
  void Set(const std::string& key, TomlValue value);
  bool empty() const { return keys_.empty(); }
  std::string Lines() const;  // "key = value\n" each

 private:
  std::vector<std::pair<std::string, TomlValue>> keys_;
};

// One [[phase]] table: name, kind and dir = "data" (the directory TestCluster
// makes in every agent's root) until Set says otherwise.
class PlanPhase {
 public:
  PlanPhase(const std::string& name, const std::string& kind);
  PlanPhase& Set(const std::string& key, TomlValue value) {
    table_.Set(key, std::move(value));
    return *this;
  }
  std::string Toml() const { return "[[phase]]\n" + table_.Lines(); }

 private:
  TomlTable table_;
};

// A file-per-process transfer phase (write, read, rewrite) of `transfer_size`
// and `block_size`: the shape most test plans start from.
PlanPhase FilePerProcess(const std::string& name, const std::string& kind,
                         TomlValue transfer_size, TomlValue block_size);

class PlanBuilder {
 public:
  // A key of the [run] table (written only if some key is set).
  PlanBuilder& Set(const std::string& key, TomlValue value) {
    run_.Set(key, std::move(value));
    return *this;
  }
  // One [[agent]] table; `role` empty: no role key (a client).
  PlanBuilder& AddAgent(const std::string& address, const std::string& role = "");
  PlanBuilder& AddPhase(const PlanPhase& phase) {
    phases_.push_back(phase);
    return *this;
  }

  std::string Toml() const;
  // Writes Toml() to `path` (replacing it) and returns `path`.
  std::string WriteTo(const std::string& path) const;

 private:
  TomlTable run_;
  std::vector<TomlTable> agents_;
  std::vector<PlanPhase> phases_;
};

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_INTEGRATION_PLAN_BUILDER_H_
