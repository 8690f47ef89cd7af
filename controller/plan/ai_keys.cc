#include "controller/plan/ai_keys.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "common/limits.h"
#include "common/names.h"
#include "common/sizes.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

constexpr uint32_t kMaxEpochs = 100000;
constexpr uint32_t kMaxBatchSize = 1u << 24;

struct ModelSize {
  const char* name;
  uint64_t bytes;
};
constexpr uint64_t kGB = 1'000'000'000;
constexpr ModelSize kModels[] = {
    {"llama3-8b", 105 * kGB},
    {"llama3-70b", 912 * kGB},
    {"llama3-405b", 5290 * kGB},
    {"llama3-1t", 18000 * kGB},
};

bool IsDatasetKind(v1::PhaseKind k) { return k == v1::DATAGEN || k == v1::TRAIN; }

absl::Status OnlyFor(const TableReader& r, const PhasePlan& p, const char* key, bool allowed,
                     const char* kinds) {
  if (r.Get(key) == nullptr || allowed) return absl::OkStatus();
  return r.Error(*r.Get(key), key,
                 absl::StrFormat("applies to %s phases, not to kind = \"%s\"", kinds,
                                 PhaseKindName(p.kind)));
}

// A number (integer or float) in [min, max].
absl::Status Number(const TableReader& r, const char* key, double min, double max, double* out) {
  const toml::node* n = r.Get(key);
  if (n == nullptr) return absl::OkStatus();
  double v = 0;
  if (n->is_integer()) {
    v = static_cast<double>(n->as_integer()->get());
  } else if (n->is_floating_point()) {
    v = n->as_floating_point()->get();
  } else {
    return r.Error(*n, key, absl::StrFormat("expected a number, got %s", TableReader::TypeName(*n)));
  }
  if (!(v >= min && v <= max)) {
    return r.Error(*n, key, absl::StrFormat("%g is not in [%g, %g]", v, min, max));
  }
  *out = v;
  return absl::OkStatus();
}

absl::Status Shuffle(const TableReader& r, const char* key, v1::ShuffleMode* out) {
  std::string v;
  RETURN_IF_ERROR(r.OneOf(key, {"off", "seed", "random"}, &v));
  if (v == "seed") *out = v1::SHUFFLE_SEED;
  if (v == "random") *out = v1::SHUFFLE_RANDOM;
  return absl::OkStatus();
}

absl::Status ReadDataset(const TableReader& r, PhasePlan* p) {
  AiPhasePlan& a = p->ai;
  for (const char* key : {"format", "num_files", "samples_per_file", "record_size",
                          "record_size_stdev", "file_prefix"}) {
    RETURN_IF_ERROR(OnlyFor(r, *p, key, IsDatasetKind(p->kind), "datagen and train"));
  }
  RETURN_IF_ERROR(OnlyFor(r, *p, "dataset_memory_multiple", p->kind == v1::DATAGEN, "datagen"));
  if (!IsDatasetKind(p->kind)) return absl::OkStatus();
  std::string format;
  RETURN_IF_ERROR(r.String("format", &format));
  if (format.empty()) {
    return r.Missing("format", "add format = \"npz\" (DLIO's unet3d files) or \"records\" (flat "
                               "binary samples)");
  }
  if (format == "npz") {
    a.format = v1::DATASET_FORMAT_NPZ;
  } else if (format == "records") {
    a.format = v1::DATASET_FORMAT_RECORDS;
  } else {
    return r.Error(*r.Get("format"), "format",
                   absl::StrFormat("\"%s\" is not a format Lockstep writes; use \"npz\" (DLIO's "
                                   "npz, one zip of x.npy and y.npy per file) or \"records\" "
                                   "(flat binary samples, for DLIO's other formats)",
                                   format));
  }
  if (r.Get("num_files") == nullptr) {
    return r.Missing("num_files", "add num_files = 168 (DLIO's dataset.num_files_train)");
  }
  RETURN_IF_ERROR(r.Uint("num_files", 1, kMaxDatasetFiles, &a.num_files));
  a.dataset_pos = r.Pos(*r.Get("num_files"));
  RETURN_IF_ERROR(r.Uint("samples_per_file", 1, uint64_t{1} << 32, &a.samples_per_file));
  if (r.Get("record_size") == nullptr) {
    return r.Missing("record_size", "add record_size = \"146600k\" (bytes per sample; DLIO's "
                                    "dataset.record_length)");
  }
  RETURN_IF_ERROR(r.Size("record_size", &a.record_bytes));
  if (r.Get("record_size_stdev")) RETURN_IF_ERROR(r.Size("record_size_stdev", &a.record_stdev_bytes));
  RETURN_IF_ERROR(r.String("file_prefix", &a.file_prefix));
  if (a.file_prefix.empty() || a.file_prefix.find('/') != std::string::npos) {
    return r.Error(*r.Get("file_prefix"), "file_prefix",
                   "must be a plain, non-empty name without '/' (DLIO's default is \"img\")");
  }
  return Number(r, "dataset_memory_multiple", 0, 1000, &a.dataset_memory_multiple);
}

constexpr const char* kTrainKeys[] = {
    "epochs", "batch_size", "read_threads", "prefetch_batches", "computation_time_seconds",
    "computation_time_stdev_seconds", "compute", "file_shuffle", "sample_shuffle", "shuffle_seed",
    "au_threshold", "total_training_steps"};

absl::Status ReadTrain(const TableReader& r, PhasePlan* p) {
  AiPhasePlan& a = p->ai;
  for (const char* key : kTrainKeys) RETURN_IF_ERROR(OnlyFor(r, *p, key, p->kind == v1::TRAIN, "train"));
  if (p->kind != v1::TRAIN) return absl::OkStatus();
  RETURN_IF_ERROR(r.Uint32("epochs", 1, kMaxEpochs, &a.epochs));
  if (r.Get("batch_size") == nullptr) {
    return r.Missing("batch_size", "add batch_size = 7 (samples per batch; DLIO's reader.batch_size)");
  }
  RETURN_IF_ERROR(r.Uint32("batch_size", 1, kMaxBatchSize, &a.batch_size));
  RETURN_IF_ERROR(r.Uint32("read_threads", 1, kMaxReadThreads, &a.read_threads));
  RETURN_IF_ERROR(r.Uint32("prefetch_batches", 1, kMaxPrefetchBatches, &a.prefetch_batches));
  const double max_s = static_cast<double>(kMaxComputationTimeNs) / 1e9;
  RETURN_IF_ERROR(Number(r, "computation_time_seconds", 0, max_s, &a.computation_time_seconds));
  RETURN_IF_ERROR(
      Number(r, "computation_time_stdev_seconds", 0, max_s, &a.computation_stdev_seconds));
  std::string compute = "sleep";
  RETURN_IF_ERROR(r.OneOf("compute", {"sleep", "spin"}, &compute));
  a.compute_spin = compute == "spin";
  RETURN_IF_ERROR(Shuffle(r, "file_shuffle", &a.file_shuffle));
  RETURN_IF_ERROR(Shuffle(r, "sample_shuffle", &a.sample_shuffle));
  RETURN_IF_ERROR(r.Uint("shuffle_seed", 0, UINT64_MAX >> 1, &a.shuffle_seed));
  RETURN_IF_ERROR(r.Uint("total_training_steps", 0, UINT64_MAX >> 1, &a.total_training_steps));
  if (const toml::node* n = r.Get("au_threshold")) {
    RETURN_IF_ERROR(Number(r, "au_threshold", 0, 1, &a.au_threshold));
    if (a.au_threshold <= 0) {
      return r.Error(*n, "au_threshold", "must be in (0, 1]: 0.90 as MLPerf Storage's unet3d and "
                                         "resnet50, 0.70 as cosmoflow; drop it to not judge AU");
    }
    if (a.computation_time_seconds <= 0) {
      return r.Error(*n, "au_threshold",
                     absl::StrFormat("%g with computation_time_seconds = 0: AU is compute time / "
                                     "wall time, 0 without compute, so the phase could never "
                                     "pass; give computation_time_seconds (DLIO's "
                                     "train.computation_time, per batch) or drop au_threshold",
                                     a.au_threshold));
    }
  } else if (a.computation_time_seconds > 0) {
    a.au_threshold = 0.90;  // MLPerf Storage's threshold for unet3d and resnet50
  }
  return absl::OkStatus();
}

absl::Status ReadCheckpoint(const TableReader& r, PhasePlan* p) {
  AiPhasePlan& a = p->ai;
  for (const char* key : {"checkpoint_op", "model", "shard_size", "checkpoints"}) {
    RETURN_IF_ERROR(OnlyFor(r, *p, key, p->kind == v1::CHECKPOINT, "checkpoint"));
  }
  if (p->kind != v1::CHECKPOINT) return absl::OkStatus();
  std::string op;
  RETURN_IF_ERROR(r.OneOf("checkpoint_op", {"write", "read"}, &op));
  if (op.empty()) {
    return r.Missing("checkpoint_op", "add checkpoint_op = \"write\" (or \"read\", after a write "
                                      "phase of the same dir)");
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
  RETURN_IF_ERROR(r.Uint32("checkpoints", 1, 100000, &a.checkpoints));
  if (a.checkpoint_op == v1::CHECKPOINT_WRITE && r.Get("fsync") == nullptr) p->fsync = true;
  return absl::OkStatus();
}

}  // namespace

bool IsAiKind(v1::PhaseKind kind) {
  return kind == v1::DATAGEN || kind == v1::TRAIN || kind == v1::CHECKPOINT;
}

uint64_t ModelCheckpointBytes(const std::string& model) {
  for (const ModelSize& m : kModels) {
    if (model == m.name) return m.bytes;
  }
  return 0;
}

absl::Status ReadAiKeys(const TableReader& r, PhasePlan* p) {
  RETURN_IF_ERROR(ReadDataset(r, p));
  RETURN_IF_ERROR(ReadTrain(r, p));
  return ReadCheckpoint(r, p);
}

}  // namespace lockstep
