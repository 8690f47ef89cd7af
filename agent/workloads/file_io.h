// System-call helpers the workloads share: whole-buffer reads and writes
// that retry on EINTR and short counts, aligned I/O buffers. (rm -r is
// BeneathDir::RemoveTree, agent/beneath.h: below the phase directory only.)
#ifndef LOCKSTEP_AGENT_WORKLOADS_FILE_IO_H_
#define LOCKSTEP_AGENT_WORKLOADS_FILE_IO_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/beneath.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

struct AlignedFree {
  void operator()(char* p) const { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<char, AlignedFree>;

// A buffer of at least `bytes`, aligned for O_DIRECT (kDirectIoAlignBytes).
// ResourceExhausted when the memory is not there.
absl::StatusOr<AlignedBuffer> AllocateAligned(size_t bytes);

// One buffer of `bytes` (AllocateAligned) per task of `spec`, buffer i
// filled with the data pattern that global rank spec.first_rank() + i writes
// under spec.pattern_seed() (common/pattern.h) from offset 0.
absl::StatusOr<std::vector<AlignedBuffer>> PatternBuffersPerTask(const v1::PhaseSpec& spec,
                                                                 size_t bytes);

// The I/O chunk of an AI phase (datagen, train, checkpoint): its
// transfer_bytes, kDefaultAiChunkBytes when 0.
uint64_t AiChunkBytes(const v1::PhaseSpec& spec);

// Makes directory `path` (mode 0775) through `held`; one that exists already
// is fine (another agent of a shared file system, or of this phase, made
// it). Otherwise FailedPrecondition "phase <phase_id>: cannot create <path>:
// <BeneathErrorText>".
absl::Status MakeDirUnlessExists(const BeneathDir& held, const std::string& path,
                                 const std::string& phase_id);

// pwrite(2) until all of `len` is written. Returns 0 or an errno; *done
// receives the bytes written.
int PwriteFull(int fd, const char* buf, size_t len, uint64_t offset, size_t* done);

// pread(2) until `len` bytes or the end of the file. Returns 0 or an errno;
// *done receives the bytes read.
int PreadFull(int fd, char* buf, size_t len, uint64_t offset, size_t* done);

// write(2) until all of `len` is written; 0 or an errno.
int WriteAll(int fd, const char* buf, size_t len);

// read(2) up to `len` bytes (less at the end of the file); 0 or an errno.
// *got receives how many.
int ReadAll(int fd, char* buf, size_t len, size_t* got);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_FILE_IO_H_
