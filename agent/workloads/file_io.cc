#include "agent/workloads/file_io.h"

#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_format.h"
#include "common/limits.h"
#include "common/pattern.h"

namespace lockstep {

absl::StatusOr<AlignedBuffer> AllocateAligned(size_t bytes) {
  void* p = nullptr;
  const size_t rounded = (bytes + kDirectIoAlignBytes - 1) / kDirectIoAlignBytes * kDirectIoAlignBytes;
  if (posix_memalign(&p, kDirectIoAlignBytes, rounded) != 0) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("cannot allocate a %u-byte I/O buffer; use a smaller transfer_size", bytes));
  }
  return AlignedBuffer(static_cast<char*>(p));
}

absl::StatusOr<std::vector<AlignedBuffer>> PatternBuffersPerTask(const v1::PhaseSpec& spec,
                                                                 size_t bytes) {
  std::vector<AlignedBuffer> buffers;
  for (uint32_t i = 0; i < spec.tasks(); ++i) {
    auto buf = AllocateAligned(bytes);
    if (!buf.ok()) return buf.status();
    FillPattern(buf->get(), bytes / 8 * 8, 0,
                PatternTag(spec.pattern_seed(), spec.first_rank() + i));
    buffers.push_back(std::move(*buf));
  }
  return buffers;
}

uint64_t AiChunkBytes(const v1::PhaseSpec& spec) {
  return spec.transfer_bytes() == 0 ? kDefaultAiChunkBytes : spec.transfer_bytes();
}

absl::Status MakeDirUnlessExists(const BeneathDir& held, const std::string& path,
                                 const std::string& phase_id) {
  if (held.Mkdir(path, 0775) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "phase %s: cannot create %s: %s", phase_id, path, BeneathErrorText(errno)));
  }
  return absl::OkStatus();
}

int PwriteFull(int fd, const char* buf, size_t len, uint64_t offset, size_t* done) {
  *done = 0;
  while (*done < len) {
    ssize_t n = ::pwrite(fd, buf + *done, len - *done, static_cast<off_t>(offset + *done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    *done += static_cast<size_t>(n);
  }
  return 0;
}

int PreadFull(int fd, char* buf, size_t len, uint64_t offset, size_t* done) {
  *done = 0;
  while (*done < len) {
    ssize_t n = ::pread(fd, buf + *done, len - *done, static_cast<off_t>(offset + *done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) break;  // end of file
    *done += static_cast<size_t>(n);
  }
  return 0;
}

int WriteAll(int fd, const char* buf, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::write(fd, buf + done, len - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

int ReadAll(int fd, char* buf, size_t len, size_t* got) {
  *got = 0;
  while (*got < len) {
    ssize_t n = ::read(fd, buf + *got, len - *got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) break;
    *got += static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace lockstep
