// kind = "train" (issue 30, after DLIO): each task is one simulated
// accelerator that reads its share of the dataset's samples (the dataset
// keys of ai_shared.h, as the datagen phase wrote them) per epoch in
// batches, with read_threads readers prefetching ahead of it, and computes
// computation_time_seconds per batch. Result: samples/s, MiB/s, AU (compute
// / wall) per accelerator, host and phase, pass/fail against au_threshold.
#include <algorithm>
#include <limits>
#include <random>

#include "absl/strings/str_format.h"
#include "common/limits.h"
#include "common/status_macros.h"
#include "controller/plan/kinds/ai_shared.h"
#include "controller/plan/kinds/registry.h"
#include "controller/record/ai_reduce.h"
#include "controller/plan/kinds/ai_plan.h"
#include "controller/record/fold.h"

namespace lockstep::kinds {
namespace {

constexpr uint32_t kMaxEpochs = 100000;
constexpr uint32_t kMaxBatchSize = 1u << 24;

absl::Status ReadShuffle(const TableReader& r, const char* key, v1::ShuffleMode* out) {
  std::string v;
  RETURN_IF_ERROR(r.OneOf(key, {"off", "seed", "random"}, &v));
  if (v == "seed") *out = v1::SHUFFLE_SEED;
  if (v == "random") *out = v1::SHUFFLE_RANDOM;
  return absl::OkStatus();
}

const char* ShuffleName(v1::ShuffleMode m) {
  return m == v1::SHUFFLE_SEED ? "seed" : m == v1::SHUFFLE_RANDOM ? "random" : "off";
}

// au_threshold: (0, 1], and only with a compute time (AU is compute / wall);
// MLPerf Storage's 0.90 when a compute time is given without it.
absl::Status ReadAuThreshold(const TableReader& r, AiPhasePlan* a) {
  const toml::node* n = r.Get("au_threshold");
  if (n == nullptr) {
    if (a->computation_time_seconds > 0) a->au_threshold = 0.90;  // unet3d's and resnet50's
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(ReadNumber(r, "au_threshold", 0, 1, &a->au_threshold));
  if (a->au_threshold <= 0) {
    return r.Error(*n, "au_threshold", "must be in (0, 1]: 0.90 as MLPerf Storage's unet3d and "
                                       "resnet50, 0.70 as cosmoflow; drop it to not judge AU");
  }
  if (a->computation_time_seconds <= 0) {
    return r.Error(*n, "au_threshold",
                   absl::StrFormat("%g with computation_time_seconds = 0: AU is compute time / "
                                   "wall time, 0 without compute, so the phase could never "
                                   "pass; give computation_time_seconds (DLIO's "
                                   "train.computation_time, per batch) or drop au_threshold",
                                   a->au_threshold));
  }
  return absl::OkStatus();
}

// The AU of the slowest host (an agent that ran tasks); the summary's
// au_min for records without per-agent AU.
double HostMinAu(const v1::PhaseRecord& pr) {
  double lo = std::numeric_limits<double>::infinity();
  for (const v1::AgentPhaseRecord& a : pr.agents()) {
    if (a.tasks_size() > 0 || a.au() > 0) lo = std::min(lo, a.au());
  }
  return lo == std::numeric_limits<double>::infinity() ? pr.ai().au_min() : lo;
}

class TrainKind : public PhaseKindDef {
 public:
  v1::PhaseKind wire() const override { return v1::TRAIN; }

  void SetDefaults(PhasePlan* p) const override { SetAiChunkDefault(p); }
  bool IorBlocks() const override { return false; }
  uint32_t IoKeys() const override { return kIoSizes | kIoLayout | kIoChecksums; }

  // Its own; the dataset keys it reads are datagen's (ai_shared.h).
  std::vector<std::string> OwnKeys() const override {
    return {"epochs", "batch_size", "read_threads", "prefetch_batches",
            "computation_time_seconds", "computation_time_stdev_seconds", "compute",
            "file_shuffle", "sample_shuffle", "shuffle_seed", "au_threshold",
            "total_training_steps"};
  }

  absl::Status ReadKeys(const TableReader& r, const Plan&, PhasePlan* p) const override {
    RETURN_IF_ERROR(RefuseOwnKeys(r, *p));
    if (p->kind != wire()) return absl::OkStatus();
    RETURN_IF_ERROR(CheckAiChunk(r, *p));
    RETURN_IF_ERROR(ReadDatasetKeys(r, p));
    AiPhasePlan& a = p->Own<AiPhasePlan>();
    RETURN_IF_ERROR(r.Uint32("epochs", 1, kMaxEpochs, &a.epochs));
    if (r.Get("batch_size") == nullptr) {
      return r.Missing("batch_size",
                       "add batch_size = 7 (samples per batch; DLIO's reader.batch_size)");
    }
    RETURN_IF_ERROR(r.Uint32("batch_size", 1, kMaxBatchSize, &a.batch_size));
    RETURN_IF_ERROR(r.Uint32("read_threads", 1, kMaxReadThreads, &a.read_threads));
    RETURN_IF_ERROR(r.Uint32("prefetch_batches", 1, kMaxPrefetchBatches, &a.prefetch_batches));
    const double max_s = static_cast<double>(kMaxComputationTimeNs) / 1e9;
    RETURN_IF_ERROR(ReadNumber(r, "computation_time_seconds", 0, max_s,
                               &a.computation_time_seconds));
    RETURN_IF_ERROR(ReadNumber(r, "computation_time_stdev_seconds", 0, max_s,
                               &a.computation_stdev_seconds));
    std::string compute = "sleep";
    RETURN_IF_ERROR(r.OneOf("compute", {"sleep", "spin"}, &compute));
    a.compute_spin = compute == "spin";
    RETURN_IF_ERROR(ReadShuffle(r, "file_shuffle", &a.file_shuffle));
    RETURN_IF_ERROR(ReadShuffle(r, "sample_shuffle", &a.sample_shuffle));
    RETURN_IF_ERROR(r.Uint("shuffle_seed", 0, UINT64_MAX >> 1, &a.shuffle_seed));
    RETURN_IF_ERROR(r.Uint("total_training_steps", 0, UINT64_MAX >> 1, &a.total_training_steps));
    return ReadAuThreshold(r, &a);
  }

  void WriteToml(const PhasePlan& p, TomlLines* out) const override {
    const AiPhasePlan& a = p.Own<AiPhasePlan>();
    WriteKeepAndDelay(p, out);
    WriteDatasetToml(p, out);
    out->Uint("epochs", a.epochs);
    out->Uint("batch_size", a.batch_size);
    out->Uint("read_threads", a.read_threads);
    out->Uint("prefetch_batches", a.prefetch_batches);
    out->Double("computation_time_seconds", a.computation_time_seconds);
    out->Double("computation_time_stdev_seconds", a.computation_stdev_seconds);
    if (a.compute_spin) out->String("compute", "spin");
    out->String("file_shuffle", ShuffleName(a.file_shuffle));
    out->String("sample_shuffle", ShuffleName(a.sample_shuffle));
    out->UintAlways("shuffle_seed", a.shuffle_seed);
    out->Double("au_threshold", a.au_threshold);
    out->Uint("total_training_steps", a.total_training_steps);
  }

  // A shuffle "random" draws shuffle_seed here, once for all agents (every
  // rank must draw the same file order).
  void FillSpec(const PhasePlan& p, v1::PhaseSpec* s) const override {
    const AiPhasePlan& a = p.Own<AiPhasePlan>();
    FillDatasetSpec(p, s);
    s->set_epochs(a.epochs);
    s->set_batch_size(a.batch_size);
    s->set_read_threads(a.read_threads);
    s->set_prefetch_batches(a.prefetch_batches);
    s->set_computation_time_ns(static_cast<int64_t>(a.computation_time_seconds * 1e9));
    s->set_computation_stdev_ns(static_cast<int64_t>(a.computation_stdev_seconds * 1e9));
    s->set_compute_spin(a.compute_spin);
    s->set_file_shuffle(a.file_shuffle);
    s->set_sample_shuffle(a.sample_shuffle);
    s->set_shuffle_seed(a.shuffle_seed);
    if (a.file_shuffle == v1::SHUFFLE_RANDOM || a.sample_shuffle == v1::SHUFFLE_RANDOM) {
      s->set_shuffle_seed(std::random_device{}() >> 1);
    }
    s->set_au_threshold(a.au_threshold);
    s->set_total_training_steps(a.total_training_steps);
  }

  // It reads what datagen wrote.
  bool LeavesFiles(const PhasePlan&) const override { return false; }

  void Reduce(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
              uint32_t rep, v1::PhaseRecord* pr) const override {
    ReduceTrain(tasks, spec, rep, pr);
  }

  std::vector<std::string> ReportNotes(
      const v1::PhaseRecord& pr, const std::map<std::string, std::string>&) const override {
    return TrainReportLines(pr);
  }

  // It reads as many files as its dataset's datagen was given.
  void ApplyFit(const ClientFit& fit, v1::PhaseSpec* spec) const override {
    ApplyDatasetFit(fit, spec);
  }

  // DLIO's validity criterion: the accelerators busy at least au_threshold
  // of the time (a superseded attempt is not judged).
  std::string MissedCriterion(const v1::PhaseRecord& pr) const override {
    const v1::AiSummary& ai = pr.ai();
    if (!Counts(pr) || ai.au_threshold() <= 0 || ai.au_passed()) {
      return "";
    }
    return absl::StrFormat("AU %.2f%% is below its au_threshold %.2f%%", ai.au_mean() * 100,
                           ai.au_threshold() * 100);
  }
  std::string CriterionFix() const override {
    return "the accelerators waited for data (see each phase's batch wait); give fewer "
           "accelerators, more read_threads or a faster file system, or lower au_threshold";
  }

  // AU (judged against au_threshold when it has one), the slowest
  // accelerator's and host's, and samples/s.
  std::vector<PhaseFigure> Figures(const v1::PhaseRecord& pr) const override {
    const v1::AiSummary& ai = pr.ai();
    PhaseFigure au{.metric = "au", .value = ai.au_mean()};
    if (ai.au_threshold() > 0) {
      au.threshold = ai.au_threshold();
      au.passed = ai.au_passed();
    }
    return {au,
            {.metric = "au_min", .value = ai.au_min()},
            {.metric = "au_host_min", .value = HostMinAu(pr)},
            {.metric = "samples_per_s", .value = ai.samples_per_s()}};
  }

  // One epoch, short compute, and a batch each accelerator still gets.
  void CapForSmoke(const SmokeOptions& o, SmokeCapper* c, PhasePlan* p) const override {
    AiPhasePlan& a = p->Own<AiPhasePlan>();
    CapDatasetForSmoke(o, c, p);
    c->Count("epochs", uint32_t{1}, &a.epochs);
    c->Count("computation_time_seconds", 0.01, &a.computation_time_seconds);
    c->Count("computation_time_stdev_seconds", 0.002, &a.computation_stdev_seconds);
    if (a.num_files == 0) return;
    uint32_t most_tasks = 1;
    for (uint32_t tpa : p->tasks_per_agent) most_tasks = std::max(most_tasks, tpa);
    const uint64_t per = a.num_files * a.samples_per_file /
                         (uint64_t{most_tasks} * std::max<uint32_t>(o.max_client_agents, 1));
    c->Count("batch_size", static_cast<uint32_t>(std::max<uint64_t>(per, 1)), &a.batch_size);
  }

  void Estimate(const Plan&, const PhasePlan& p, uint32_t, uint32_t,
                PhaseEstimate* e) const override {
    const AiPhasePlan& a = p.Own<AiPhasePlan>();
    e->bytes_per_task =
        static_cast<uint64_t>(DatasetBytesOf(p) * a.epochs / std::max<uint32_t>(e->tasks, 1));
    e->note = absl::StrFormat("%u epochs; compute %g s per batch of %u", a.epochs,
                              a.computation_time_seconds, a.batch_size);
  }
};

}  // namespace

std::unique_ptr<PhaseKindDef> MakeTrainKind() { return std::make_unique<TrainKind>(); }

}  // namespace lockstep::kinds
