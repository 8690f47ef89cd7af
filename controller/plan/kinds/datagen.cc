// kind = "datagen" (issue 30): writes a DLIO dataset once, the files split
// over all tasks of all agents (<dir>/train/<prefix>_<i>_of_<num_files>.<ext>,
// common/dataset.h). Its keys are the dataset's (ai_shared.h: this kind owns
// them, train reads them too) and dataset_memory_multiple, which the run
// resolves against the client agents' memory (controller/run/ai_checks.h).
// Result: files/s and MiB/s as an IOR-like row.
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "controller/plan/kinds/ai_shared.h"
#include "controller/plan/kinds/registry.h"
#include "controller/record/ai_reduce.h"
#include "controller/plan/kinds/ai_plan.h"

namespace lockstep::kinds {
namespace {

class DatagenKind : public PhaseKindDef {
 public:
  v1::PhaseKind wire() const override { return v1::DATAGEN; }

  void SetDefaults(PhasePlan* p) const override { SetAiChunkDefault(p); }
  bool IorBlocks() const override { return false; }

  std::vector<std::string> OwnKeys() const override {
    std::vector<std::string> keys = DatasetKeys();
    keys.push_back("dataset_memory_multiple");
    return keys;
  }

  // The dataset keys go to train phases as well; dataset_memory_multiple only here.
  absl::Status ReadKeys(const TableReader& r, const Plan&, PhasePlan* p) const override {
    RETURN_IF_ERROR(RefuseDatasetKeys(r, *p));
    RETURN_IF_ERROR(OnlyHere(r, *p, "dataset_memory_multiple"));
    if (p->kind != wire()) return absl::OkStatus();
    RETURN_IF_ERROR(CheckAiChunk(r, *p));
    RETURN_IF_ERROR(ReadDatasetKeys(r, p));
    return ReadNumber(r, "dataset_memory_multiple", 0, 1000,
                      &p->Own<AiPhasePlan>().dataset_memory_multiple);
  }

  void WriteToml(const PhasePlan& p, TomlLines* out) const override {
    WriteKeepAndDelay(p, out);
    out->Bool("fsync", p.fsync);
    WriteDatasetToml(p, out);
    out->Double("dataset_memory_multiple", p.Own<AiPhasePlan>().dataset_memory_multiple);
  }

  void FillSpec(const PhasePlan& p, v1::PhaseSpec* s) const override {
    FillDatasetSpec(p, s);
    s->set_dataset_memory_multiple(p.Own<AiPhasePlan>().dataset_memory_multiple);
  }

  // Its files stay for the later phases of the repetition (train) and go at
  // its end, as a write's.
  bool LeavesFiles(const PhasePlan&) const override { return true; }

  void Reduce(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec&,
              uint32_t rep, v1::PhaseRecord* pr) const override {
    ReduceDatagen(tasks, rep, pr);
  }

  std::vector<std::string> ReportNotes(
      const v1::PhaseRecord& pr, const std::map<std::string, std::string>&) const override {
    return DatagenReportLines(pr);
  }

  void CapForSmoke(const SmokeOptions& o, SmokeCapper* c, PhasePlan* p) const override {
    CapDatasetForSmoke(o, c, p);
    if (p->Own<AiPhasePlan>().dataset_memory_multiple > 0) {
      c->Dropped(absl::StrFormat("dataset_memory_multiple = %g",
                                 p->Own<AiPhasePlan>().dataset_memory_multiple),
                 "a smoke dataset is small on purpose");
      p->Own<AiPhasePlan>().dataset_memory_multiple = 0;
    }
  }

  void Estimate(const Plan&, const PhasePlan& p, uint32_t, uint32_t,
                PhaseEstimate* e) const override {
    e->bytes_per_task = static_cast<uint64_t>(DatasetBytesOf(p) / std::max<uint32_t>(e->tasks, 1));
    e->files = p.Own<AiPhasePlan>().num_files;
    e->note = "the dataset, split over the tasks";
  }
};

}  // namespace

std::unique_ptr<PhaseKindDef> MakeDatagenKind() { return std::make_unique<DatagenKind>(); }

}  // namespace lockstep::kinds
