// kind = "checkpoint" (issue 30, after MLPerf Storage's checkpointing): each
// task (rank) writes or reads `checkpoints` shards of shard_size (per rank),
// or of a model's total checkpoint split over all ranks; the ranks of all
// agents start each checkpoint together. Result: throughput as the minimum
// across ranks, duration as the maximum, and both as aggregate.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/checked_math.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "controller/plan/kinds/ai_shared.h"
#include "controller/plan/kinds/registry.h"
#include "controller/record/ai_reduce.h"
#include "controller/plan/kinds/ai_plan.h"

namespace lockstep::kinds {
namespace {

constexpr uint32_t kMaxCheckpoints = 100000;
constexpr uint64_t kShardAlignBytes = 4096;

class CheckpointKind : public PhaseKindDef {
 public:
  v1::PhaseKind wire() const override { return v1::CHECKPOINT; }

  void SetDefaults(PhasePlan* p) const override { SetAiChunkDefault(p); }
  bool IorBlocks() const override { return false; }
  // fsync: each shard's.
  uint32_t IoKeys() const override { return kIoSizes | kIoFsync | kIoLayout | kIoChecksums; }

  std::vector<std::string> OwnKeys() const override {
    return {"checkpoint_op", "model", "shard_size", "checkpoints"};
  }

  absl::Status ReadKeys(const TableReader& r, const Plan&, PhasePlan* p) const override {
    RETURN_IF_ERROR(RefuseOwnKeys(r, *p));
    if (p->kind != wire()) return absl::OkStatus();
    RETURN_IF_ERROR(CheckAiChunk(r, *p));
    AiPhasePlan& a = p->Own<AiPhasePlan>();
    std::string op;
    RETURN_IF_ERROR(r.OneOf("checkpoint_op", {"write", "read"}, &op));
    if (op.empty()) {
      return r.Missing("checkpoint_op", "add checkpoint_op = \"write\" (or \"read\", after a "
                                        "write phase of the same dir)");
    }
    a.checkpoint_op = op == "write" ? v1::CHECKPOINT_WRITE : v1::CHECKPOINT_READ;
    RETURN_IF_ERROR(r.String("model", &a.model));
    if (!a.model.empty()) {
      a.total_checkpoint_bytes = ModelCheckpointBytes(a.model);
      if (a.total_checkpoint_bytes == 0) {
        return r.Error(*r.Get("model"), "model",
                       absl::StrFormat("\"%s\" is not in MLPerf Storage's table; use llama3-8b, "
                                       "llama3-70b, llama3-405b or llama3-1t, or give shard_size",
                                       a.model));
      }
    }
    if (r.Get("shard_size")) RETURN_IF_ERROR(r.Size("shard_size", &a.shard_bytes));
    if (a.model.empty() && a.shard_bytes == 0) {
      return r.Missing("shard_size", "add shard_size = \"1g\" (per rank) or model = \"llama3-8b\"");
    }
    RETURN_IF_ERROR(r.Uint32("checkpoints", 1, kMaxCheckpoints, &a.checkpoints));
    if (a.checkpoint_op == v1::CHECKPOINT_WRITE && r.Get("fsync") == nullptr) p->fsync = true;
    if (a.checkpoint_op == v1::CHECKPOINT_READ && p->fsync) {
      return r.Error(*r.Get("fsync"), "fsync",
                     "syncs each shard a checkpoint write wrote; a checkpoint read syncs nothing: "
                     "drop it");
    }
    return absl::OkStatus();
  }

  void WriteToml(const PhasePlan& p, TomlLines* out) const override {
    const AiPhasePlan& a = p.Own<AiPhasePlan>();
    WriteKeepAndDelay(p, out);
    out->Uint("transfer_size", p.transfer_bytes);
    out->BoolAlways("fsync", p.fsync);  // a write's default is true
    out->String("checkpoint_op", a.checkpoint_op == v1::CHECKPOINT_READ ? "read" : "write");
    if (!a.model.empty()) out->String("model", a.model);
    out->Uint("shard_size", a.shard_bytes);
    out->UintAlways("checkpoints", a.checkpoints);
  }

  // A model's checkpoint is split over every rank (spec total_tasks), each
  // shard 4 KiB aligned; the ranks of all agents meet at each checkpoint.
  void FillSpec(const PhasePlan& p, v1::PhaseSpec* s) const override {
    const AiPhasePlan& a = p.Own<AiPhasePlan>();
    s->set_checkpoint_op(a.checkpoint_op);
    s->set_model(a.model);
    s->set_checkpoints(a.checkpoints);
    s->set_checkpoint_fsync(p.fsync);
    uint64_t shard = a.shard_bytes;
    if (shard == 0 && s->total_tasks() > 0) {
      shard = (a.total_checkpoint_bytes / s->total_tasks() + kShardAlignBytes - 1) /
              kShardAlignBytes * kShardAlignBytes;
    }
    s->set_shard_bytes(shard);
    s->set_sync_across_agents(true);
  }

  // A write's shards stay for a later read of the repetition and go at its
  // end, as a write's.
  bool LeavesFiles(const PhasePlan& p) const override {
    return p.Own<AiPhasePlan>().checkpoint_op == v1::CHECKPOINT_WRITE;
  }

  void Reduce(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
              uint32_t rep, v1::PhaseRecord* pr) const override {
    ReduceCheckpoint(tasks, spec, rep, pr);
  }

  // The slowest rank's bandwidth, the aggregate and the longest duration,
  // named by the direction.
  std::vector<PhaseFigure> Figures(const v1::PhaseRecord& pr) const override {
    const v1::AiSummary& ai = pr.ai();
    const std::string op = pr.spec().checkpoint_op() == v1::CHECKPOINT_READ ? "read" : "write";
    return {{.metric = absl::StrCat("checkpoint_", op, "_min_mib_per_s"),
             .value = ai.min_rank_mib_per_s()},
            {.metric = absl::StrCat("checkpoint_", op, "_aggregate_mib_per_s"),
             .value = ai.aggregate_mib_per_s()},
            {.metric = absl::StrCat("checkpoint_", op, "_max_duration_s"),
             .value = ai.max_duration_s()}};
  }

  std::vector<std::string> ReportNotes(
      const v1::PhaseRecord& pr, const std::map<std::string, std::string>&) const override {
    return CheckpointReportLines(pr);
  }

  // Two checkpoints of small shards (a model's size becomes one shard_size).
  void CapForSmoke(const SmokeOptions& o, SmokeCapper* c, PhasePlan* p) const override {
    AiPhasePlan& a = p->Own<AiPhasePlan>();
    c->Count("checkpoints", uint32_t{2}, &a.checkpoints);
    if (a.shard_bytes == 0) {
      c->Note("model", a.model, "shard_size " + HumanBytes(o.max_bytes));
      a.shard_bytes = o.max_bytes;
    }
    c->Bytes("shard_size", o.max_bytes, &a.shard_bytes);
  }

  void Estimate(const Plan&, const PhasePlan& p, uint32_t, uint32_t,
                PhaseEstimate* e) const override {
    const AiPhasePlan& a = p.Own<AiPhasePlan>();
    const uint64_t shard = a.shard_bytes > 0
                               ? a.shard_bytes
                               : a.total_checkpoint_bytes / std::max<uint32_t>(e->tasks, 1);
    e->bytes_per_task = SaturatingMul(shard, a.checkpoints);
    e->files = a.checkpoint_op == v1::CHECKPOINT_WRITE ? uint64_t{e->tasks} * a.checkpoints : 0;
    e->note = a.model.empty() ? "checkpoint shards" : "model " + a.model;
  }
};

}  // namespace

std::unique_ptr<PhaseKindDef> MakeCheckpointKind() { return std::make_unique<CheckpointKind>(); }

}  // namespace lockstep::kinds
