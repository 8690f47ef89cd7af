// TRAIN: each task is one simulated accelerator, as a DLIO rank is
// (main.py _train, utils/statscounter.py).
//
// Per epoch (1 .. epochs) the task reads its samples in the order of
// EpochRankSamples (agent/workloads/dataset.h) in StepsPerEpoch batches of
// batch_size. read_threads reader threads of its own claim the batches in
// order and read their samples, at most prefetch_batches batches ahead of the
// one the accelerator computes (DLIO's PyTorch loader: read_threads workers,
// prefetch_size batches in flight). The accelerator asks for batch b, waits
// until it is read (the wait is one sample of TrainResult.batch_wait), then
// computes: sleeps (or spins, compute_spin) computation_time_ns, with
// computation_stdev_ns a normal draw per batch from (shuffle_seed, rank,
// epoch, batch), clipped at 0, as DLIO's framework.compute does. Compute
// time is measured (start to end of each compute), as DLIO's stats do.
//
// A sample's read: NPZ reads the whole file into the reader (np.load of x, as
// DLIO's NPZ reader) unless it is the file the reader read last; RECORDS
// reads the sample's bytes at sample * record size. Each read is a latency
// sample (TaskResult.latency); ops = samples, bytes = bytes read.
//
// AU = compute time / wall time, per epoch (wall: the epoch's first request
// for data to its last compute's end) and over all epochs (sums), as DLIO's
// compute_metrics_train; DLIO's exclusion of the first step from its AU
// (metric.exclude_start_steps) and its per-step barrier across ranks (a
// simulated all-reduce) are not emulated: each accelerator runs at its own
// pace and every step counts.
#ifndef LOCKSTEP_AGENT_WORKLOADS_TRAIN_H_
#define LOCKSTEP_AGENT_WORKLOADS_TRAIN_H_

#include <cstdint>
#include <memory>

#include "agent/workloads/workload.h"

namespace lockstep {

// The compute time of batch `batch` of epoch `epoch` on `rank` (ns, >= 0).
int64_t BatchComputeNs(const v1::PhaseSpec& spec, uint32_t rank, uint32_t epoch, uint64_t batch);

// compute / wall, 0 when wall is 0.
double AcceleratorUtilization(int64_t compute_ns, int64_t wall_ns);

std::unique_ptr<Workload> MakeTrainWorkload(const v1::PhaseSpec& spec,
                                            const WorkloadOptions& options);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_TRAIN_H_
