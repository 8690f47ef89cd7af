#include "controller/plan/plan.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/files.h"
#include "common/names.h"
#include "common/net.h"
#include "common/sizes.h"
#include "common/status_macros.h"

#include <toml++/toml.h>

namespace lockstep {
namespace {

// Reads one table's keys, remembering which were used, with positioned errors.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string source, std::string where,
              std::vector<std::string> valid)
      : table_(table), source_(std::move(source)), where_(std::move(where)),
        valid_(std::move(valid)) {}

  std::string Pos(const toml::node& node) const {
    const auto& b = node.source().begin;
    return absl::StrFormat("%s:%d:%d", source_, b.line, b.column);
  }
  std::string Pos() const { return Pos(table_); }

  absl::Status Error(const toml::node& node, const std::string& key, const std::string& why) const {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s key '%s': %s", Pos(node), where_, key, why));
  }
  absl::Status Missing(const std::string& key, const std::string& how) const {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s has no '%s'; %s", Pos(), where_, key, how));
  }

  absl::Status CheckUnknown() const {
    for (const auto& [k, v] : table_) {
      std::string key(k.str());
      if (std::find(valid_.begin(), valid_.end(), key) == valid_.end()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: unknown key '%s' in %s; valid keys: %s", Pos(v), key, where_,
            absl::StrJoin(valid_, ", ")));
      }
    }
    return absl::OkStatus();
  }

  const toml::node* Get(const std::string& key) const { return table_.get(key); }

  absl::Status String(const std::string& key, std::string* out) const {
    const toml::node* n = Get(key);
    if (n == nullptr) return absl::OkStatus();
    if (!n->is_string()) return Error(*n, key, absl::StrFormat("expected a string, got %s", TypeName(*n)));
    *out = n->as_string()->get();
    return absl::OkStatus();
  }

  absl::Status Bool(const std::string& key, bool* out) const {
    const toml::node* n = Get(key);
    if (n == nullptr) return absl::OkStatus();
    if (!n->is_boolean()) {
      return Error(*n, key, absl::StrFormat("expected true or false, got %s", TypeName(*n)));
    }
    *out = n->as_boolean()->get();
    return absl::OkStatus();
  }

  absl::Status Uint(const std::string& key, uint64_t min, uint64_t max, uint64_t* out) const {
    const toml::node* n = Get(key);
    if (n == nullptr) return absl::OkStatus();
    return UintNode(*n, key, min, max, out);
  }

  absl::Status UintNode(const toml::node& n, const std::string& key, uint64_t min, uint64_t max,
                        uint64_t* out) const {
    if (!n.is_integer()) {
      return Error(n, key, absl::StrFormat("expected an integer, got %s", TypeName(n)));
    }
    int64_t v = n.as_integer()->get();
    if (v < 0 || static_cast<uint64_t>(v) < min || static_cast<uint64_t>(v) > max) {
      return Error(n, key, absl::StrFormat("%d is out of range; use %u to %u", v, min, max));
    }
    *out = static_cast<uint64_t>(v);
    return absl::OkStatus();
  }

  // A size: an integer (bytes) or a string with a unit ("1m", "4GiB").
  absl::Status Size(const std::string& key, uint64_t* out) const {
    const toml::node* n = Get(key);
    if (n == nullptr) return absl::OkStatus();
    uint64_t v = 0;
    if (n->is_integer()) {
      if (n->as_integer()->get() < 0) return Error(*n, key, "a size cannot be negative");
      v = static_cast<uint64_t>(n->as_integer()->get());
    } else if (n->is_string()) {
      auto parsed = ParseSize(n->as_string()->get());
      if (!parsed.ok()) return Error(*n, key, std::string(parsed.status().message()));
      v = *parsed;
    } else {
      return Error(*n, key, absl::StrFormat("expected a size such as \"1m\" or 1048576, got %s",
                                            TypeName(*n)));
    }
    if (v == 0) return Error(*n, key, "a size must be greater than zero");
    *out = v;
    return absl::OkStatus();
  }

  static std::string TypeName(const toml::node& n) {
    switch (n.type()) {
      case toml::node_type::string: return "a string";
      case toml::node_type::integer: return "an integer";
      case toml::node_type::floating_point: return "a float";
      case toml::node_type::boolean: return "a boolean";
      case toml::node_type::array: return "an array";
      case toml::node_type::table: return "a table";
      default: return "a date/time";
    }
  }

 private:
  const toml::table& table_;
  std::string source_;
  std::string where_;
  std::vector<std::string> valid_;
};

const std::vector<std::string> kRunKeys = {
    "name",          "repetitions",     "connect_timeout_ms", "lease_ms",
    "progress_interval_ms", "seed",     "cache",              "drop_mode",
    "cache_required", "lustre_lru_clear", "max_start_skew_us", "on_skew",
    "max_clock_uncertainty_us", "on_clock", "on_agent_loss", "io_stall_timeout_ms"};
const std::vector<std::string> kAgentKeys = {"address", "role"};
const std::vector<std::string> kPhaseKeys = {
    "name",    "kind",      "dir",    "file_name",  "file_per_process", "tasks_per_agent",
    "transfer_size", "block_size", "segments", "repetitions", "fsync", "fsync_per_transfer",
    "direct",  "keep",      "verify", "reorder_tasks", "reorder_node_offset", "remove_files", "cache", "stripe_count", "stripe_size",
    "stripe_index", "stripe_pool", "checksums", "random_offsets", "stonewall_seconds",
    "stonewall_wear_out", "verify_after_write", "delay_seconds", "intra_barriers", "small_files",
    "small_file_min_size", "small_file_max_size", "small_files_per_dir", "md_op", "md_branching",
    "md_depth", "md_items", "md_unique_dir", "md_write_size", "md_read_size", "md_leaf_only",
    "md_neighbor_shift", "reorder_random", "reorder_random_seed", "multi_file"};

// `key` must be one of `choices`.
absl::Status OneOf(const TableReader& r, const std::string& key, const std::string& value,
                   const std::vector<std::string>& choices) {
  if (std::find(choices.begin(), choices.end(), value) != choices.end()) return absl::OkStatus();
  return r.Error(*r.Get(key), key,
                 absl::StrFormat("\"%s\" is not one of %s", value, absl::StrJoin(choices, ", ")));
}
const std::vector<std::string> kTopKeys = {"run", "agent", "phase"};

// Keys of IOR's finer options and of the small_files and mdtest kinds, and
// their consistency with the phase's kind and layout.
absl::Status ParseWorkloadKeys(const TableReader& r, PhasePlan* p) {
  uint64_t v = 0;
  auto only_for = [&](const char* key, bool allowed, const char* kinds) -> absl::Status {
    if (r.Get(key) != nullptr && !allowed) {
      return r.Error(*r.Get(key), key,
                     absl::StrFormat("applies to %s phases, not to kind = \"%s\"", kinds,
                                     PhaseKindName(p->kind)));
    }
    return absl::OkStatus();
  };
  const bool transfer = p->kind == v1::WRITE || p->kind == v1::READ || p->kind == v1::REWRITE;
  v = p->reorder_node_offset;
  RETURN_IF_ERROR(r.Uint("reorder_node_offset", 1, 1u << 20, &v));
  p->reorder_node_offset = static_cast<uint32_t>(v);
  RETURN_IF_ERROR(only_for("reorder_node_offset", p->kind == v1::READ, "read"));
  RETURN_IF_ERROR(r.Bool("remove_files", &p->remove_files));
  RETURN_IF_ERROR(only_for("remove_files", p->kind == v1::READ, "read"));
  RETURN_IF_ERROR(r.Bool("random_offsets", &p->random_offsets));
  RETURN_IF_ERROR(only_for("random_offsets", transfer, "write, read and rewrite"));
  v = p->stonewall_seconds;
  RETURN_IF_ERROR(r.Uint("stonewall_seconds", 0, 86400 * 7, &v));
  p->stonewall_seconds = static_cast<uint32_t>(v);
  RETURN_IF_ERROR(only_for("stonewall_seconds", transfer, "write, read and rewrite"));
  RETURN_IF_ERROR(r.Bool("stonewall_wear_out", &p->stonewall_wear_out));
  RETURN_IF_ERROR(r.Bool("verify_after_write", &p->verify_after_write));
  RETURN_IF_ERROR(only_for("verify_after_write", p->kind == v1::WRITE, "write"));
  v = p->delay_seconds;
  RETURN_IF_ERROR(r.Uint("delay_seconds", 0, 86400, &v));
  p->delay_seconds = static_cast<uint32_t>(v);
  RETURN_IF_ERROR(r.Bool("intra_barriers", &p->intra_barriers));
  RETURN_IF_ERROR(only_for("intra_barriers", transfer, "write, read and rewrite"));
  RETURN_IF_ERROR(r.Bool("multi_file", &p->multi_file));
  RETURN_IF_ERROR(only_for("multi_file", transfer, "write, read and rewrite"));
  RETURN_IF_ERROR(r.Bool("reorder_random", &p->reorder_random));
  RETURN_IF_ERROR(only_for("reorder_random", p->kind == v1::READ, "read"));
  if (const toml::node* n = r.Get("reorder_random_seed")) {
    if (!n->is_integer() || n->as_integer()->get() < INT32_MIN ||
        n->as_integer()->get() > INT32_MAX) {
      return r.Error(*n, "reorder_random_seed",
                     "use a whole number (IOR -X; negative: -seed + repetition)");
    }
    p->reorder_random_seed = static_cast<int32_t>(n->as_integer()->get());
    if (!p->reorder_random) {
      return r.Error(*n, "reorder_random_seed", "seeds reorder_random; add reorder_random = true");
    }
  }
  if (p->reorder_random && p->reorder_tasks) {
    return r.Error(*r.Get("reorder_random"), "reorder_random",
                   "reorder_tasks is set too; IOR takes -C or -Z, not both: choose one");
  }
  if (p->random_offsets && p->block_bytes == p->transfer_bytes && p->segments == 1) {
    return r.Error(*r.Get("random_offsets"), "random_offsets",
                   "block_size equals transfer_size with one segment: each task has a single "
                   "transfer, nothing to shuffle; make block_size a multiple of transfer_size");
  }
  if (p->stonewall_wear_out && p->stonewall_seconds == 0) {
    return r.Error(*r.Get("stonewall_wear_out"), "stonewall_wear_out",
                   "needs stonewall_seconds > 0 (wear-out continues after the stonewall)");
  }

  const bool small = p->kind == v1::SMALL_FILES;
  RETURN_IF_ERROR(r.Uint("small_files", 1, uint64_t{1} << 32, &p->small_files));
  RETURN_IF_ERROR(r.Size("small_file_min_size", &p->small_file_min_bytes));
  RETURN_IF_ERROR(r.Size("small_file_max_size", &p->small_file_max_bytes));
  v = p->small_files_per_dir;
  RETURN_IF_ERROR(r.Uint("small_files_per_dir", 1, 1'000'000, &v));
  p->small_files_per_dir = static_cast<uint32_t>(v);
  for (const char* key :
       {"small_files", "small_file_min_size", "small_file_max_size", "small_files_per_dir"}) {
    RETURN_IF_ERROR(only_for(key, small, "small_files"));
  }
  if (small) {
    if (p->small_files == 0) {
      return r.Missing("small_files", "add small_files = 1000 (files per task)");
    }
    if (p->small_file_min_bytes > p->small_file_max_bytes) {
      return r.Error(*r.Get("small_file_min_size"), "small_file_min_size",
                     absl::StrFormat("%s is larger than small_file_max_size %s",
                                     HumanBytes(p->small_file_min_bytes),
                                     HumanBytes(p->small_file_max_bytes)));
    }
    if (p->small_file_max_bytes > (64u << 20)) {
      const toml::node* n = r.Get("small_file_max_size");
      return r.Error(*n, "small_file_max_size", "small files are at most 64 MiB each");
    }
  }

  const bool md = p->kind == v1::MDTEST;
  std::string op;
  RETURN_IF_ERROR(r.String("md_op", &op));
  v = p->md_branching;
  RETURN_IF_ERROR(r.Uint("md_branching", 1, 1'000'000, &v));
  p->md_branching = static_cast<uint32_t>(v);
  v = p->md_depth;
  RETURN_IF_ERROR(r.Uint("md_depth", 0, 64, &v));
  p->md_depth = static_cast<uint32_t>(v);
  RETURN_IF_ERROR(r.Uint("md_items", 0, uint64_t{1} << 40, &p->md_items));
  RETURN_IF_ERROR(r.Bool("md_unique_dir", &p->md_unique_dir));
  if (r.Get("md_write_size")) RETURN_IF_ERROR(r.Size("md_write_size", &p->md_write_bytes));
  if (r.Get("md_read_size")) RETURN_IF_ERROR(r.Size("md_read_size", &p->md_read_bytes));
  RETURN_IF_ERROR(r.Bool("md_leaf_only", &p->md_leaf_only));
  v = p->md_neighbor_shift;
  RETURN_IF_ERROR(r.Uint("md_neighbor_shift", 0, 1u << 24, &v));
  p->md_neighbor_shift = static_cast<uint32_t>(v);
  for (const char* key : {"md_op", "md_branching", "md_depth", "md_items", "md_unique_dir",
                          "md_write_size", "md_read_size", "md_leaf_only", "md_neighbor_shift"}) {
    RETURN_IF_ERROR(only_for(key, md, "mdtest"));
  }
  if (md) {
    if (op.empty()) {
      return r.Missing("md_op", "add md_op = \"file_create\" (tree_create, dir_create, dir_stat, "
                                "dir_rename, dir_remove, file_create, file_stat, file_read, "
                                "file_remove, tree_remove)");
    }
    auto parsed = ParseMdtestOp(op);
    if (!parsed) {
      return r.Error(*r.Get("md_op"), "md_op",
                     absl::StrFormat("\"%s\" is not an mdtest operation; use tree_create, "
                                     "dir_create, dir_stat, dir_rename, dir_remove, file_create, "
                                     "file_stat, file_read, file_remove or tree_remove",
                                     op));
    }
    p->md_op = *parsed;
    const bool tree_op = p->md_op == v1::MD_TREE_CREATE || p->md_op == v1::MD_TREE_REMOVE;
    // md_items = 0 is mdtest without -n: the sub-phases run on no items.
    if (!tree_op && r.Get("md_items") == nullptr) {
      return r.Missing("md_items", "add md_items = 1000 (items per task, mdtest -n)");
    }
    if (p->md_write_bytes > (64u << 20) || p->md_read_bytes > (64u << 20)) {
      const toml::node* n = r.Get("md_write_size") ? r.Get("md_write_size") : r.Get("md_read_size");
      return r.Error(*n, n == r.Get("md_write_size") ? "md_write_size" : "md_read_size",
                     "at most 64 MiB per file");
    }
    double dirs = 0, level = 1;
    for (uint32_t d = 0; d <= p->md_depth; ++d, level *= p->md_branching) dirs += level;
    if (dirs > 1e7) {
      return r.Error(*(r.Get("md_depth") ? r.Get("md_depth") : r.Get("md_branching")), "md_depth",
                     absl::StrFormat("a tree of branching %u and depth %u has %.0f directories; "
                                     "the limit is 10 million",
                                     p->md_branching, p->md_depth, dirs));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseRun(const toml::table& t, const std::string& source, Plan* plan) {
  TableReader r(t, source, "[run]", kRunKeys);
  absl::Status s = r.CheckUnknown();
  if (!s.ok()) return s;
  uint64_t v = 0;
  if (!(s = r.String("name", &plan->name)).ok()) return s;
  v = plan->repetitions;
  if (!(s = r.Uint("repetitions", 1, 10000, &v)).ok()) return s;
  plan->repetitions = static_cast<uint32_t>(v);
  v = plan->connect_timeout_ms;
  if (!(s = r.Uint("connect_timeout_ms", 100, 600000, &v)).ok()) return s;
  plan->connect_timeout_ms = static_cast<uint32_t>(v);
  v = plan->lease_ms;
  if (!(s = r.Uint("lease_ms", 200, 600000, &v)).ok()) return s;
  plan->lease_ms = static_cast<uint32_t>(v);
  v = plan->progress_interval_ms;
  if (!(s = r.Uint("progress_interval_ms", 50, 600000, &v)).ok()) return s;
  plan->progress_interval_ms = static_cast<uint32_t>(v);
  if (!(s = r.Uint("seed", 0, UINT64_MAX >> 1, &plan->seed)).ok()) return s;
  if (!(s = r.String("cache", &plan->cache)).ok()) return s;
  if (r.Get("cache") && !(s = OneOf(r, "cache", plan->cache, {"none", "clients", "all"})).ok()) {
    return s;
  }
  v = plan->drop_mode;
  if (!(s = r.Uint("drop_mode", 1, 3, &v)).ok()) return s;
  plan->drop_mode = static_cast<uint32_t>(v);
  if (!(s = r.Bool("cache_required", &plan->cache_required)).ok()) return s;
  if (!(s = r.Bool("lustre_lru_clear", &plan->lustre_lru_clear)).ok()) return s;
  v = plan->max_start_skew_us;
  if (!(s = r.Uint("max_start_skew_us", 0, 60'000'000, &v)).ok()) return s;
  plan->max_start_skew_us = static_cast<uint32_t>(v);
  if (!(s = r.String("on_skew", &plan->on_skew)).ok()) return s;
  if (r.Get("on_skew") && !(s = OneOf(r, "on_skew", plan->on_skew, {"mark", "repeat", "fail"})).ok()) {
    return s;
  }
  v = plan->max_clock_uncertainty_us;
  if (!(s = r.Uint("max_clock_uncertainty_us", 0, 60'000'000, &v)).ok()) return s;
  plan->max_clock_uncertainty_us = static_cast<uint32_t>(v);
  if (!(s = r.String("on_clock", &plan->on_clock)).ok()) return s;
  if (r.Get("on_clock") && !(s = OneOf(r, "on_clock", plan->on_clock, {"warn", "fail"})).ok()) {
    return s;
  }
  v = plan->io_stall_timeout_ms;
  if (!(s = r.Uint("io_stall_timeout_ms", 0, 86'400'000, &v)).ok()) return s;
  plan->io_stall_timeout_ms = static_cast<uint32_t>(v);
  if (!(s = r.String("on_agent_loss", &plan->on_agent_loss)).ok()) return s;
  if (r.Get("on_agent_loss") &&
      !(s = OneOf(r, "on_agent_loss", plan->on_agent_loss, {"stop", "continue"})).ok()) {
    return s;
  }
  return absl::OkStatus();
}

absl::Status ParseAgent(const toml::table& t, const std::string& source, int index, Plan* plan) {
  TableReader r(t, source, absl::StrFormat("[[agent]] #%d", index + 1), kAgentKeys);
  absl::Status s = r.CheckUnknown();
  if (!s.ok()) return s;
  AgentPlan a;
  if (!(s = r.String("address", &a.address)).ok()) return s;
  if (a.address.empty()) return r.Missing("address", "add address = \"HOST:PORT\"");
  auto hp = SplitHostPort(a.address);
  if (!hp.ok()) return r.Error(*r.Get("address"), "address", std::string(hp.status().message()));
  if (hp->second == 0) return r.Error(*r.Get("address"), "address", "port 0 is not an agent's port");
  std::string role = "client";
  if (!(s = r.String("role", &role)).ok()) return s;
  auto parsed = ParseRole(role);
  if (!parsed) {
    return r.Error(*r.Get("role"), "role",
                   absl::StrFormat("\"%s\" is not a role; use client, oss or mds", role));
  }
  a.role = *parsed;
  for (const AgentPlan& other : plan->agents) {
    if (other.address == a.address) {
      return r.Error(*r.Get("address"), "address",
                     absl::StrFormat("%s is listed twice; each agent once", a.address));
    }
  }
  plan->agents.push_back(a);
  return absl::OkStatus();
}

absl::Status ParsePhase(const toml::table& t, const std::string& source, int index, Plan* plan,
                        std::map<std::string, uint64_t>* phase_reps, size_t* sweep_len,
                        std::string* sweep_owner) {
  std::string label = absl::StrFormat("[[phase]] #%d", index + 1);
  PhasePlan p;
  {
    TableReader pre(t, source, label, kPhaseKeys);
    absl::Status s = pre.String("name", &p.name);
    if (!s.ok()) return s;
    if (!p.name.empty()) label = absl::StrFormat("[[phase]] '%s'", p.name);
  }
  TableReader r(t, source, label, kPhaseKeys);
  absl::Status s = r.CheckUnknown();
  if (!s.ok()) return s;
  if (p.name.empty()) return r.Missing("name", "add name = \"seq-write\" (unique per plan)");
  for (const PhasePlan& other : plan->phases) {
    if (other.name == p.name) {
      return r.Error(*r.Get("name"), "name",
                     absl::StrFormat("\"%s\" is used by two phases; names must be unique", p.name));
    }
  }
  std::string kind;
  if (!(s = r.String("kind", &kind)).ok()) return s;
  if (kind.empty()) return r.Missing("kind", "add kind = \"write\" or \"read\"");
  auto k = ParsePhaseKind(kind);
  if (!k) {
    return r.Error(*r.Get("kind"), "kind",
                   absl::StrFormat("\"%s\" is not a phase kind; use write, read, rewrite, "
                                   "small_files or mdtest",
                                   kind));
  }
  p.kind = *k;
  if (!(s = r.String("dir", &p.dir)).ok()) return s;
  if (p.dir.empty()) {
    return r.Missing("dir", "add dir = \"/path/on/the/agents\" (relative: below the agent's first root)");
  }
  if (!(s = r.String("file_name", &p.file_name)).ok()) return s;
  if (p.file_name.empty() || p.file_name.find('/') != std::string::npos) {
    return r.Error(*r.Get("file_name"), "file_name", "must be a plain file name without '/'");
  }
  if (!(s = r.Bool("file_per_process", &p.file_per_process)).ok()) return s;

  // tasks_per_agent: an integer or a non-empty array of integers.
  if (const toml::node* n = r.Get("tasks_per_agent")) {
    if (n->is_array()) {
      const toml::array& arr = *n->as_array();
      if (arr.empty()) return r.Error(*n, "tasks_per_agent", "the list is empty");
      for (const toml::node& e : arr) {
        uint64_t v = 0;
        if (!(s = r.UintNode(e, "tasks_per_agent", 1, kMaxTasksPerAgent, &v)).ok()) return s;
        p.tasks_per_agent.push_back(static_cast<uint32_t>(v));
      }
      if (p.tasks_per_agent.size() > 1) {
        if (*sweep_len > 1 && *sweep_len != p.tasks_per_agent.size()) {
          return r.Error(*n, "tasks_per_agent",
                         absl::StrFormat("a sweep of %u values, but phase '%s' sweeps %u; phases "
                                         "of one plan sweep together (test i uses value i), so "
                                         "give them lists of the same length",
                                         p.tasks_per_agent.size(), *sweep_owner, *sweep_len));
        }
        *sweep_len = p.tasks_per_agent.size();
        *sweep_owner = p.name;
      }
    } else {
      uint64_t v = 0;
      if (!(s = r.UintNode(*n, "tasks_per_agent", 1, kMaxTasksPerAgent, &v)).ok()) return s;
      p.tasks_per_agent.push_back(static_cast<uint32_t>(v));
    }
  } else {
    p.tasks_per_agent.push_back(1);
  }

  if (!(s = r.Size("transfer_size", &p.transfer_bytes)).ok()) return s;
  if (!(s = r.Size("block_size", &p.block_bytes)).ok()) return s;
  if (!(s = r.Uint("segments", 1, UINT32_MAX, &p.segments)).ok()) return s;
  if (p.transfer_bytes % 8 != 0) {
    return r.Error(*r.Get("transfer_size"), "transfer_size",
                   absl::StrFormat("%u bytes is not a multiple of 8 (IOR's rule)", p.transfer_bytes));
  }
  if (p.transfer_bytes > p.block_bytes) {
    const toml::node* n = r.Get("transfer_size") ? r.Get("transfer_size") : r.Get("block_size");
    return r.Error(*n, "transfer_size",
                   absl::StrFormat("transfer %s is larger than block %s; make block_size a "
                                   "multiple of transfer_size",
                                   HumanBytes(p.transfer_bytes), HumanBytes(p.block_bytes)));
  }
  if (p.block_bytes % p.transfer_bytes != 0) {
    const toml::node* n = r.Get("block_size") ? r.Get("block_size") : r.Get("transfer_size");
    return r.Error(*n, "block_size",
                   absl::StrFormat("block %u bytes is not a multiple of transfer %u bytes",
                                   p.block_bytes, p.transfer_bytes));
  }
  if (const toml::node* n = r.Get("repetitions")) {
    uint64_t v = 0;
    if (!(s = r.UintNode(*n, "repetitions", 1, 10000, &v)).ok()) return s;
    (*phase_reps)[p.name] = v;
  }
  if (!(s = r.Bool("fsync", &p.fsync)).ok()) return s;
  if (!(s = r.Bool("fsync_per_transfer", &p.fsync_per_transfer)).ok()) return s;
  if (!(s = r.Bool("direct", &p.direct)).ok()) return s;
  if (!(s = r.Bool("keep", &p.keep)).ok()) return s;
  if (!(s = r.Bool("verify", &p.verify)).ok()) return s;
  if (!(s = r.Bool("reorder_tasks", &p.reorder_tasks)).ok()) return s;
  if (!(s = r.String("cache", &p.cache)).ok()) return s;
  if (r.Get("cache") && !(s = OneOf(r, "cache", p.cache, {"none", "clients", "all"})).ok()) {
    return s;
  }
  // Striping: any stripe key asks for `lfs setstripe` on dir.
  for (const char* k : {"stripe_count", "stripe_size", "stripe_index", "stripe_pool"}) {
    if (r.Get(k)) p.set_stripe = true;
  }
  if (const toml::node* n = r.Get("stripe_count")) {
    if (!n->is_integer() || n->as_integer()->get() < -1 || n->as_integer()->get() > 65535) {
      return r.Error(*n, "stripe_count", "use -1 (all OSTs), 0 (file system default) or 1..65535");
    }
    p.stripe_count = static_cast<int32_t>(n->as_integer()->get());
  }
  if (r.Get("stripe_size")) {
    if (!(s = r.Size("stripe_size", &p.stripe_size_bytes)).ok()) return s;
    if (p.stripe_size_bytes % 65536 != 0) {
      return r.Error(*r.Get("stripe_size"), "stripe_size",
                     absl::StrFormat("%u bytes is not a multiple of 64 KiB (Lustre's rule)",
                                     p.stripe_size_bytes));
    }
  }
  if (const toml::node* n = r.Get("stripe_index")) {
    if (!n->is_integer() || n->as_integer()->get() < -1 || n->as_integer()->get() > 65535) {
      return r.Error(*n, "stripe_index", "use -1 (any OST) or an OST index");
    }
    p.stripe_index = static_cast<int32_t>(n->as_integer()->get());
  }
  if (!(s = r.String("stripe_pool", &p.stripe_pool)).ok()) return s;
  if (const toml::node* n = r.Get("checksums")) {
    bool on = false;
    if (!(s = r.Bool("checksums", &on)).ok()) return s;
    p.checksums = on ? v1::CHECKSUMS_ON : v1::CHECKSUMS_OFF;
    (void)n;
  }
  if (p.direct && p.transfer_bytes % 4096 != 0) {
    return r.Error(*r.Get("direct"), "direct",
                   absl::StrFormat("O_DIRECT needs transfer_size a multiple of 4 KiB, got %u bytes",
                                   p.transfer_bytes));
  }
  RETURN_IF_ERROR(ParseWorkloadKeys(r, &p));
  if (p.kind == v1::READ && (p.fsync || p.fsync_per_transfer)) {
    return r.Error(*(r.Get("fsync") ? r.Get("fsync") : r.Get("fsync_per_transfer")), "fsync",
                   "applies to write phases only");
  }
  if (p.kind == v1::WRITE && p.verify) {
    return r.Error(*r.Get("verify"), "verify",
                   "applies to read phases (a read phase with verify = true checks what the write "
                   "phase wrote)");
  }
  plan->phases.push_back(std::move(p));
  return absl::OkStatus();
}

}  // namespace

uint32_t Plan::tests() const {
  size_t n = 1;
  for (const PhasePlan& p : phases) n = std::max(n, p.tasks_per_agent.size());
  return static_cast<uint32_t>(n);
}

uint32_t Plan::TasksPerAgent(const PhasePlan& p, uint32_t t) const {
  if (p.tasks_per_agent.empty()) return 1;
  if (p.tasks_per_agent.size() == 1) return p.tasks_per_agent[0];
  return p.tasks_per_agent[std::min<size_t>(t, p.tasks_per_agent.size() - 1)];
}

absl::StatusOr<Plan> ParsePlan(const std::string& text, const std::string& source) {
  Plan plan;
  plan.source = source;
  plan.text = text;
  toml::table root;
  try {
    root = toml::parse(std::string_view(text), std::string(source));
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    return absl::InvalidArgumentError(absl::StrFormat("%s:%d:%d: malformed TOML: %s", source,
                                                      b.line, b.column,
                                                      std::string(e.description())));
  }
  for (const auto& [k, v] : root) {
    std::string key(k.str());
    if (std::find(kTopKeys.begin(), kTopKeys.end(), key) == kTopKeys.end()) {
      const auto& b = v.source().begin;
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s:%d:%d: unknown top-level key '%s'; valid: [run], [[agent]], [[phase]]", source,
          b.line, b.column, key));
    }
  }
  absl::Status s;
  if (const toml::node* run = root.get("run")) {
    if (!run->is_table()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: 'run' must be a table: write [run]", source));
    }
    if (!(s = ParseRun(*run->as_table(), source, &plan)).ok()) return s;
  }
  if (const toml::node* agents = root.get("agent")) {
    if (!agents->is_array_of_tables()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s:%d: 'agent' must be an array of tables: write [[agent]] for each agent", source,
          agents->source().begin.line));
    }
    int i = 0;
    for (const toml::node& a : *agents->as_array()) {
      if (!(s = ParseAgent(*a.as_table(), source, i++, &plan)).ok()) return s;
    }
  }
  const toml::node* phases = root.get("phase");
  if (phases == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the plan has no [[phase]]; add at least one, e.g. [[phase]] name = \"w\" kind = "
        "\"write\" dir = \"/scratch/lockstep\"",
        source));
  }
  if (!phases->is_array_of_tables()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s:%d: 'phase' must be an array of tables: write [[phase]] for each phase", source,
        phases->source().begin.line));
  }
  std::map<std::string, uint64_t> phase_reps;
  size_t sweep_len = 1;
  std::string sweep_owner;
  int i = 0;
  for (const toml::node& p : *phases->as_array()) {
    if (!(s = ParsePhase(*p.as_table(), source, i++, &plan, &phase_reps, &sweep_len, &sweep_owner))
             .ok()) {
      return s;
    }
  }
  // Repetitions: IOR repeats all phases of a test together (-i), so phases
  // that set their own must agree with each other and with [run].
  bool run_sets_reps = root["run"]["repetitions"].is_integer();
  std::string first_name;
  uint64_t first_reps = 0;
  for (const auto& [name, reps] : phase_reps) {
    if (first_name.empty()) {
      first_name = name;
      first_reps = reps;
    } else if (reps != first_reps) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: phase '%s' has repetitions = %u but phase '%s' has %u; a test repeats all its "
          "phases together (IOR -i): use one value, best in [run]",
          source, name, reps, first_name, first_reps));
    }
  }
  if (!first_name.empty()) {
    if (run_sets_reps && first_reps != plan.repetitions) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: phase '%s' has repetitions = %u but [run] has %u; keep one of them", source,
          first_name, first_reps, plan.repetitions));
    }
    plan.repetitions = static_cast<uint32_t>(first_reps);
  }
  if (plan.name.empty()) {
    std::string base = source.substr(source.find_last_of('/') + 1);
    if (base.size() > 5 && base.substr(base.size() - 5) == ".toml") base.resize(base.size() - 5);
    plan.name = base.empty() ? "lockstep" : base;
  }
  if (plan.max_clock_uncertainty_us > 0 && plan.max_start_skew_us > 0 &&
      plan.max_clock_uncertainty_us > plan.max_start_skew_us) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: max_clock_uncertainty_us = %u is larger than max_start_skew_us = %u: a skew bound "
        "tighter than the clocks' uncertainty cannot be checked; raise the skew bound or lower "
        "the uncertainty bound",
        source, plan.max_clock_uncertainty_us, plan.max_start_skew_us));
  }
  bool has_client = plan.agents.empty();
  for (const AgentPlan& a : plan.agents) has_client |= a.role == v1::CLIENT;
  if (!has_client) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: no [[agent]] has role = \"client\"; phases need at least one client to run tasks",
        source));
  }
  size_t clients = 0;
  for (const AgentPlan& a : plan.agents) clients += a.role == v1::CLIENT ? 1 : 0;
  for (const PhasePlan& p : plan.phases) {
    if (p.intra_barriers && clients > 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: phase '%s' has intra_barriers = true with %u client agents: the barriers (IOR -g) "
          "span the tasks of one agent only; use one client agent or drop intra_barriers",
          source, p.name, clients));
    }
    if (p.reorder_tasks && plan.agents.size() == 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: phase '%s' has reorder_tasks = true with one agent: the tasks would read their own "
          "node's data; list two or more client agents",
          source, p.name));
    }
  }
  return plan;
}

absl::StatusOr<Plan> LoadPlan(const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat("cannot read plan: %s",
                                                      std::string(text.status().message())));
  }
  return ParsePlan(*text, path);
}

}  // namespace lockstep
