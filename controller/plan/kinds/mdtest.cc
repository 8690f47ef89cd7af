// kind = "mdtest": one sub-phase (md_op) of mdtest for every task: a tree of
// branching md_branching and depth md_depth, md_items per task.
#include <algorithm>

#include "absl/strings/str_format.h"
#include "common/checked_math.h"
#include "common/limits.h"
#include "common/names.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "controller/plan/kinds/key_table.h"
#include "controller/plan/kinds/registry.h"
#include "controller/plan/limits.h"
#include "controller/plan/plan_smoke.h"
#include "controller/record/phase_reduce.h"
#include "controller/plan/kinds/mdtest_plan.h"

namespace lockstep::kinds {
namespace {

bool IsMdtestCreate(v1::MdtestOp op) { return op == v1::MD_FILE_CREATE || op == v1::MD_DIR_CREATE; }

// An mdtest phase: its operation, its items, file sizes and tree size.
absl::Status CheckMdtestPhase(const TableReader& r, const std::string& op, PhasePlan* p) {
  MdtestPlan& md = p->Own<MdtestPlan>();
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
  md.md_op = *parsed;
  const bool tree_op = md.md_op == v1::MD_TREE_CREATE || md.md_op == v1::MD_TREE_REMOVE;
  // md_items = 0 is mdtest without -n: the sub-phases run on no items.
  if (!tree_op && r.Get("md_items") == nullptr) {
    return r.Missing("md_items", "add md_items = 1000 (items per task, mdtest -n)");
  }
  if (md.md_write_bytes > kMaxMdtestFileBytes || md.md_read_bytes > kMaxMdtestFileBytes) {
    const char* key = md.md_write_bytes > kMaxMdtestFileBytes ? "md_write_size" : "md_read_size";
    return r.Error(*r.Get(key), key,
                   absl::StrFormat("at most %s per file", HumanBytes(kMaxMdtestFileBytes)));
  }
  if (r.Get("md_stonewall_seconds") && !IsMdtestCreate(md.md_op)) {
    return r.Error(*r.Get("md_stonewall_seconds"), "md_stonewall_seconds",
                   absl::StrFormat("applies to md_op = \"file_create\" or \"dir_create\" (mdtest "
                                   "-W stops creating), not to md_op = \"%s\"; later phases take "
                                   "the count with stonewall_count_from",
                                   op));
  }
  double dirs = 0, level = 1;
  for (uint32_t d = 0; d <= md.md_depth; ++d, level *= md.md_branching) dirs += level;
  if (dirs > static_cast<double>(kMaxMdtestTreeDirs)) {
    const char* key = r.Get("md_depth") ? "md_depth" : "md_branching";
    return r.Error(*r.Get(key), "md_depth",
                   absl::StrFormat("a tree of branching %u and depth %u has %.0f directories; "
                                   "the limit is 10 million",
                                   md.md_branching, md.md_depth, dirs));
  }
  return absl::OkStatus();
}

class MdtestKind : public PhaseKindDef {
 public:
  v1::PhaseKind wire() const override { return v1::MDTEST; }
  // fsync: mdtest -Y (a sync after each phase); verify: -X (file_read).
  uint32_t IoKeys() const override { return kIoFsync | kIoVerify | kIoLayout | kIoChecksums; }

  std::vector<std::string> OwnKeys() const override {
    std::vector<std::string> keys = keys_.Keys();
    keys.insert(keys.begin(), "md_op");
    return keys;
  }

  std::vector<SweptKey> SweptKeys() const override { return keys_.Swept(); }

  absl::Status ReadKeys(const TableReader& r, const Plan&, PhasePlan* p) const override {
    MdtestPlan other_kind;  // another kind's phase: read to check, not kept
    MdtestPlan& md = p->kind == wire() ? p->Own<MdtestPlan>() : other_kind;
    std::string op;
    RETURN_IF_ERROR(r.String("md_op", &op));
    RETURN_IF_ERROR(keys_.Read(r, &md));
    RETURN_IF_ERROR(RefuseOwnKeys(r, *p));
    if (p->kind != wire()) return absl::OkStatus();
    return CheckMdtestPhase(r, op, p);
  }

  void WriteToml(const PhasePlan& p, TomlLines* out) const override {
    const MdtestPlan& md = p.Own<MdtestPlan>();
    WriteKeepAndDelay(p, out);
    out->String("md_op", MdtestOpName(md.md_op));
    keys_.Write(md, out);
    out->Bool("fsync", p.fsync);
    out->Bool("verify", p.verify);
  }

  void FillSpec(const PhasePlan& p, v1::PhaseSpec* s) const override {
    const MdtestPlan& md = p.Own<MdtestPlan>();
    s->set_md_op(md.md_op);
    keys_.Fill(md, s);
    // -W: the tasks of every agent agree on the count at the wall.
    if (md.md_stonewall_seconds > 0) s->set_sync_across_agents(true);
  }

  // mdtest's own file_remove, dir_remove and tree_remove phases remove what
  // its creates made (a plan without them keeps the tree, as mdtest -C
  // does); the agent still removes the tree of a session whose controller
  // is gone (Workload::CreatesFiles() is true for mdtest).
  bool LeavesFiles(const PhasePlan&) const override { return false; }

  void Reduce(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
              uint32_t rep, v1::PhaseRecord* pr) const override {
    ReduceMdtest(tasks, spec, rep, pr);
  }

  // mdtest's lines are the mdtest report's (controller/mdtest/mdtest_output.h).
  bool IorReportRow() const override { return false; }
  // Its stonewall count is of items (files per task), not of transfers.
  uint64_t StonewallTransferBytes(const v1::PhaseSpec&) const override { return 0; }

  void CapForSmoke(const SmokeOptions& o, SmokeCapper* c, PhasePlan* p) const override {
    MdtestPlan& md = p->Own<MdtestPlan>();
    c->Count("md_items", o.max_items, &md.md_items);
    c->Bytes("md_write_bytes", o.max_bytes, &md.md_write_bytes);
    c->Bytes("md_read_bytes", o.max_bytes, &md.md_read_bytes);
    c->Count("md_stonewall_seconds", o.max_stonewall_seconds, &md.md_stonewall_seconds);
  }

  void Estimate(const Plan&, const PhasePlan& p, uint32_t, uint32_t,
                PhaseEstimate* e) const override {
    const MdtestPlan& md = p.Own<MdtestPlan>();
    e->ops_per_task = md.md_items;
    e->bytes_per_task = SaturatingMul(md.md_items, std::max(md.md_write_bytes, md.md_read_bytes));
    e->files = md.md_op == v1::MD_FILE_CREATE ? md.md_items * e->tasks : 0;
    e->note = MdtestOpName(md.md_op);
  }

 private:
  // Every key but md_op (a name, checked with the others in CheckMdtestPhase).
  using P = MdtestPlan;
  using S = v1::PhaseSpec;
  const KeyTable<P> keys_ =
      KeyTable<P>()
          .Uint32("md_branching", &P::md_branching, 1, kMaxMdBranching, &S::set_md_branching)
          .Uint32("md_depth", &P::md_depth, 0, kMaxMdDepth, &S::set_md_depth)
          // Written at 0 too: mdtest without -n.
          .Uint("md_items", &P::md_items, 0, kMaxMdItems, &S::set_md_items,
                {.swept = true, .write_zero = true})
          .Bool("md_unique_dir", &P::md_unique_dir, &S::set_md_unique_dir)
          .Size("md_write_size", &P::md_write_bytes, &S::set_md_write_bytes, {.swept = true})
          .Size("md_read_size", &P::md_read_bytes, &S::set_md_read_bytes, {.swept = true})
          .Bool("md_leaf_only", &P::md_leaf_only, &S::set_md_leaf_only)
          .Uint32("md_neighbor_shift", &P::md_neighbor_shift, 0, kMaxMdNeighborShift,
                  &S::set_md_neighbor_shift)
          .Uint32("md_stonewall_seconds", &P::md_stonewall_seconds, 0, kMaxStonewallSeconds,
                  &S::set_md_stonewall_seconds);
};

}  // namespace

std::unique_ptr<PhaseKindDef> MakeMdtestKind() { return std::make_unique<MdtestKind>(); }

}  // namespace lockstep::kinds
