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

// The buffers of one phase on one agent, of every kind (the agent weighs
// Workload::AgentBufferBytes; for transfers tasks × transfer size, twice
// with verification): a phase asking for more is refused by the agent's
// Prepare before any buffer is allocated (4,096 tasks × 1 GiB once grew an
// agent to 20 GB before it was killed). The agent also refuses more than
// its memory.
inline constexpr uint64_t kMaxAgentBufferBytes = uint64_t{64} << 30;
// Sizes (block × segments × tasks × agents, a file's size) are checked in
// 64 bits and refused beyond kMaxFileOffsetBytes (common/checked_math.h).

// A phase's delay before its start (delay_seconds, IOR -d): the agent's
// Prepare waits it out, so it bounds how long a Prepare may take.
inline constexpr uint32_t kMaxDelaySeconds = 86400;

// The largest file of a small_files phase; each task holds a buffer of it.
inline constexpr uint64_t kMaxSmallFileBytes = uint64_t{64} << 20;

// The most mdtest -w / -e (bytes written to / read from each file) may be;
// each task holds a buffer of it.
inline constexpr uint64_t kMaxMdtestFileBytes = uint64_t{64} << 20;

// Directories of one mdtest tree (branching^0 + ... + branching^depth).
inline constexpr uint64_t kMaxMdtestTreeDirs = 10'000'000;

// COMMAND phases (common/command_rules.h has the rules on argv and env).
// A program runs at most this long (PhaseSpec.command_timeout_ms; 0 sends
// none and the agent uses the default).
inline constexpr uint32_t kDefaultCommandTimeoutMs = 3'600'000;    // 1 h
inline constexpr uint32_t kMaxCommandTimeoutMs = 7 * 86'400'000;   // 7 days
// The last bytes of stdout and of stderr each agent keeps and sends back.
inline constexpr uint32_t kDefaultCommandTailBytes = 4096;
inline constexpr uint32_t kMaxCommandTailBytes = 64 * 1024;
// The most argv (or env) entries, and bytes over all of them.
inline constexpr uint32_t kMaxCommandArgs = 4096;
inline constexpr uint64_t kMaxCommandArgBytes = 128 * 1024;

// AI workloads (agent/workloads/dataset.h, train.h, checkpoint.h).
// Files of one dataset (each agent stats them all in a train's Prepare).
inline constexpr uint64_t kMaxDatasetFiles = 10'000'000;
// Readers per simulated accelerator, and batches they may be ahead of it.
inline constexpr uint32_t kMaxReadThreads = 64;
inline constexpr uint32_t kMaxPrefetchBatches = 1024;
// The I/O chunk of datagen, train and checkpoint (PhaseSpec.transfer_bytes;
// 0 = kDefaultAiChunkBytes): one buffer of it per reader or task.
inline constexpr uint64_t kDefaultAiChunkBytes = uint64_t{1} << 20;
inline constexpr uint64_t kMaxAiChunkBytes = uint64_t{64} << 20;
// Emulated compute per batch: at most an hour.
inline constexpr int64_t kMaxComputationTimeNs = int64_t{3600} * 1'000'000'000;

// Layered baselines (issue 42). NET: bytes per send (1 MiB is lnet_selftest's),
// the bytes of one ping, how long a stream sends, streams per pair of agents.
inline constexpr uint64_t kMaxNetMessageBytes = uint64_t{64} << 20;
inline constexpr uint64_t kMaxNetPingBytes = uint64_t{1} << 20;
inline constexpr uint64_t kMaxNetDurationMs = 3'600'000;
inline constexpr uint32_t kMaxNetStreamsPerPeer = 256;
// BACKEND: one write or read (O_DIRECT, an OSD bench's osd_bench_max_block_size).
inline constexpr uint64_t kMaxBackendBlockBytes = uint64_t{64} << 20;

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_LIMITS_H_
