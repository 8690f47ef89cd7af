// A DLIO workload (dlio_config.h) as the text of a Lockstep plan with the
// AI phase kinds (docs/ai-workloads.md): a datagen phase when
// workflow.generate_data, a train phase when workflow.train, checkpoint
// write and read phases when workflow.checkpoint. A pure function; `lockstep
// dlio` parses the text with ParsePlan and runs it as `lockstep run` would.
#ifndef LOCKSTEP_CONTROLLER_DLIO_DLIO_PLAN_H_
#define LOCKSTEP_CONTROLLER_DLIO_DLIO_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "controller/dlio/dlio_config.h"

namespace lockstep {

struct DlioPlanOptions {
  // Simulated accelerators (train) and ranks (checkpoint) per host.
  uint32_t accelerators_per_host = 1;
  // Client hosts taking part (0: unknown; the smoke shrink then assumes 2).
  uint32_t hosts = 0;
  // --data-dir: replaces dataset.data_folder (empty: keep it).
  std::string data_dir;
  // --smoke: a few files of a few MiB, one epoch, a short compute, two small
  // checkpoints; each change is a note.
  bool smoke = false;
  // Only the train phase (find-max steps after the first: the dataset is
  // there already).
  bool train_only = false;
  // The dataset is kept after the run (datagen keep = true), as DLIO keeps
  // it, and the checkpoints too; a --smoke run is a trial and removes both
  // at its end, but the dataset when a later run reads it (find-max's later
  // steps: this is true).
  bool later_runs_read_dataset = false;
};

struct DlioPlan {
  std::string toml;
  std::vector<std::string> notes;  // what the translation decided or shrank
};

// The dataset's directory (data_dir or data_folder).
std::string DlioDataDir(const DlioConfig& c, const DlioPlanOptions& o);

// The checkpoints' directory: checkpoint.checkpoint_folder when absolute;
// a relative one (DLIO's default "./checkpoints/") below the dataset's
// directory, DlioDataDir, not the working directory DLIO resolves it
// against: agents on other hosts have no such directory, and a trial run
// must not write beside the user's files (issue 39).
std::string DlioCheckpointDir(const DlioConfig& c, const DlioPlanOptions& o);

// A relative checkpoint.checkpoint_folder that climbs out of the dataset's
// directory ("../ckpt") is refused, naming the key, the value and the fix.
absl::Status CheckDlioCheckpointFolder(const DlioConfig& c);

DlioPlan DlioToPlan(const DlioConfig& config, const DlioPlanOptions& options);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_DLIO_DLIO_PLAN_H_
