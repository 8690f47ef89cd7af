// write, read and rewrite: IOR's transfers. Their keys (file_per_process
// ... intra_barriers) are the shared ones of phase_table.cc; the kind adds
// what differs between the three.
#include "absl/strings/str_format.h"
#include "common/checked_math.h"
#include "controller/plan/kinds/registry.h"
#include "controller/record/phase_reduce.h"

namespace lockstep::kinds {
namespace {

class TransferKind : public PhaseKindDef {
 public:
  explicit TransferKind(v1::PhaseKind kind) : kind_(kind) {}
  v1::PhaseKind wire() const override { return kind_; }
  bool IorTransfer() const override { return true; }
  // A read syncs nothing; a write's check is verify_after_write (IOR -W).
  uint32_t IoKeys() const override {
    if (kind_ == v1::READ) return kIoAllKeys & ~(kIoFsync | kIoFsyncPerTransfer);
    if (kind_ == v1::WRITE) return kIoAllKeys & ~kIoVerify;
    return kIoAllKeys;
  }
  std::string IoKeyHint(const std::string& key) const override {
    if (kind_ == v1::WRITE && key == "verify") {
      return "a write checks what it wrote with verify_after_write (IOR -W); verify on the read "
             "phase checks what the write wrote (IOR -R)";
    }
    if (kind_ == v1::READ && key.rfind("fsync", 0) == 0) return "a read writes nothing to sync";
    return "";
  }

  void WriteToml(const PhasePlan& p, TomlLines* out) const override {
    out->Bool("file_per_process", p.file_per_process);
    WriteIorShape(p, out);
    out->Bool("reorder_tasks", p.reorder_tasks);
    if ((p.reorder_tasks || p.reorder_random) && p.reorder_node_offset != 1) {
      out->Uint("reorder_node_offset", p.reorder_node_offset);
    }
    out->Bool("remove_files", p.remove_files);
    out->Bool("reorder_random", p.reorder_random);
    if (p.reorder_random && p.reorder_random_seed != 0) {
      out->Int("reorder_random_seed", p.reorder_random_seed);
    }
    out->Bool("multi_file", p.multi_file);
    out->Bool("random_offsets", p.random_offsets);
    out->Bool("random_blocks", p.random_blocks);
    out->Uint("stonewall_seconds", p.stonewall_seconds);
    out->Bool("stonewall_wear_out", p.stonewall_wear_out);
    out->Bool("verify_after_write", p.verify_after_write);
    out->Bool("intra_barriers", p.intra_barriers);
    WriteKeepAndDelay(p, out);
  }

  // A write leaves its files; a read removes those it read with remove_files
  // (IOR without -k); a rewrite works on files an earlier write left.
  bool LeavesFiles(const PhasePlan& p) const override {
    return kind_ == v1::WRITE || (kind_ == v1::READ && p.remove_files);
  }

  void Reduce(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
              uint32_t rep, v1::PhaseRecord* pr) const override {
    ReduceTransfer(tasks, spec, rep, pr);
  }

  void Estimate(const Plan& plan, const PhasePlan& p, uint32_t test, uint32_t clients,
                PhaseEstimate* e) const override {
    if (auto split = SplitAggregate(plan, p, test, clients); split.ok()) {
      e->bytes_per_task = SaturatingMul(split->block_bytes, p.segments);  // total_size: this test's split
    } else {
      e->note = std::string(split.status().message());
    }
    e->files = p.file_per_process ? e->tasks : 1;
    if (kind_ == v1::REWRITE) e->note = "read and written back";
  }

 private:
  v1::PhaseKind kind_;
};

}  // namespace

std::unique_ptr<PhaseKindDef> MakeTransferKind(v1::PhaseKind kind) {
  return std::make_unique<TransferKind>(kind);
}

}  // namespace lockstep::kinds
