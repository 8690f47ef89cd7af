// MDTEST: one mdtest 4.1 sub-phase (PhaseSpec.md_op) for every task, in
// mdtest's layout (common/mdtest_layout.h) below the -d directory: tree
// create and remove, and the directory and file steps over each task's items.
// Each operation is timed and counted.
#ifndef LOCKSTEP_AGENT_WORKLOADS_MDTEST_H_
#define LOCKSTEP_AGENT_WORKLOADS_MDTEST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agent/workloads/workload.h"

namespace lockstep {

// The rank whose items `rank` works on in the spec's op: with mdtest -N
// (md_neighbor_shift s), (rank + k·s) mod tasks in the k-th of create (0),
// stat and rename (1), read (2) and remove (3); itself for tree ops.
uint32_t MdtestItemOwner(const v1::PhaseSpec& spec, uint32_t rank);

// Whether `rank` makes and removes a tree in tree_create / tree_remove:
// every rank with md_unique_dir, else rank 0 (the shared tree).
bool MdtestOwnsTree(const v1::PhaseSpec& spec, uint32_t rank);

// The directories (root first) of the tree `rank` works in: its own for tree
// ops; for item ops the shared tree, or with md_unique_dir the tree of rank
// (owner + shift) mod tasks, whose subdirectories mdtest names after `rank`
// itself (mdtest 4.1 does; the translator refuses -u -N with -z > 0, where
// those differ).
std::vector<std::string> MdtestTaskTree(const std::string& dir, const v1::PhaseSpec& spec,
                                        uint32_t rank);

std::unique_ptr<Workload> MakeMdtestWorkload(const v1::PhaseSpec& spec,
                                             const WorkloadOptions& options);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_MDTEST_H_
