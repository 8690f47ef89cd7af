// The keys of the AI workloads (datagen.cc, train.cc, checkpoint.cc; ai_shared.h), as
// DLIO names them in its YAML where it has them.
// PhasePlan::Own<AiPhasePlan>() of those three kinds.
#ifndef LOCKSTEP_CONTROLLER_PLAN_KINDS_AI_PLAN_H_
#define LOCKSTEP_CONTROLLER_PLAN_KINDS_AI_PLAN_H_

#include <cstdint>
#include <string>

#include "controller/plan/kind_params.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

struct AiPhasePlan : KindParamsOf<AiPhasePlan> {
  // The dataset (datagen and train).
  v1::DatasetFormat format = v1::DATASET_FORMAT_UNSPECIFIED;
  uint64_t num_files = 0;                 // dataset.num_files_train
  uint64_t samples_per_file = 1;          // dataset.num_samples_per_file
  uint64_t record_bytes = 0;              // dataset.record_length
  uint64_t record_stdev_bytes = 0;        // dataset.record_length_stdev
  std::string file_prefix = "img";
  double dataset_memory_multiple = 0;     // datagen: at least this × the clients' memory
  std::string dataset_pos;                // "plan.toml:12:1" of num_files, for run-time messages
  // train.
  uint32_t epochs = 1;
  uint32_t batch_size = 0;
  uint32_t read_threads = 1;
  uint32_t prefetch_batches = 2;
  double computation_time_seconds = 0;    // per batch
  double computation_stdev_seconds = 0;
  bool compute_spin = false;
  v1::ShuffleMode file_shuffle = v1::SHUFFLE_OFF;
  v1::ShuffleMode sample_shuffle = v1::SHUFFLE_OFF;
  uint64_t shuffle_seed = 123;
  double au_threshold = 0;                // 0: AU not judged (no compute time)
  uint64_t total_training_steps = 0;
  // checkpoint.
  v1::CheckpointOp checkpoint_op = v1::CHECKPOINT_OP_UNSPECIFIED;
  std::string model;                      // "llama3-8b", ...: total_checkpoint_bytes
  uint64_t total_checkpoint_bytes = 0;    // split over all ranks (model)
  uint64_t shard_bytes = 0;               // per rank (shard_size; overrides model)
  uint32_t checkpoints = 1;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_KINDS_AI_PLAN_H_
