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

// Path of the file that global rank `rank` opens, under `dir`.
std::string TaskFilePath(const std::string& dir, const v1::PhaseSpec& spec, uint32_t rank);

// The rank whose data `rank` touches: itself, or with reorder_shift (IOR -C)
// the task that many ranks further on (mod total_tasks).
uint32_t DataRank(const v1::PhaseSpec& spec, uint32_t rank);

uint64_t TransfersPerBlock(const v1::PhaseSpec& spec);

// File offset of transfer `j` of segment `segment` of `data_rank`.
uint64_t TransferOffset(const v1::PhaseSpec& spec, uint32_t data_rank, uint64_t segment,
                        uint64_t j);

// Size the file of `data_rank` must have for a read of this layout.
uint64_t RequiredFileSize(const v1::PhaseSpec& spec, uint32_t data_rank);

// block × segments × total tasks ("aggregate filesize").
uint64_t AggregateBytes(const v1::PhaseSpec& spec);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_LAYOUT_H_
