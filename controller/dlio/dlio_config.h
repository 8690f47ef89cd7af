// DLIO's workload YAML (argonne-lcf/dlio_benchmark configs/workload/*.yaml,
// MLPerf Storage's configs/dlio/workload/*.yaml) read into what `lockstep
// dlio` honours. A pure function of the text: every key of the sections
// model, framework, workflow, dataset, reader, train, checkpoint and metric
// is either honoured, accepted as information that changes nothing in
// Lockstep (listed in DlioConfig::ignored), or refused naming
// FILE:LINE:COLUMN, the key, the value and the fix. kDlioHonouredKeys is
// what `lockstep dlio --help` lists.
#ifndef LOCKSTEP_CONTROLLER_DLIO_DLIO_CONFIG_H_
#define LOCKSTEP_CONTROLLER_DLIO_DLIO_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace lockstep {

// The keys honoured, "section.key" by section, for --help.
inline constexpr const char kDlioHonouredKeys[] =
    "Keys honoured (section.key):\n\n"
    "  model.name, model.model_size (a CNN's checkpoint bytes per rank)\n"
    "  workflow.generate_data, workflow.train, workflow.checkpoint\n"
    "  dataset.data_folder, dataset.format (npz; records: Lockstep's flat samples),\n"
    "    dataset.num_files_train, dataset.num_samples_per_file,\n"
    "    dataset.record_length_bytes, dataset.record_length_bytes_stdev,\n"
    "    dataset.file_prefix\n"
    "  reader.batch_size, reader.read_threads, reader.prefetch_size,\n"
    "    reader.file_shuffle, reader.sample_shuffle (off, seed, random)\n"
    "  train.epochs, train.computation_time, train.computation_time_stdev,\n"
    "    train.total_training_steps, train.seed\n"
    "  checkpoint.checkpoint_folder, checkpoint.checkpoint_after_epoch,\n"
    "    checkpoint.epochs_between_checkpoints, checkpoint.num_checkpoints_write,\n"
    "    checkpoint.num_checkpoints_read, checkpoint.fsync\n"
    "  metric.au\n\n"
    "Accepted and changing nothing (printed as '#' lines): framework, model.type and the\n"
    "  transformer's shape (model.num_layers, parallelism, transformer, ...),\n"
    "  dataset.record_length_bytes_resize, reader.data_loader, reader.computation_threads,\n"
    "  reader.dont_use_mmap, reader.shuffle_size, checkpoint.time_between_checkpoints.\n";

struct DlioConfig {
  std::string path;  // as given, for messages
  std::string model_name;          // model.name (or model: NAME)
  uint64_t model_size_bytes = 0;   // model.model_size (checkpoint bytes of a CNN)
  std::string framework;           // pytorch / tensorflow: informational
  // workflow.*, with DLIO's defaults (ConfigArguments: generate_data False,
  // do_train True, do_checkpoint False) for what the config does not give.
  bool generate_data = false, train = true, checkpoint = false;
  // dataset
  std::string data_folder = "data";
  std::string format;              // Lockstep's: "npz" or "records"
  std::string file_prefix = "img";
  uint64_t num_files_train = 0;
  uint64_t num_samples_per_file = 1;
  uint64_t record_length_bytes = 0;        // rounded to whole bytes
  uint64_t record_length_bytes_stdev = 0;
  // reader
  uint32_t batch_size = 1;
  uint32_t read_threads = 1;
  uint32_t prefetch_size = 2;
  std::string file_shuffle = "off", sample_shuffle = "off";
  // train
  uint32_t epochs = 1;
  double computation_time_seconds = 0;
  double computation_time_stdev_seconds = 0;
  uint64_t total_training_steps = 0;  // 0: all
  uint64_t seed = 123;
  // checkpoint
  std::string checkpoint_folder = "checkpoints";
  uint32_t checkpoint_after_epoch = 1;
  uint32_t epochs_between_checkpoints = 1;
  uint32_t num_checkpoints_write = 0;  // 0: from the epochs (CNN) or 1
  uint32_t num_checkpoints_read = 0;
  bool checkpoint_fsync = true;
  // metric
  double au_threshold = 0.90;
  // "FILE:LINE: section.key = VALUE: why it changes nothing here".
  std::vector<std::string> ignored;
};

// MLPerf Storage's checkpoint model for a DLIO model name ("llama3-8b" for
// llama_8b, llama3_8b, llama_8b_zero3; 70b, 405b, 1t likewise), "" for
// another.
std::string DlioCheckpointModel(const std::string& model_name);

// `source` names the file in messages. InvalidArgument "FILE:LINE:COL: KEY:
// VALUE ...; FIX" for an unknown section or key, a value of the wrong type
// or range, or a format Lockstep does not write.
absl::StatusOr<DlioConfig> ParseDlioConfig(const std::string& text, const std::string& source);

// DLIO's Hydra overrides on the command line: "++workload.dataset.data_folder=X"
// or "workload.train.epochs=1" (the "++" / "+" optional), applied to
// `config` as if the YAML held them. InvalidArgument naming the override.
absl::Status ApplyDlioOverride(const std::string& arg, DlioConfig* config);

// Whether `arg` looks like such an override ("workload." after optional '+').
bool IsDlioOverride(const std::string& arg);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_DLIO_DLIO_CONFIG_H_
