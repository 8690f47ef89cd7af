// CHECKPOINT: each task is one rank of a model's checkpoint, as in DLIO's
// checkpointing (checkpointing/base_checkpointing.py) run by MLPerf Storage.
// A rank writes (checkpoint_op WRITE) or reads back (READ) `checkpoints`
// shards of shard_bytes, one file per rank and checkpoint, named as DLIO
// names a rank's model state:
//   <dir>/global_epoch1_step<c+1>/model_states-<rank>.pt    c = 0 .. checkpoints-1
// in transfers of transfer_bytes (0: kDefaultAiChunkBytes). A write creates,
// writes, fsyncs (checkpoint_fsync, inside the shard's time, as DLIO's
// checkpoint_fsync) and closes each shard. Before each checkpoint every rank
// waits for the others (PhaseTasks::Barrier; across agents with
// sync_across_agents), so that a checkpoint's duration is the slowest rank's,
// as MLPerf Storage counts it. TaskResult.checkpoints has each shard's
// timers; files = shards; latency = one sample per transfer.
#ifndef LOCKSTEP_AGENT_WORKLOADS_CHECKPOINT_H_
#define LOCKSTEP_AGENT_WORKLOADS_CHECKPOINT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "agent/workloads/workload.h"

namespace lockstep {

// The shard of `rank` in checkpoint `index` (0-based).
std::string CheckpointShardPath(const std::string& dir, uint32_t index, uint32_t rank);

std::unique_ptr<Workload> MakeCheckpointWorkload(const v1::PhaseSpec& spec,
                                                 const WorkloadOptions& options);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_CHECKPOINT_H_
