// kind = "datagen" (issue 30): writes a DLIO dataset once, the files split
// over all tasks of all agents (<dir>/train/<prefix>_<i>_of_<num_files>.<ext>,
// common/dataset.h). Its keys are the dataset's (ai_shared.h: this kind owns
// them, train reads them too) and dataset_memory_multiple, which the run
// resolves against the client agents' memory (FitToClients), and a dataset
// that does not fit their free space is refused before the run
// (CheckOnClients; --force skips it).
// Result: files/s and MiB/s as an IOR-like row.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_format.h"
#include "common/dataset.h"
#include "common/root_facts.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "controller/plan/kinds/ai_shared.h"
#include "controller/plan/kinds/registry.h"
#include "controller/record/ai_reduce.h"
#include "controller/plan/kinds/ai_plan.h"

namespace lockstep::kinds {
namespace {

// The dataset's spec fields (FillDatasetSpec) with `num_files`, at the mean
// record size: the sizing counts one file's layout times the files, not
// each file's drawn size (record_size_stdev), which would take a pass over
// every file.
v1::PhaseSpec DatasetSpecOf(const PhasePlan& p, uint64_t num_files) {
  v1::PhaseSpec s;
  FillDatasetSpec(p, &s);
  s.set_num_files(num_files);
  s.set_record_stdev_bytes(0);
  return s;
}

class DatagenKind : public PhaseKindDef {
 public:
  v1::PhaseKind wire() const override { return v1::DATAGEN; }

  void SetDefaults(PhasePlan* p) const override { SetAiChunkDefault(p); }
  bool IorBlocks() const override { return false; }
  uint32_t IoKeys() const override { return kIoSizes | kIoFsync | kIoLayout | kIoChecksums; }

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

  // dataset_memory_multiple: at least that many times the client hosts'
  // memory (each host counted once), so that reads cannot come from the
  // page cache; the train phases of the same dataset read as many files.
  void FitToClients(const PhasePlan& p, const std::vector<ClientFacts>& clients,
                    ClientFit* fit) const override {
    const AiPhasePlan& a = p.Own<AiPhasePlan>();
    std::map<std::string, uint64_t> memory_by_host;
    for (const ClientFacts& c : clients) memory_by_host[c.facts->hostname()] = c.facts->memory_bytes();
    uint64_t memory = 0;
    for (const auto& [host, bytes] : memory_by_host) memory += bytes;
    if (a.dataset_memory_multiple <= 0 || memory == 0) return;
    const uint64_t file_bytes = DatasetFileLayoutOf(DatasetSpecOf(p, a.num_files), 0).file_bytes;
    const double want = a.dataset_memory_multiple * static_cast<double>(memory);
    const uint64_t files = static_cast<uint64_t>(std::ceil(want / std::max<uint64_t>(file_bytes, 1)));
    if (files <= a.num_files) return;
    fit->counts[DatasetFitKey(p)] = files;
    fit->notes.push_back(absl::StrFormat(
        "phase %s: num_files %u -> %u (dataset_memory_multiple %g x %s of memory on %u client "
        "hosts: %s of files of %s)",
        p.name, a.num_files, files, a.dataset_memory_multiple, HumanBytes(memory),
        memory_by_host.size(), HumanBytes(files * file_bytes), HumanBytes(file_bytes)));
  }

  // The dataset against the free space of the root its dir is on: the
  // whole of it on a shared file system, each host's agents' share on a
  // local one.
  void CheckOnClients(const PhasePlan& p, const std::vector<ClientFacts>& clients,
                      const ClientFit& fit, std::vector<std::string>* refused) const override {
    const AiPhasePlan& a = p.Own<AiPhasePlan>();
    uint64_t files = a.num_files;
    if (auto chosen = fit.counts.find(DatasetFitKey(p)); chosen != fit.counts.end()) {
      files = chosen->second;
    }
    const uint64_t dataset = DatasetBytes(DatasetSpecOf(p, files));
    std::map<std::string, uint32_t> agents_by_host;
    for (const ClientFacts& c : clients) ++agents_by_host[c.facts->hostname()];
    std::set<std::string> said;
    for (const ClientFacts& c : clients) {
      const v1::HostFacts& f = *c.facts;
      const v1::RootFacts* root = RootOf(p.dir, f);
      if (root == nullptr || !said.insert(f.hostname() + "|" + root->path()).second) continue;
      const uint64_t need = CapabilitiesOf(*root).shared()
                                ? dataset
                                : static_cast<uint64_t>(static_cast<double>(dataset) *
                                                        agents_by_host[f.hostname()] /
                                                        clients.size());
      if (need <= root->free_bytes()) continue;
      refused->push_back(absl::StrFormat(
          "%s: [[phase]] '%s' key 'num_files': %u files of %u samples of %s make a dataset of "
          "%s, and %s needs %s of it in %s (%s) on agent %s (%s), where %s is free; lower "
          "num_files or record_size, free space, point dir at a larger file system, or run "
          "with --force",
          a.dataset_pos, p.name, files, a.samples_per_file, HumanBytes(a.record_bytes),
          HumanBytes(dataset), f.hostname(), HumanBytes(need), root->path(), root->fs_type(),
          c.address, f.hostname(), HumanBytes(root->free_bytes())));
    }
  }

  void ApplyFit(const ClientFit& fit, v1::PhaseSpec* spec) const override {
    ApplyDatasetFit(fit, spec);
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
