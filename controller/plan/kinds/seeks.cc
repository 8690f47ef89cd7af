// kind = "seeks": bonnie++'s random seeks over the phase's shared file:
// `seeks` per task, seek_rewrite_pct of them written back; transfer_size is
// 8 KiB (bonnie++'s chunk) unless the phase sets it.
#include "absl/strings/str_format.h"
#include "common/checked_math.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "controller/plan/kinds/key_table.h"
#include "controller/plan/kinds/registry.h"
#include "controller/plan/limits.h"
#include "controller/plan/plan_smoke.h"
#include "controller/record/phase_reduce.h"
#include "controller/plan/kinds/seeks_plan.h"

namespace lockstep::kinds {
namespace {

class SeeksKind : public PhaseKindDef {
 public:
  v1::PhaseKind wire() const override { return v1::SEEKS; }
  // file_per_process only to refuse it below, with bonnie++'s reason.
  uint32_t IoKeys() const override {
    return kIoSizes | kIoFilePerProcess | kIoFsync | kIoFsyncPerTransfer | kIoDirect | kIoVerify |
           kIoLayout | kIoChecksums;
  }

  void SetDefaults(PhasePlan* p) const override { p->transfer_bytes = kDefaultSeekTransferBytes; }

  std::vector<std::string> OwnKeys() const override { return keys_.Keys(); }

  absl::Status ReadKeys(const TableReader& r, const Plan&, PhasePlan* p) const override {
    SeeksPlan other_kind;  // another kind's phase: read to check, not kept
    SeeksPlan& sk = p->kind == wire() ? p->Own<SeeksPlan>() : other_kind;
    RETURN_IF_ERROR(keys_.Read(r, &sk));
    RETURN_IF_ERROR(RefuseOwnKeys(r, *p));
    if (p->kind != wire()) return absl::OkStatus();
    if (sk.seeks == 0) {
      return r.Missing("seeks", "add seeks = 2667 (per task; bonnie++ does 8000 over 3 seekers, "
                                "tasks_per_agent = 3)");
    }
    if (p->file_per_process) {
      return r.Error(*r.Get("file_per_process"), "file_per_process",
                     "a seeks phase works on one shared file (bonnie++'s); drop file_per_process");
    }
    return absl::OkStatus();
  }

  void WriteToml(const PhasePlan& p, TomlLines* out) const override {
    WriteKeepAndDelay(p, out);
    WriteIorShape(p, out);  // a seeks phase has no total_size: block_size
    keys_.Write(p.Own<SeeksPlan>(), out);
  }

  void FillSpec(const PhasePlan& p, v1::PhaseSpec* s) const override {
    keys_.Fill(p.Own<SeeksPlan>(), s);
  }

  // It may lay its file out (agent/workloads/seeks.h).
  bool LeavesFiles(const PhasePlan&) const override { return true; }

  void Reduce(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
              uint32_t rep, v1::PhaseRecord* pr) const override {
    ReduceSeeks(tasks, spec, rep, pr);
  }

  // bonnie++'s figures: seeks/s and the slowest seek (its Latency line).
  std::vector<std::string> ReportNotes(
      const v1::PhaseRecord& p, const std::map<std::string, std::string>&) const override {
    return {absl::StrFormat(
        "seeks: %u seeks (%u rewritten) of %s in %s, %.1f seeks/s; latency mean %.0f us, "
        "p99 %.0f us, max %.0f us",
        p.latency().ops(), SeeksRewritten(p), HumanBytes(p.spec().transfer_bytes()),
        HumanBytes(p.spec().block_bytes() * p.spec().segments() * p.spec().total_tasks()),
        p.row().iops(), p.latency().mean_us(), p.latency().p99_us(), p.latency().max_us())};
  }

  void CapForSmoke(const SmokeOptions& o, SmokeCapper* c, PhasePlan* p) const override {
    c->Count("seeks", o.max_items, &p->Own<SeeksPlan>().seeks);
  }

  // Random reads of transfer_bytes, seek_rewrite_pct of them written back.
  void Estimate(const Plan&, const PhasePlan& p, uint32_t, uint32_t,
                PhaseEstimate* e) const override {
    const SeeksPlan& sk = p.Own<SeeksPlan>();
    e->ops_per_task = sk.seeks;
    e->bytes_per_task = SaturatingMul(SaturatingMul(sk.seeks, p.transfer_bytes), 100 + sk.seek_rewrite_pct) / 100;
    e->files = 1;
    e->ops_rate_only = true;
    e->note = absl::StrFormat("%u%% written back; timed at the metadata rate", sk.seek_rewrite_pct);
  }

 private:
  const KeyTable<SeeksPlan> keys_ =
      KeyTable<SeeksPlan>()
          .Uint("seeks", &SeeksPlan::seeks, 1, kMaxSeeksPerTask, &v1::PhaseSpec::set_seeks_per_task)
          .Uint32("seek_rewrite_pct", &SeeksPlan::seek_rewrite_pct, 0, 100,
                  &v1::PhaseSpec::set_seek_rewrite_pct, {.write_zero = true});
};

}  // namespace

std::unique_ptr<PhaseKindDef> MakeSeeksKind() { return std::make_unique<SeeksKind>(); }

}  // namespace lockstep::kinds
