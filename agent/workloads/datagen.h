// DATAGEN: writes the dataset of agent/workloads/dataset.h once, as DLIO's
// data generators do (data_generator/*.py): file i by the task of global
// rank i mod total_tasks (range(my_rank, files, comm_size)), so the files are
// split across every task of every agent. Each file is created, written in
// chunks of transfer_bytes (0: kDefaultAiChunkBytes), fsynced when the spec
// has fsync_at_end, and closed; its latency is one sample. ops = files =
// TaskResult.files; bytes = the files' sizes.
#ifndef LOCKSTEP_AGENT_WORKLOADS_DATAGEN_H_
#define LOCKSTEP_AGENT_WORKLOADS_DATAGEN_H_

#include <memory>

#include "agent/workloads/workload.h"

namespace lockstep {

std::unique_ptr<Workload> MakeDatagenWorkload(const v1::PhaseSpec& spec,
                                              const WorkloadOptions& options);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_DATAGEN_H_
