// The keys of the AI workload phases (issue 30; the contract with `lockstep
// dlio` is /work/helper/ai-plan-keys.md, mirrored in docs/ai-workloads.md):
//
//   [[phase]]                         [[phase]]                  [[phase]]
//   name = "gen"                      name = "train"             name = "ckpt-w"
//   kind = "datagen"                  kind = "train"             kind = "checkpoint"
//   dir = "unet3d"                    dir = "unet3d"             dir = "ckpt"
//   format = "npz"                    format = "npz" ...         checkpoint_op = "write"
//   num_files = 168                   batch_size = 7             model = "llama3-8b"
//   samples_per_file = 1              computation_time_seconds = 0.323
//   record_size = "146600k"           au_threshold = 0.90
//
// Dataset keys (datagen and train; they must match between the two):
// format, num_files, samples_per_file, record_size, record_size_stdev,
// file_prefix; dataset_memory_multiple (datagen). Train: epochs, batch_size,
// read_threads, prefetch_batches, computation_time_seconds,
// computation_time_stdev_seconds, compute, file_shuffle, sample_shuffle,
// shuffle_seed, au_threshold, total_training_steps. Checkpoint:
// checkpoint_op, model, shard_size, checkpoints (and fsync, default true for
// a write). transfer_size is the I/O chunk of all three (default 1 MiB).
#ifndef LOCKSTEP_CONTROLLER_PLAN_AI_KEYS_H_
#define LOCKSTEP_CONTROLLER_PLAN_AI_KEYS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "controller/plan/plan.h"
#include "controller/plan/table_reader.h"

namespace lockstep {

// The plan's keys for the AI phases, in kPhaseKeys.
inline constexpr const char* kAiKeys[] = {
    "format", "num_files", "samples_per_file", "record_size", "record_size_stdev", "file_prefix",
    "dataset_memory_multiple", "epochs", "batch_size", "read_threads", "prefetch_batches",
    "computation_time_seconds", "computation_time_stdev_seconds", "compute", "file_shuffle",
    "sample_shuffle", "shuffle_seed", "au_threshold", "total_training_steps", "checkpoint_op",
    "model", "shard_size", "checkpoints"};

// kind = "datagen", "train" or "checkpoint".
bool IsAiKind(v1::PhaseKind kind);

// The total checkpoint size of MLPerf Storage's llama3 models (its
// checkpointing README, v2.0: 8B 105 GB, 70B 912 GB, 405B 5.29 TB, 1T 18 TB;
// decimal units), 0 for another name.
uint64_t ModelCheckpointBytes(const std::string& model);

// Reads them into p->ai (kind, tasks_per_agent, transfer_size and fsync
// already read): a key of another kind is an error; required keys, ranges
// and the rules between keys (a compute time of 0 with an au_threshold)
// too. InvalidArgument names the position, the phase, the key, the value
// and the fix.
absl::Status ReadAiKeys(const TableReader& r, PhasePlan* p);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_AI_KEYS_H_
