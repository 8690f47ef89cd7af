// Where each task's data lives: file names and offsets, as IOR lays them out.
//   file per process: offset = i*block + j*transfer,        file "<base>.%08d"
//   shared file:      offset = i*tasks*block + rank*block + j*transfer
// for transfer j of segment i.
#ifndef LOCKSTEP_COMMON_LAYOUT_H_
#define LOCKSTEP_COMMON_LAYOUT_H_

#include <cstdint>
#include <string>

#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// Path of the file that global rank `rank` opens, under `dir`: IOR's
// "<name>" (shared) or "<name>.%08d" of DataRank, then, with multi_file
// (IOR -m), ".<repetition>". With task_file_names (IOzone -F, file per
// process): that list's name of DataRank instead of "<name>.%08d".
std::string TaskFilePath(const std::string& dir, const v1::PhaseSpec& spec, uint32_t rank);

// The rank whose data `rank` touches: itself; with reorder_shift (IOR -C)
// the task that many ranks further on; with reorder_random (IOR -Z) the task
// IorRandomTaskOffset further on (mod total_tasks).
uint32_t DataRank(const v1::PhaseSpec& spec, uint32_t rank);

// IOR's reorderTasksRandom offset of `rank` (ior.c, read phase): seed0 =
// seed >= 0 ? seed : -seed + repetition; srand(rank + seed0); offset =
// rand() % tasks, drawn again while offset < min(node_offset, nodes − 1) ×
// tasks_per_node (node_offset: IOR's -Q, taskPerNodeOffset). rand() is
// glibc's (random(3), TYPE_3), as IOR's on Linux. A node is a client agent.
// REQUIRES: tasks > 0.
uint32_t IorRandomTaskOffset(uint32_t rank, int32_t seed, uint32_t repetition, uint32_t tasks,
                             uint32_t tasks_per_node, uint32_t nodes, uint32_t node_offset = 1);

uint64_t TransfersPerBlock(const v1::PhaseSpec& spec);

// File offset of transfer `j` of segment `segment` of `data_rank`.
uint64_t TransferOffset(const v1::PhaseSpec& spec, uint32_t data_rank, uint64_t segment,
                        uint64_t j);

// Size the file of `data_rank` must have for a read of this layout.
uint64_t RequiredFileSize(const v1::PhaseSpec& spec, uint32_t data_rank);

// block × segments × total tasks ("aggregate filesize"); with a stonewall
// count, the transfers it allows × transfer × total tasks.
uint64_t AggregateBytes(const v1::PhaseSpec& spec);

// Transfers of one task over all its segments (IOR's "pairs" to do), at most
// spec.stonewall_count when set (a read of what a stonewalled write wrote).
uint64_t TransfersPerTask(const v1::PhaseSpec& spec);

// A bijection of [0, n) chosen by `key`, with O(1) memory: a 4-round Feistel
// network on the smallest power of four >= n, cycle-walking back into range.
// IOR -z: transfer k of a task goes to index Permutation(n, key)(k), so every
// transfer is done exactly once, in an order that differs per task and seed.
class Permutation {
 public:
  Permutation(uint64_t n, uint64_t key);
  // REQUIRES: i < n.
  uint64_t operator()(uint64_t i) const;
  uint64_t size() const { return n_; }

 private:
  uint64_t n_;
  uint32_t half_bits_;
  uint64_t half_mask_;
  uint64_t keys_[4];
};

// The key of a task's shuffle (IOR -z) from the spec's seed and the data rank.
uint64_t RandomOffsetsKey(const v1::PhaseSpec& spec, uint32_t data_rank);

// IOR 4.1's rand64 (src/utilities.c): a 128-bit multiplicative generator
// whose next value is the high half of state × its constant; seeded as
// srand64(state) seeds it.
class IorRand64 {
 public:
  explicit IorRand64(uint64_t state) : low_(state) {}
  uint64_t Next();

 private:
  uint64_t high_ = 0;
  uint64_t low_;
};

// IOR's seed of a task's -z -z draws (random_blocks): init_random_seed's
// seed (random_seed, plus the data rank with a file per process) as IOR's
// int, times data rank + 1 (srand64(seed * (pretendRank + 1))).
uint64_t RandomBlocksState(const v1::PhaseSpec& spec, uint32_t data_rank);

// Offset of the task's `k`-th transfer in its issue order: sequential
// (segment by segment) or, with random_offsets, through `perm`.
inline uint64_t OrderedTransferOffset(const v1::PhaseSpec& spec, uint32_t data_rank,
                                      const Permutation* perm, uint64_t per_block, uint64_t k) {
  const uint64_t idx = perm != nullptr ? (*perm)(k) : k;
  return TransferOffset(spec, data_rank, idx / per_block, idx % per_block);
}

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_LAYOUT_H_
