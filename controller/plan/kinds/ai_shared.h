// What the AI workload kinds (issue 30: datagen.cc, train.cc,
// checkpoint.cc; the keys' contract with `lockstep dlio` is
// docs/ai-workloads.md) share, as transfer.cc serves write, read and
// rewrite:
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
// The dataset keys (format, num_files, samples_per_file, record_size,
// record_size_stdev, file_prefix) are datagen's and train's alike; they
// must match between the two. The datagen kind owns them (OwnKeys, one
// owner per key) and refuses them on phases of neither kind; train reads
// them for its own phases. transfer_size is the I/O chunk of all three
// (default 1 MiB; PhaseKindDef::IorBlocks is false: no block_size, segments
// or total_size).
#ifndef LOCKSTEP_CONTROLLER_PLAN_KINDS_AI_SHARED_H_
#define LOCKSTEP_CONTROLLER_PLAN_KINDS_AI_SHARED_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "controller/plan/phase_kind.h"
#include "controller/plan/plan.h"
#include "controller/plan/plan_smoke.h"
#include "controller/plan/table_reader.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep::kinds {

// The dataset keys, in the order they are read.
const std::vector<std::string>& DatasetKeys();

// An error for the first dataset key given when p.kind is neither datagen
// nor train: "applies to datagen and train phases, not to kind = ...".
absl::Status RefuseDatasetKeys(const TableReader& r, const PhasePlan& p);

// Reads the dataset keys into p->ai (a datagen or train phase): format and
// num_files and record_size required, file_prefix a plain name.
// InvalidArgument names the position, the phase, the key, the value and
// the fix.
absl::Status ReadDatasetKeys(const TableReader& r, PhasePlan* p);

// The I/O chunk (transfer_size) of an AI phase: at most kMaxAiChunkBytes.
// SetAiChunkDefault sets the default, 1 MiB, before any key is read.
void SetAiChunkDefault(PhasePlan* p);
absl::Status CheckAiChunk(const TableReader& r, const PhasePlan& p);

// A number key (integer or float) in [min, max]; absent: *out unchanged.
absl::Status ReadNumber(const TableReader& r, const char* key, double min, double max,
                        double* out);

// The dataset's spec fields, TOML lines, smoke caps (a small dataset) and
// bytes (num_files × samples_per_file × record_size).
void FillDatasetSpec(const PhasePlan& p, v1::PhaseSpec* s);
void WriteDatasetToml(const PhasePlan& p, TomlLines* out);
void CapDatasetForSmoke(const SmokeOptions& o, SmokeCapper* c, PhasePlan* p);
double DatasetBytesOf(const PhasePlan& p);

// The key a dataset's chosen num_files is kept under in a ClientFit
// (controller/plan/phase_kind.h): "dir|prefix|format" of a datagen or train
// phase, or of its spec; the same for both.
std::string DatasetFitKey(const PhasePlan& p);
std::string DatasetFitKey(const v1::PhaseSpec& s);
// datagen's and train's ApplyFit: the chosen num_files, if any.
void ApplyDatasetFit(const ClientFit& fit, v1::PhaseSpec* s);

// The total checkpoint size of MLPerf Storage's llama3 models (its
// checkpointing README, v2.0: 8B 105 GB, 70B 912 GB, 405B 5.29 TB, 1T 18 TB;
// decimal units), 0 for another name.
uint64_t ModelCheckpointBytes(const std::string& model);

}  // namespace lockstep::kinds

#endif  // LOCKSTEP_CONTROLLER_PLAN_KINDS_AI_SHARED_H_
