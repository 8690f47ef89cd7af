// Limits and alignment rules that a phase must satisfy, checked twice: by
// the controller when it reads a plan or an IOR/mdtest command line (so that
// a bad value is refused with the file, line and key before anything runs),
// and by the agent in Prepare (so that no controller, old or new, can make an
// agent allocate or create more than this). One definition for both sides.
#ifndef LOCKSTEP_COMMON_LIMITS_H_
#define LOCKSTEP_COMMON_LIMITS_H_

#include <cstdint>

namespace lockstep {

// Tasks one agent runs in one phase (one thread each). An agent's operator
// may lower or raise its own limit (agent config limits.max_tasks); this is
// the default there and the most a plan may ask of one agent.
inline constexpr uint32_t kMaxAgentTasks = 4096;

// IOR's rule: the transfer size is a multiple of 8 bytes (the data pattern
// is written in 8-byte words).
inline constexpr uint64_t kTransferAlignBytes = 8;

// O_DIRECT needs transfers (and the buffers) aligned to 4 KiB.
inline constexpr uint64_t kDirectIoAlignBytes = 4096;

// The largest file of a small_files phase; each task holds a buffer of it.
inline constexpr uint64_t kMaxSmallFileBytes = uint64_t{64} << 20;

// The most mdtest -w / -e (bytes written to / read from each file) may be;
// each task holds a buffer of it.
inline constexpr uint64_t kMaxMdtestFileBytes = uint64_t{64} << 20;

// Directories of one mdtest tree (branching^0 + ... + branching^depth).
inline constexpr uint64_t kMaxMdtestTreeDirs = 10'000'000;

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_LIMITS_H_
