// The bounds of a plan's values, one definition each: the TOML plan
// (plan.cc) and the IOR and mdtest command lines (controller/cli/) check
// against these, so a value `lockstep ior` accepts is one `lockstep run`
// accepts too. Bounds that mirror a rule of the agent (its buffers, its
// tree size, O_DIRECT alignment) say so; the agent checks them again on
// what it receives.
#ifndef LOCKSTEP_CONTROLLER_PLAN_LIMITS_H_
#define LOCKSTEP_CONTROLLER_PLAN_LIMITS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "common/limits.h"  // what the agent checks too: tasks, alignment, buffers, tree size

namespace lockstep {

// ---- the plan file and its size ------------------------------------------
// Every file a front end reads (the TOML plan, DLIO's YAML, IO500's ini, an
// IOR/mdtest -f script, a hostfile, IOzone's -+m file) is read with this
// bound (ReadFileAtMost, common/files.h): /dev/zero as a plan is refused
// after 16 MiB, not read until memory runs out.
inline constexpr uint64_t kMaxPlanFileBytes = uint64_t{16} << 20;
// One string value (or key) of a plan: a name, a directory, a pool. Paths
// are at most PATH_MAX; a command's argv/env have their own bounds
// (kMaxCommandArgBytes, common/limits.h).
inline constexpr uint64_t kMaxPlanStringBytes = 4096;
// [[phase]] tables of one plan.
inline constexpr uint64_t kMaxPlanPhases = 10000;
// Values of one sweep list (tests of a plan).
inline constexpr uint64_t kMaxSweepPoints = 100000;
// Phase runs of a plan: tests × phases × repetitions (each is a round of
// RPCs with every agent; a million is days of running).
inline constexpr uint64_t kMaxPhaseRuns = 1000000;

// ---- tasks and repetitions -------------------------------------------------
// (kMaxAgentTasks, the most tasks_per_agent: common/limits.h)
inline constexpr uint32_t kMaxTotalTasks = 1u << 24;     // IOR -N, mdtest --tasks
inline constexpr uint32_t kMaxRepetitions = 10000;       // repetitions, IOR/mdtest -i
inline constexpr uint32_t kMaxLocalAgents = 256;         // --local
inline constexpr uint32_t kMaxPlanAgents = 100000;          // [run] client_agents

// ---- transfer phases (IOR) -------------------------------------------------
// (kTransferAlignBytes and kDirectIoAlignBytes: common/limits.h)
inline constexpr uint64_t kMaxSegments = UINT32_MAX;     // segments, IOR -s
inline constexpr uint32_t kMaxStonewallSeconds = 86400 * 7;  // stonewall_seconds, IOR -D
// kMaxDelaySeconds (delay_seconds, IOR -d): common/limits.h
inline constexpr uint32_t kMaxReorderNodeOffset = 1u << 20;  // reorder_node_offset, IOR -Q

// ---- Lustre striping -------------------------------------------------------
inline constexpr int32_t kMaxStripeCount = 65535;        // stripe_count: -1, 0 or 1..this
inline constexpr int32_t kMaxStripeIndex = 65535;        // stripe_index: -1 or 0..this
inline constexpr uint64_t kStripeSizeMultiple = 64 * 1024;  // stripe_size: Lustre's rule

// ---- small files and mdtest ------------------------------------------------
// (kMaxSmallFileBytes, kMaxMdtestFileBytes, kMaxMdtestTreeDirs: common/limits.h)
static_assert(kMaxMdtestTreeDirs == 10'000'000, "the error messages name the tree limit in words");
inline constexpr uint64_t kMaxSmallFiles = uint64_t{1} << 32;  // small_files, per task
inline constexpr uint32_t kMaxSmallFilesPerDir = 1'000'000;
inline constexpr uint32_t kMaxMdBranching = 1'000'000;   // md_branching, mdtest -b
inline constexpr uint32_t kMaxMdDepth = 64;              // md_depth, mdtest -z
inline constexpr uint64_t kMaxMdItems = uint64_t{1} << 40;        // md_items, mdtest -n
inline constexpr uint64_t kMaxMdItemsPerDir = uint64_t{1} << 32;  // mdtest -I
// md_neighbor_shift, mdtest -N (after scaling by the tasks per agent).
inline constexpr uint32_t kMaxMdNeighborShift = 1u << 24;

// ---- seeks (bonnie++'s random seeks) --------------------------------------
inline constexpr uint64_t kMaxSeeksPerTask = uint64_t{1} << 40;  // seeks, per task
inline constexpr uint64_t kDefaultSeekTransferBytes = 8192;    // bonnie++'s chunk (-s SIZE:8k)

// ---- [run] -----------------------------------------------------------------
inline constexpr uint32_t kMinConnectTimeoutMs = 100, kMaxConnectTimeoutMs = 600'000;
inline constexpr uint32_t kMinLeaseMs = 200, kMaxLeaseMs = 600'000;

// The lease of a run whose plan names none: 5 s, and 2 ms per agent beyond
// 2,500 agents (20 s at 10,000), at most kMaxLeaseMs. The controller renews
// each agent's lease every lease/3 when no other call did, so with the lease
// fixed its heartbeats grow with agents x phase time: at 10,000 agents and
// 10 s phases, 60,000 calls a phase, most of the controller's CPU
// (tests/bench/README.md, sections 25 and 27). What it costs: a dead
// controller or agent is noticed after the longer lease.
inline constexpr uint32_t kDefaultLeaseMs = 5000, kLeaseMsPerAgent = 2;
inline uint32_t LeaseMsForAgents(size_t agents) {
  const uint64_t scaled = uint64_t{kLeaseMsPerAgent} * agents;
  return static_cast<uint32_t>(
      std::min<uint64_t>(kMaxLeaseMs, std::max<uint64_t>(kDefaultLeaseMs, scaled)));
}
inline constexpr uint32_t kMinProgressIntervalMs = 50, kMaxProgressIntervalMs = 600'000;
inline constexpr uint64_t kMaxSeed = UINT64_MAX >> 1;    // seed, IOR -G (TOML integers are signed)
inline constexpr uint32_t kMaxDropMode = 3;              // drop_mode 1..3: /proc/sys/vm/drop_caches
// max_start_skew_us and max_clock_uncertainty_us.
inline constexpr uint32_t kMaxSkewBoundUs = 60'000'000;
inline constexpr uint32_t kMaxIoStallTimeoutMs = 86'400'000;  // io_stall_timeout_ms

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_LIMITS_H_
