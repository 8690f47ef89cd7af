// Which file system each allowed root was on when the agent started, so
// that a mount that went away (a client whose ceph-fuse or Lustre mount is
// gone, leaving the empty mount-point directory) is refused at Prepare,
// naming the host, the root and both file systems, instead of running on
// whatever lies under the mount point.
#ifndef LOCKSTEP_AGENT_FS_ROOT_MOUNTS_H_
#define LOCKSTEP_AGENT_FS_ROOT_MOUNTS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace lockstep {

class RootMounts {
 public:
  // Records st_dev and the file-system type of each root (canonical paths).
  // A root that cannot be stat'ed is recorded as unknown and never refused.
  explicit RootMounts(const std::vector<std::string>& roots);

  // For the phase directory `dir` as the plan gives it (relative: below the
  // first root): the root that holds it must still be on the device it was
  // on at start. FailedPrecondition naming `host`, the root and what it was
  // and is now on; statfs failures (ENOTCONN of a FUSE mount whose daemon
  // died) the same.
  absl::Status Check(const std::string& dir, const std::string& host) const;

 private:
  struct Root {
    std::string path;
    dev_t dev = 0;
    bool known = false;
    std::string fs;  // "fuse.ceph-fuse"-like name, else the statfs type
  };
  std::vector<Root> roots_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_FS_ROOT_MOUNTS_H_
