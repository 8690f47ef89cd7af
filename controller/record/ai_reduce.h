// The reductions of the AI phases (issue 30; controller/plan/kinds/
// datagen.cc, train.cc, checkpoint.cc) into the phase record: the IOR-like
// row, PhaseRecord.ai and each client's AgentPhaseRecord.au, and the "# "
// lines the run and `lockstep report` print under the row.
#ifndef LOCKSTEP_CONTROLLER_RECORD_AI_REDUCE_H_
#define LOCKSTEP_CONTROLLER_RECORD_AI_REDUCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/v1/agent.pb.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// Each fills pr->row and pr->ai (accelerators, bytes, files, seconds, MiB/s,
// files/s over the window of all tasks) from the tasks of one phase:
//   datagen:    row "datagen": bytes / (max stop − min start); iops = files/s.
//   train:      row "train": bytes read / window; iops = samples/s. AU per
//               accelerator and epoch = its compute / its wall; per epoch the
//               mean over the accelerators (epoch_au), for the phase the mean
//               over the epochs (au_mean), au_passed when au_mean is at least
//               au_threshold: DLIO's train_au_mean_percentage and
//               train_au_meet_expectation (docs/ai-workloads.md says where
//               ours differs). An accelerator's AU over the phase (au_min,
//               au_max) is the mean of its epochs'; a host's
//               (AgentPhaseRecord.au) the mean of its accelerators'. Batch
//               waits merged exactly.
//   checkpoint: row "checkpoint-write"/"checkpoint-read": aggregate; per
//               checkpoint the slowest rank's throughput (min), the longest
//               rank's duration (max) and checkpoint bytes / that duration,
//               each averaged over the checkpoints (MLPerf Storage).
void ReduceDatagen(const std::vector<const v1::TaskResult*>& tasks, uint32_t rep,
                   v1::PhaseRecord* pr);
void ReduceTrain(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
                 uint32_t rep, v1::PhaseRecord* pr);
void ReduceCheckpoint(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
                      uint32_t rep, v1::PhaseRecord* pr);

// The "datagen: ...", "train: ...", "checkpoint write: ..." lines under the
// row (without "# " and newline).
std::vector<std::string> DatagenReportLines(const v1::PhaseRecord& pr);
std::vector<std::string> TrainReportLines(const v1::PhaseRecord& pr);
std::vector<std::string> CheckpointReportLines(const v1::PhaseRecord& pr);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RECORD_AI_REDUCE_H_
