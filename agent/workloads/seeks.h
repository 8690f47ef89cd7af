// SEEKS: bonnie++'s random-seek test. Every task reads seeks_per_task blocks
// of transfer_bytes at random transfer-aligned offsets of ONE shared file (the
// phase's IOR shared layout: block × segments × total tasks, as a write phase
// with the same keys lays it out), and writes seek_rewrite_pct of them back
// where they came from (bonnie++ dirties every 10th). One latency sample per
// seek (the read, plus the write-back when there is one); ops = seeks.
//
// Prepare lays the file out (untimed, the write phase's pattern, fsynced)
// when it is missing or shorter than the layout: bonnie++ seeks over the file
// its own sequential phase wrote. On a shared directory every agent that
// finds it short writes the same bytes, so the outcome does not depend on
// which agent gets there first; a write phase before the seeks phase is the
// cheaper way on many agents.
#ifndef LOCKSTEP_AGENT_WORKLOADS_SEEKS_H_
#define LOCKSTEP_AGENT_WORKLOADS_SEEKS_H_

#include <cstdint>
#include <memory>

#include "agent/workloads/workload.h"

namespace lockstep {

// Bytes of the file a seeks phase works on: block × segments × total tasks.
uint64_t SeekFileBytes(const v1::PhaseSpec& spec);

// The file offset of seek `k` of global rank `rank`: a multiple of
// transfer_bytes below SeekFileBytes(spec) − transfer_bytes, drawn from
// (random_seed, repetition, rank, k) alone. REQUIRES: SeekFileBytes(spec) >=
// transfer_bytes > 0.
uint64_t SeekOffset(const v1::PhaseSpec& spec, uint32_t rank, uint64_t k);

// Whether seek `k` of a task rewrites its block: seeks 0, 100/pct, ...,
// spread evenly, exactly pct of every 100 in a row (pct = 10: 0, 10, 20, ...
// as bonnie++'s seekers). pct > 100 counts as 100.
bool IsRewriteSeek(uint64_t k, uint32_t pct);

// The global rank whose data (pattern tag) the shared layout puts at `offset`.
uint32_t SeekDataRank(const v1::PhaseSpec& spec, uint64_t offset);

std::unique_ptr<Workload> MakeSeeksWorkload(const v1::PhaseSpec& spec,
                                            const WorkloadOptions& options);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_SEEKS_H_
