#include "agent/workloads/rewrite.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "agent/workloads/file_io.h"
#include "common/pattern.h"

namespace lockstep {

int RewriteWorkload::OpenFlags() const { return O_RDWR; }

const char* RewriteWorkload::IoVerb() const { return "rewrite of"; }

int RewriteWorkload::Transfer(int fd, char* buf, size_t len, uint64_t offset, uint64_t tag,
                              size_t* moved) const {
  int err = PreadFull(fd, buf, len, offset, moved);
  if (err != 0 || *moved != len) return err;  // a short read fails in the loop's check
  // Modify in memory (re-stamp each 4 KiB block's offset word: the data stays
  // the pattern, so a later verified read still checks it), then write it
  // back where it came from.
  StampPattern(buf, len, offset, tag);
  err = PwriteFull(fd, buf, len, offset, moved);
  if (err == 0 && spec().fsync_per_transfer() && ::fsync(fd) != 0) err = errno;
  return err;
}

std::unique_ptr<Workload> MakeRewriteWorkload(const v1::PhaseSpec& spec,
                                              const WorkloadOptions& options) {
  return std::make_unique<RewriteWorkload>(spec, options);
}

}  // namespace lockstep
