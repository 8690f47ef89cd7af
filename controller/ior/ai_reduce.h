// The AI phases' part of a phase (issue 30): the spec fields of
// datagen/train/checkpoint, their reduction into the phase record
// (PhaseRecord.ai, AgentPhaseRecord.au, the IOR-like row) and the "# " lines
// the run and `lockstep report` print under the row.
#ifndef LOCKSTEP_CONTROLLER_IOR_AI_REDUCE_H_
#define LOCKSTEP_CONTROLLER_IOR_AI_REDUCE_H_

#include <string>
#include <vector>

#include "controller/plan/plan.h"
#include "lockstep/v1/agent.pb.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// The AI fields of `phase` into `spec` (its total_tasks already set: a
// model's checkpoint is split over them). A shuffle "random" draws
// shuffle_seed here, once for all agents (every rank must draw the same file
// order). No-op for other kinds.
void SetAiSpecFields(const PhasePlan& phase, v1::PhaseSpec* spec);

// Fills pr->row, pr->ai and each client's AgentPhaseRecord.au from the tasks:
//   datagen:    row "datagen": bytes / (max stop − min start); iops = files/s.
//   train:      row "train": bytes read / window; iops = samples/s. AU per
//               accelerator = its compute / its wall; per host (agent) and
//               for the phase = Σ compute / Σ wall; au_passed when the mean
//               AU of the accelerators, and every epoch's, is at least
//               au_threshold (DLIO: train_au_meet_expectation); batch waits
//               merged exactly.
//   checkpoint: row "checkpoint-write"/"checkpoint-read": aggregate; per
//               checkpoint the slowest rank's throughput (min), the longest
//               rank's duration (max) and checkpoint bytes / that duration,
//               each averaged over the checkpoints (MLPerf Storage).
void ReduceAiPhase(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
                   uint32_t rep, v1::PhaseRecord* pr);

// The "# train: ..." lines under the row (without "# " and newline).
std::vector<std::string> AiReportLines(const v1::PhaseRecord& pr);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IOR_AI_REDUCE_H_
