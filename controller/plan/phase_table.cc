#include "controller/plan/phase_table.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/checked_math.h"
#include "common/names.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "common/text_escape.h"
#include "controller/plan/limits.h"
#include "controller/plan/phase_kind.h"
#include "controller/plan/sweep.h"
#include "controller/plan/table_reader.h"
#include "controller/plan/kinds/mdtest_plan.h"

namespace lockstep {
namespace {

// The keys every kind reads (SharedPhaseKeys), then each kind's own
// (PhaseKindDef::OwnKeys).
const std::vector<std::string>& PhaseKeys() {
  static const auto* keys = [] {
    auto* k = new std::vector<std::string>(SharedPhaseKeys());
    for (const PhaseKindDef* kind : AllKinds()) {
      for (const std::string& key : kind->OwnKeys()) k->push_back(key);
    }
    return k;
  }();
  return *keys;
}

// For an unknown key's message: the keys of the kind the table names, or
// (no kind, or not a kind) empty, and every phase key is listed.
std::string KeysOfNamedKind(const TableReader& r) {
  const toml::node* kind = r.Get("kind");
  const PhaseKindDef* k =
      kind != nullptr && kind->is_string() ? KindNamed(kind->as_string()->get()) : nullptr;
  return k == nullptr ? "" : KeysOfKindForMessage(*k);
}

constexpr const char* kTransferKinds = "write, read and rewrite";

bool IsTransfer(v1::PhaseKind kind) { return KindOf(kind).IorTransfer(); }

bool IsMdtestCreate(v1::MdtestOp op) { return op == v1::MD_FILE_CREATE || op == v1::MD_DIR_CREATE; }

// The mdtest ops that work on the items a create made (stat, read, remove, rename).
bool IsMdtestItemReader(v1::MdtestOp op) {
  return op == v1::MD_FILE_STAT || op == v1::MD_FILE_READ || op == v1::MD_FILE_REMOVE ||
         op == v1::MD_DIR_STAT || op == v1::MD_DIR_REMOVE || op == v1::MD_DIR_RENAME;
}

// A key given for a kind it does not apply to (`allowed` false) is an error
// naming the `kinds` it applies to.
absl::Status OnlyFor(const TableReader& r, const PhasePlan& p, const char* key, bool allowed,
                     const char* kinds) {
  if (r.Get(key) == nullptr || allowed) return absl::OkStatus();
  return r.Error(*r.Get(key), key,
                 absl::StrFormat("applies to %s phases, not to kind = \"%s\"", kinds,
                                 PhaseKindName(p.kind)));
}

// A node for an error about two keys: the first one given.
const toml::node& EitherNode(const TableReader& r, const char* first, const char* second) {
  return *(r.Get(first) ? r.Get(first) : r.Get(second));
}

// name: present, and unique in the plan.
absl::Status CheckName(const TableReader& r, const PhaseAgreement& agreement,
                       const PhasePlan& p) {
  if (p.name.empty()) return r.Missing("name", "add name = \"seq-write\" (unique per plan)");
  if (agreement.names.count(p.name) > 0) {
    return r.Error(*r.Get("name"), "name",
                   absl::StrFormat("\"%s\" is used by two phases; names must be unique", p.name));
  }
  return absl::OkStatus();
}

// file_names: a list of plain, distinct names, one per task (IOzone -F),
// with file_per_process; the agent checks that there is one per task.
absl::Status ReadFileNames(const TableReader& r, PhasePlan* p) {
  const toml::node* n = r.Get("file_names");
  if (n == nullptr) return absl::OkStatus();
  if (!n->is_array() || n->as_array()->empty()) {
    return r.Error(*n, "file_names", "expected a list of file names, one per task, such as "
                                     "[\"a\", \"b\"]");
  }
  if (!p->file_per_process) {
    return r.Error(*n, "file_names", "names a file per task: set file_per_process = true");
  }
  if (n->as_array()->size() > kMaxTotalTasks) {
    return r.Error(*n, "file_names", absl::StrFormat("names %u files, more than the most tasks "
                                                     "(%u): one name per task",
                                                     n->as_array()->size(), kMaxTotalTasks));
  }
  std::unordered_set<std::string> seen;
  for (const toml::node& e : *n->as_array()) {
    const std::string* name = e.is_string() ? &e.as_string()->get() : nullptr;
    if (name == nullptr || name->empty() || name->find('/') != std::string::npos ||
        name->find('\0') != std::string::npos || *name == "." || *name == "..") {
      return r.Error(e, "file_names", "each must be a plain file name (one path component, "
                                      "not . or .., no '/' or NUL), quoted");
    }
    if (!seen.insert(*name).second) {
      return r.Error(e, "file_names",
                     absl::StrFormat("\"%s\" is given twice; each task writes a file of its own",
                                     *name));
    }
    p->file_names.push_back(*name);
  }
  return absl::OkStatus();
}

// kind, dir, file_name, file_per_process: what the phase does, and where.
absl::Status ReadKindAndFiles(const TableReader& r, PhasePlan* p) {
  std::string kind;
  RETURN_IF_ERROR(r.String("kind", &kind));
  if (kind.empty()) return r.Missing("kind", "add kind = \"write\" or \"read\"");
  const PhaseKindDef* k = KindNamed(kind);
  if (k == nullptr) {
    return r.Error(*r.Get("kind"), "kind",
                   absl::StrFormat("\"%s\" is not a phase kind; use %s", kind,
                                   KindNamesForMessage()));
  }
  p->kind = k->wire();
  RETURN_IF_ERROR(RefuseIoKeysNotRead(r, *k));
  k->SetDefaults(p);
  RETURN_IF_ERROR(r.Path("dir", &p->dir));
  if (p->dir.empty()) {
    return r.Missing("dir", "add dir = \"/path/on/the/agents\" (relative: below the agent's first root)");
  }
  RETURN_IF_ERROR(r.FileName("file_name", "testfile", &p->file_name));
  RETURN_IF_ERROR(r.Bool("file_per_process", &p->file_per_process));
  return ReadFileNames(r, p);
}

// tasks_per_agent: an integer (a list is a sweep: SweepAxesOf gives each
// point of it one value).
absl::Status ReadTasksPerAgent(const TableReader& r, PhasePlan* p) {
  uint64_t v = 1;
  if (const toml::node* n = r.Get("tasks_per_agent")) {
    RETURN_IF_ERROR(r.UintNode(*n, "tasks_per_agent", 1, kMaxAgentTasks, &v));
  }
  p->tasks_per_agent = {static_cast<uint32_t>(v)};
  return absl::OkStatus();
}

// total_size: the aggregate of a test, split over its tasks when the test
// runs (SplitAggregate in plan.h); block_size then has no meaning.
absl::Status ReadTotalSize(const TableReader& r, PhasePlan* p) {
  RETURN_IF_ERROR(r.Size("total_size", &p->total_bytes));
  if (r.Get("block_size")) {
    return r.Error(*r.Get("block_size"), "block_size",
                   "total_size is given too: total_size is split over the tasks of each test "
                   "and sets the block; give one of them");
  }
  if (!IsTransfer(p->kind)) {
    return r.Error(*r.Get("total_size"), "total_size",
                   absl::StrFormat("applies to %s phases, not to kind = \"%s\"", kTransferKinds,
                                   PhaseKindName(p->kind)));
  }
  if (p->total_bytes < p->transfer_bytes) {
    return r.Error(*r.Get("total_size"), "total_size",
                   absl::StrFormat("%s is smaller than one transfer_size (%s); each task needs "
                                   "at least one transfer: raise total_size",
                                   HumanBytes(p->total_bytes), HumanBytes(p->transfer_bytes)));
  }
  p->block_bytes = p->transfer_bytes;  // until the test's split (one transfer a task)
  return absl::OkStatus();
}

// transfer_size alone, for a kind without IOR's blocks (PhaseKindDef::
// IorBlocks: the AI kinds' I/O chunk); block_size, segments and total_size
// do not apply to it.
absl::Status ReadChunkOnly(const TableReader& r, PhasePlan* p) {
  RETURN_IF_ERROR(r.Size("transfer_size", &p->transfer_bytes));
  for (const char* key : {"block_size", "segments", "total_size"}) {
    if (r.Get(key) == nullptr) continue;
    return r.Error(*r.Get(key), key,
                   absl::StrFormat("applies to IOR-style phases, not to kind = \"%s\" (its "
                                   "sizes are its own keys: see docs/ai-workloads.md); drop it",
                                   PhaseKindName(p->kind)));
  }
  p->block_bytes = p->transfer_bytes;
  return absl::OkStatus();
}

// block_size x segments x tasks_per_agent in 64 bits, and within what a
// file offset can address: what one agent's tasks move (a shared file of
// more agents is checked again with their number: SplitAggregate).
absl::Status CheckShapeFits(const TableReader& r, const PhasePlan& p) {
  const uint64_t tpa = p.tasks_per_agent.empty() ? 1 : p.tasks_per_agent.front();
  const std::optional<uint64_t> bytes = CheckedProduct({p.block_bytes, p.segments, tpa});
  if (bytes && *bytes <= kMaxFileOffsetBytes) return absl::OkStatus();
  const char* key = r.Get("segments") ? "segments" : "block_size";
  return r.Error(r.Get(key) ? *r.Get(key) : *r.Get("block_size"), key,
                 absl::StrFormat("block_size %s (%u bytes) x segments %u x tasks_per_agent %u "
                                 "is more than %s (%s): one agent's tasks cannot address it "
                                 "(64-bit file offsets); lower block_size, segments or "
                                 "tasks_per_agent",
                                 HumanBytes(p.block_bytes), p.block_bytes, p.segments, tpa,
                                 HumanBytes(kMaxFileOffsetBytes),
                                 bytes ? HumanBytes(*bytes) + " asked"
                                       : std::string("the product overflows 64 bits")));
}

// transfer_size, block_size, segments, and IOR's rules between them.
absl::Status ReadTransferShape(const TableReader& r, PhasePlan* p) {
  if (!KindOf(p->kind).IorBlocks()) return ReadChunkOnly(r, p);
  RETURN_IF_ERROR(r.Size("transfer_size", &p->transfer_bytes));
  RETURN_IF_ERROR(r.Size("block_size", &p->block_bytes));
  RETURN_IF_ERROR(r.Uint("segments", 1, kMaxSegments, &p->segments));
  if (p->transfer_bytes % kTransferAlignBytes != 0) {
    return r.Error(*r.Get("transfer_size"), "transfer_size",
                   absl::StrFormat("%u bytes is not a multiple of %u (IOR's rule)",
                                   p->transfer_bytes, kTransferAlignBytes));
  }
  if (r.Get("total_size")) return ReadTotalSize(r, p);
  if (p->transfer_bytes > p->block_bytes) {
    return r.Error(EitherNode(r, "transfer_size", "block_size"), "transfer_size",
                   absl::StrFormat("transfer %s is larger than block %s; make block_size a "
                                   "multiple of transfer_size",
                                   HumanBytes(p->transfer_bytes), HumanBytes(p->block_bytes)));
  }
  if (p->block_bytes % p->transfer_bytes != 0) {
    return r.Error(EitherNode(r, "block_size", "transfer_size"), "block_size",
                   absl::StrFormat("block %u bytes is not a multiple of transfer %u bytes",
                                   p->block_bytes, p->transfer_bytes));
  }
  return CheckShapeFits(r, *p);
}

// repetitions of a phase: noted for ParsePlan, which checks that the
// phases and [run] agree.
absl::Status ReadRepetitions(const TableReader& r, const PhasePlan& p, PhaseAgreement* agreement) {
  const toml::node* n = r.Get("repetitions");
  if (n == nullptr) return absl::OkStatus();
  uint64_t v = 0;
  RETURN_IF_ERROR(r.UintNode(*n, "repetitions", 1, kMaxRepetitions, &v));
  agreement->repetitions[p.name] = v;
  return absl::OkStatus();
}

// fsync, fsync_per_transfer, direct, keep, verify, reorder_tasks, cache.
absl::Status ReadIoOptions(const TableReader& r, PhasePlan* p) {
  RETURN_IF_ERROR(r.Bool("fsync", &p->fsync));
  RETURN_IF_ERROR(r.Bool("fsync_per_transfer", &p->fsync_per_transfer));
  RETURN_IF_ERROR(r.Bool("direct", &p->direct));
  RETURN_IF_ERROR(r.Bool("keep", &p->keep));
  RETURN_IF_ERROR(r.Bool("verify", &p->verify));
  RETURN_IF_ERROR(r.Bool("reorder_tasks", &p->reorder_tasks));
  return r.OneOf("cache", {"none", "clients", "all"}, &p->cache);
}

// A signed integer key in [min, max]; `why` says what is accepted.
absl::Status ReadInt32(const TableReader& r, const char* key, int64_t min, int64_t max,
                       const char* why, int32_t* out) {
  const toml::node* n = r.Get(key);
  if (n == nullptr) return absl::OkStatus();
  if (!n->is_integer() || n->as_integer()->get() < min || n->as_integer()->get() > max) {
    return r.Error(*n, key, why);
  }
  *out = static_cast<int32_t>(n->as_integer()->get());
  return absl::OkStatus();
}

// The layout keys (any of them asks the directory's file system for a
// layout: Lustre `lfs setstripe`, CephFS ceph.dir.layout; object_size is
// CephFS's) and client checksums.
absl::Status ReadLayoutKeys(const TableReader& r, PhasePlan* p) {
  for (const char* k : {"stripe_count", "stripe_size", "stripe_index", "stripe_pool", "object_size"}) {
    if (r.Get(k)) p->set_stripe = true;
  }
  if (r.Get("object_size")) {
    RETURN_IF_ERROR(r.Size("object_size", &p->object_size_bytes));
    if (p->object_size_bytes == 0 || p->object_size_bytes % kStripeSizeMultiple != 0) {
      return r.Error(*r.Get("object_size"), "object_size",
                     absl::StrFormat("%u bytes is not a positive multiple of %s (CephFS's rule)",
                                     p->object_size_bytes, HumanBytes(kStripeSizeMultiple)));
    }
  }
  RETURN_IF_ERROR(ReadInt32(
      r, "stripe_count", -1, kMaxStripeCount,
      absl::StrFormat("use -1 (all OSTs), 0 (file system default) or 1..%d", kMaxStripeCount)
          .c_str(),
      &p->stripe_count));
  if (r.Get("stripe_size")) {
    RETURN_IF_ERROR(r.Size("stripe_size", &p->stripe_size_bytes));
    if (p->stripe_size_bytes % kStripeSizeMultiple != 0) {
      return r.Error(*r.Get("stripe_size"), "stripe_size",
                     absl::StrFormat("%u bytes is not a multiple of %s (Lustre's rule)",
                                     p->stripe_size_bytes, HumanBytes(kStripeSizeMultiple)));
    }
  }
  RETURN_IF_ERROR(ReadInt32(r, "stripe_index", -1, kMaxStripeIndex,
                            "use -1 (any OST) or an OST index", &p->stripe_index));
  RETURN_IF_ERROR(r.String("stripe_pool", &p->stripe_pool));
  if (r.Get("checksums")) {
    bool on = false;
    RETURN_IF_ERROR(r.Bool("checksums", &on));
    p->checksums = on ? v1::CHECKSUMS_ON : v1::CHECKSUMS_OFF;
  }
  return absl::OkStatus();
}

absl::Status CheckDirect(const TableReader& r, const PhasePlan& p) {
  if (!p.direct || p.transfer_bytes % kDirectIoAlignBytes == 0) return absl::OkStatus();
  return r.Error(*r.Get("direct"), "direct",
                 absl::StrFormat("O_DIRECT needs transfer_size a multiple of %s, got %u bytes",
                                 HumanBytes(kDirectIoAlignBytes), p.transfer_bytes));
}

// reorder_random (IOR -Z) and its seed (-X), read phases only.
absl::Status ReadRandomReorder(const TableReader& r, PhasePlan* p) {
  RETURN_IF_ERROR(r.Bool("reorder_random", &p->reorder_random));
  RETURN_IF_ERROR(OnlyFor(r, *p, "reorder_random", p->kind == v1::READ, "read"));
  if (const toml::node* n = r.Get("reorder_random_seed")) {
    RETURN_IF_ERROR(ReadInt32(r, "reorder_random_seed", INT32_MIN, INT32_MAX,
                              "use a whole number (IOR -X; negative: -seed + repetition)",
                              &p->reorder_random_seed));
    if (!p->reorder_random) {
      return r.Error(*n, "reorder_random_seed", "seeds reorder_random; add reorder_random = true");
    }
  }
  if (p->reorder_random && p->reorder_tasks) {
    return r.Error(*r.Get("reorder_random"), "reorder_random",
                   "reorder_tasks is set too; IOR takes -C or -Z, not both: choose one");
  }
  return absl::OkStatus();
}

// IOR's finer options, and the kinds they apply to.
absl::Status ReadIorFinerKeys(const TableReader& r, PhasePlan* p) {
  const bool transfer = IsTransfer(p->kind);
  const bool read = p->kind == v1::READ;
  RETURN_IF_ERROR(
      r.Uint32("reorder_node_offset", 1, kMaxReorderNodeOffset, &p->reorder_node_offset));
  RETURN_IF_ERROR(OnlyFor(r, *p, "reorder_node_offset", read, "read"));
  RETURN_IF_ERROR(r.Bool("remove_files", &p->remove_files));
  RETURN_IF_ERROR(OnlyFor(r, *p, "remove_files", read, "read"));
  RETURN_IF_ERROR(r.Bool("random_offsets", &p->random_offsets));
  RETURN_IF_ERROR(OnlyFor(r, *p, "random_offsets", transfer, kTransferKinds));
  RETURN_IF_ERROR(r.Bool("random_blocks", &p->random_blocks));
  RETURN_IF_ERROR(OnlyFor(r, *p, "random_blocks", read, "read"));
  if (p->random_blocks && p->random_offsets) {
    return r.Error(*r.Get("random_blocks"), "random_blocks",
                   "random_offsets is set too: give one (random_offsets: each transfer once, "
                   "shuffled, IOR -z; random_blocks: random blocks that may repeat, IOR -z -z)");
  }  RETURN_IF_ERROR(r.Uint32("stonewall_seconds", 0, kMaxStonewallSeconds, &p->stonewall_seconds));
  RETURN_IF_ERROR(OnlyFor(r, *p, "stonewall_seconds", transfer, kTransferKinds));
  RETURN_IF_ERROR(r.Bool("stonewall_wear_out", &p->stonewall_wear_out));
  RETURN_IF_ERROR(r.Bool("verify_after_write", &p->verify_after_write));
  RETURN_IF_ERROR(OnlyFor(r, *p, "verify_after_write", p->kind == v1::WRITE, "write"));
  RETURN_IF_ERROR(r.Uint32("delay_seconds", 0, kMaxDelaySeconds, &p->delay_seconds));
  RETURN_IF_ERROR(r.Bool("intra_barriers", &p->intra_barriers));
  RETURN_IF_ERROR(OnlyFor(r, *p, "intra_barriers", transfer, kTransferKinds));
  RETURN_IF_ERROR(r.Bool("multi_file", &p->multi_file));
  RETURN_IF_ERROR(OnlyFor(r, *p, "multi_file", transfer, kTransferKinds));
  RETURN_IF_ERROR(ReadRandomReorder(r, p));
  if (p->random_offsets && p->total_bytes == 0 && p->block_bytes == p->transfer_bytes &&
      p->segments == 1) {
    return r.Error(*r.Get("random_offsets"), "random_offsets",
                   "block_size equals transfer_size with one segment: each task has a single "
                   "transfer, nothing to shuffle; make block_size a multiple of transfer_size");
  }
  if (p->stonewall_wear_out && p->stonewall_seconds == 0) {
    return r.Error(*r.Get("stonewall_wear_out"), "stonewall_wear_out",
                   "needs stonewall_seconds > 0 (wear-out continues after the stonewall)");
  }
  return absl::OkStatus();
}

bool IsDirItemOp(v1::MdtestOp op) {
  return op == v1::MD_DIR_CREATE || op == v1::MD_DIR_STAT || op == v1::MD_DIR_REMOVE ||
         op == v1::MD_DIR_RENAME;
}

// stonewall_count_from: a read takes the pairs an IOR write with wear-out
// agreed on; an mdtest stat, read or remove the items of an mdtest -W create.
absl::Status ReadStonewallCountFrom(const TableReader& r, const Plan& plan, PhasePlan* p) {
  const char* key = "stonewall_count_from";
  RETURN_IF_ERROR(r.String(key, &p->stonewall_count_from));
  if (r.Get(key) == nullptr) return absl::OkStatus();
  const bool ior_read = p->kind == v1::READ;
  const bool md_reader = p->kind == v1::MDTEST && IsMdtestItemReader(p->Own<MdtestPlan>().md_op);
  if (!ior_read && !md_reader) {
    return r.Error(*r.Get(key), key,
                   absl::StrFormat("applies to read phases and to mdtest phases that stat, read "
                                   "or remove items, not to kind = \"%s\"%s",
                                   PhaseKindName(p->kind),
                                   p->kind == v1::MDTEST
                                       ? absl::StrFormat(" md_op = \"%s\"",
                                                         MdtestOpName(p->Own<MdtestPlan>().md_op))
                                       : ""));
  }
  ASSIGN_OR_RETURN(const PhasePlan* src,
                   EarlierPhase(r, plan, key, p->stonewall_count_from,
                                ior_read ? "a write phase with stonewall_seconds and "
                                           "stonewall_wear_out = true"
                                         : "an mdtest create phase with md_stonewall_seconds"));
  if (ior_read && !(src->kind == v1::WRITE && src->stonewall_seconds > 0 && src->stonewall_wear_out)) {
    return r.Error(*r.Get(key), key,
                   absl::StrFormat("phase '%s' is not a write phase with stonewall_seconds > 0 and "
                                   "stonewall_wear_out = true, so its tasks agree on no count; "
                                   "give it those keys or name another phase",
                                   src->name));
  }
  if (md_reader &&
      !(src->kind == v1::MDTEST && IsMdtestCreate(src->Own<MdtestPlan>().md_op) &&
        src->Own<MdtestPlan>().md_stonewall_seconds > 0 &&
        IsDirItemOp(src->Own<MdtestPlan>().md_op) == IsDirItemOp(p->Own<MdtestPlan>().md_op))) {
    return r.Error(
        *r.Get(key), key,
        absl::StrFormat("phase '%s' is not an mdtest %s phase with "
                        "md_stonewall_seconds > 0, so it hands on no item count; "
                        "give it md_stonewall_seconds or name another phase",
                        src->name,
                        IsDirItemOp(p->Own<MdtestPlan>().md_op) ? "dir_create" : "file_create"));
  }
  return absl::OkStatus();
}

// Keys that contradict the phase's operation: verify on an mdtest phase that
// reads nothing (fsync on a read, verify on a write: RefuseIoKeysNotRead).
absl::Status CheckKindConflicts(const TableReader& r, const PhasePlan& p) {
  if (p.kind == v1::MDTEST && p.verify && p.Own<MdtestPlan>().md_op != v1::MD_FILE_READ) {
    return r.Error(*r.Get("verify"), "verify",
                   "applies to mdtest's file_read (mdtest -X checks what -w wrote); drop it here");
  }
  return absl::OkStatus();
}

// One key given as a list.
struct SweepAxis {
  std::string key;
  const toml::array* values;
};

// Keys whose value is a list itself, not a sweep (a command's argv).
const std::vector<std::string> kListValuedKeys = {"argv", "env", "file_names"};

// The keys of the phase given as lists, in plan order: only sweepable keys,
// no empty list, and every list longer than one as long as the others of
// this phase and of the earlier phases (recorded in *agreement).
absl::StatusOr<std::vector<SweepAxis>> SweepAxesOf(const TableReader& r, const toml::table& table,
                                                   const std::string& phase,
                                                   PhaseAgreement* agreement) {
  std::vector<SweepAxis> axes;
  for (const auto& [k, v] : table) {
    const std::string key(k.str());
    if (!v.is_array() || std::find(kListValuedKeys.begin(), kListValuedKeys.end(), key) !=
                             kListValuedKeys.end()) {
      continue;
    }
    if (!IsSweepableKey(key)) {
      return r.Error(v, key,
                     absl::StrFormat("a list makes a sweep, and '%s' cannot sweep; give one "
                                     "value (keys that can: %s)",
                                     key, absl::StrJoin(SweepableKeys(), ", ")));
    }
    if (v.as_array()->empty()) return r.Error(v, key, "the list is empty");
    axes.push_back({key, v.as_array()});
  }
  std::sort(axes.begin(), axes.end(), [](const SweepAxis& a, const SweepAxis& b) {
    const auto& pa = a.values->source().begin;
    const auto& pb = b.values->source().begin;
    return std::pair(pa.line, pa.column) < std::pair(pb.line, pb.column);
  });
  for (const SweepAxis& a : axes) {
    const size_t n = a.values->size();
    if (n == 1) continue;
    if (agreement->sweep_len > 1 && agreement->sweep_len != n) {
      return r.Error(*a.values, a.key,
                     absl::StrFormat("a sweep of %u values, but %s sweeps %u; phases of one "
                                     "plan sweep together (test i uses value i of every list), "
                                     "so give the lists the same length",
                                     n, agreement->sweep_owner, agreement->sweep_len));
    }
    agreement->sweep_len = n;
    agreement->sweep_owner = absl::StrFormat("phase '%s' key '%s'", phase, a.key);
  }
  return axes;
}

// A list element as the plan wrote it: "64k", "4", "true".
std::string ValueText(const toml::node& n) {
  if (n.is_string()) return n.as_string()->get();
  if (n.is_boolean()) return n.as_boolean()->get() ? "true" : "false";
  if (n.is_integer()) return absl::StrCat(n.as_integer()->get());
  return TableReader::TypeName(n);
}

// The phase with every key at one value (a sweep's point), checked.
absl::Status ParsePoint(const TableReader& r, const Plan& plan, PhaseAgreement* agreement,
                        PhasePlan* p) {
  RETURN_IF_ERROR(CheckName(r, *agreement, *p));
  RETURN_IF_ERROR(ReadKindAndFiles(r, p));
  RETURN_IF_ERROR(ReadTasksPerAgent(r, p));
  RETURN_IF_ERROR(ReadTransferShape(r, p));
  RETURN_IF_ERROR(ReadRepetitions(r, *p, agreement));
  RETURN_IF_ERROR(ReadIoOptions(r, p));
  RETURN_IF_ERROR(ReadLayoutKeys(r, p));
  RETURN_IF_ERROR(CheckDirect(r, *p));
  RETURN_IF_ERROR(ReadIorFinerKeys(r, p));
  // Each kind reads its own keys, and refuses them on phases of other kinds.
  for (const PhaseKindDef* kind : AllKinds()) RETURN_IF_ERROR(kind->ReadKeys(r, plan, p));
  RETURN_IF_ERROR(ReadStonewallCountFrom(r, plan, p));
  return CheckKindConflicts(r, *p);
}

}  // namespace

absl::Status ParsePhase(const toml::table& table, const std::string& source, int index,
                        Plan* plan, PhaseAgreement* agreement) {
  PhasePlan first;
  // Messages name the phase by its name once it is known.
  std::string label = absl::StrFormat("[[phase]] #%d", index + 1);
  RETURN_IF_ERROR(TableReader(table, source, label, PhaseKeys()).String("name", &first.name));
  // A name is shown on terminals, in text files and in errors: kept with its
  // control characters escaped (common/text_escape.h), the same everywhere.
  first.name = EscapeForTerminal(first.name);
  if (!first.name.empty()) label = absl::StrFormat("[[phase]] '%s'", first.name);
  TableReader r(table, source, label, PhaseKeys());
  // An unknown key's message lists the keys of the phase's kind (made only then).
  if (!r.CheckUnknown().ok()) return r.CheckUnknown(KeysOfNamedKind(r));
  ASSIGN_OR_RETURN(std::vector<SweepAxis> axes, SweepAxesOf(r, table, first.name, agreement));
  size_t len = 1;
  for (const SweepAxis& a : axes) len = std::max(len, a.values->size());
  std::vector<PhasePlan> points;
  for (size_t i = 0; i < len; ++i) {
    TableReader point(table, source, label, PhaseKeys());
    std::vector<std::string> where;
    for (const SweepAxis& a : axes) {
      const toml::node* v = a.values->get(std::min(i, a.values->size() - 1));
      point.Override(a.key, v);
      if (a.values->size() > 1) where.push_back(a.key + "=" + ValueText(*v));
    }
    PhasePlan p;
    p.name = first.name;
    absl::Status s = ParsePoint(point, *plan, agreement, &p);
    if (!s.ok() && len > 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s (in test %u of the sweep: %s)", s.message(), i, absl::StrJoin(where, " ")));
    }
    RETURN_IF_ERROR(s);
    points.push_back(std::move(p));
  }
  PhasePlan phase = points.front();
  phase.tasks_per_agent.clear();
  for (const PhasePlan& p : points) phase.tasks_per_agent.push_back(p.tasks_per_agent.front());
  if (len > 1) {
    for (const SweepAxis& a : axes) {
      if (a.values->size() == 1) continue;
      PhaseSweep& sw = phase.sweep.emplace_back();
      sw.key = a.key;
      for (const toml::node& v : *a.values) sw.values.push_back(ValueText(v));
    }
    phase.points = std::move(points);
  }
  agreement->names.insert(phase.name);
  plan->phases.push_back(std::move(phase));
  return absl::OkStatus();
}

}  // namespace lockstep
