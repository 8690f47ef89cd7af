// kind = "small_files": per task, `small_files` files of sizes log-uniform in
// [small_file_min_size, small_file_max_size], small_files_per_dir per dir;
// created and written (the timed row), then read back (row "readback").
#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "common/limits.h"
#include "common/sizes.h"
#include "controller/plan/kinds/key_table.h"
#include "controller/plan/kinds/registry.h"
#include "controller/plan/limits.h"
#include "controller/plan/plan_smoke.h"
#include "controller/plan/table_reader.h"
#include "controller/record/phase_reduce.h"
#include "common/status_macros.h"
#include "controller/plan/kinds/small_files_plan.h"

namespace lockstep::kinds {
namespace {

// The mean of a log-uniform size in [lo, hi].
double LogUniformMean(uint64_t lo, uint64_t hi) {
  if (hi <= lo || lo == 0) return static_cast<double>(hi);
  return static_cast<double>(hi - lo) / std::log(static_cast<double>(hi) / static_cast<double>(lo));
}

class SmallFilesKind : public PhaseKindDef {
 public:
  v1::PhaseKind wire() const override { return v1::SMALL_FILES; }
  // fsync_per_transfer: an fsync per file.
  uint32_t IoKeys() const override { return kIoFsyncPerTransfer | kIoLayout | kIoChecksums; }

  std::vector<std::string> OwnKeys() const override { return keys_.Keys(); }
  std::vector<SweptKey> SweptKeys() const override { return keys_.Swept(); }

  absl::Status ReadKeys(const TableReader& r, const Plan&, PhasePlan* p) const override {
    SmallFilesPlan other_kind;  // another kind's phase: read to check, not kept
    SmallFilesPlan& sf = p->kind == wire() ? p->Own<SmallFilesPlan>() : other_kind;
    RETURN_IF_ERROR(keys_.Read(r, &sf));
    RETURN_IF_ERROR(RefuseOwnKeys(r, *p));
    if (p->kind != wire()) return absl::OkStatus();
    if (sf.small_files == 0) {
      return r.Missing("small_files", "add small_files = 1000 (files per task)");
    }
    if (sf.small_file_min_bytes > sf.small_file_max_bytes) {
      return r.Error(*r.Get("small_file_min_size"), "small_file_min_size",
                     absl::StrFormat("%s is larger than small_file_max_size %s",
                                     HumanBytes(sf.small_file_min_bytes),
                                     HumanBytes(sf.small_file_max_bytes)));
    }
    if (sf.small_file_max_bytes > kMaxSmallFileBytes) {
      return r.Error(*r.Get("small_file_max_size"), "small_file_max_size",
                     absl::StrFormat("small files are at most %s each",
                                     HumanBytes(kMaxSmallFileBytes)));
    }
    return absl::OkStatus();
  }

  void WriteToml(const PhasePlan& p, TomlLines* out) const override {
    WriteKeepAndDelay(p, out);
    keys_.Write(p.Own<SmallFilesPlan>(), out);
    out->Bool("fsync_per_transfer", p.fsync_per_transfer);
  }

  void FillSpec(const PhasePlan& p, v1::PhaseSpec* s) const override {
    keys_.Fill(p.Own<SmallFilesPlan>(), s);
  }

  bool LeavesFiles(const PhasePlan&) const override { return true; }

  void Reduce(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
              uint32_t rep, v1::PhaseRecord* pr) const override {
    ReduceSmallFiles(tasks, spec, rep, pr);
  }

  void CapForSmoke(const SmokeOptions& o, SmokeCapper* c, PhasePlan* p) const override {
    SmallFilesPlan& sf = p->Own<SmallFilesPlan>();
    c->Count("small_files", o.max_items, &sf.small_files);
    c->Bytes("small_file_max_size", std::min<uint64_t>(o.max_bytes, 1 << 20),
             &sf.small_file_max_bytes);
    sf.small_file_min_bytes = std::min(sf.small_file_min_bytes, sf.small_file_max_bytes);
  }

  void Estimate(const Plan&, const PhasePlan& p, uint32_t, uint32_t,
                PhaseEstimate* e) const override {
    const SmallFilesPlan& sf = p.Own<SmallFilesPlan>();
    e->bytes_per_task = static_cast<uint64_t>(
        static_cast<double>(sf.small_files) *
        LogUniformMean(sf.small_file_min_bytes, sf.small_file_max_bytes));
    e->ops_per_task = sf.small_files;
    e->files = sf.small_files * e->tasks;
    e->note = "written, then read back";
  }

 private:
  using P = SmallFilesPlan;
  const KeyTable<P> keys_ =
      KeyTable<P>()
          .Uint("small_files", &P::small_files, 1, kMaxSmallFiles, &v1::PhaseSpec::set_small_files,
                {.swept = true})
          .Size("small_file_min_size", &P::small_file_min_bytes,
                &v1::PhaseSpec::set_small_file_min_bytes, {.swept = true})
          .Size("small_file_max_size", &P::small_file_max_bytes,
                &v1::PhaseSpec::set_small_file_max_bytes, {.swept = true})
          .Uint32("small_files_per_dir", &P::small_files_per_dir, 1, kMaxSmallFilesPerDir,
                  &v1::PhaseSpec::set_small_files_per_dir, {.swept = true});
};

}  // namespace

std::unique_ptr<PhaseKindDef> MakeSmallFilesKind() { return std::make_unique<SmallFilesKind>(); }

}  // namespace lockstep::kinds
