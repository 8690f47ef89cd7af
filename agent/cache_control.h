// A host's part of a cache barrier (CacheBarrier RPC): sync(2), the page
// cache, dentries and inodes (/proc/sys/vm/drop_caches), the client-side
// caches of the file systems of the agent's roots (FileSystem::
// DropClientCaches: Lustre's lock LRU), and on server agents the
// caches of the file-system daemons they serve (CephFS OSD and MDS caches,
// agent/fs/ceph_daemons.h). What could not be done is a warning in the
// reply, or an error when the request says it is required.
#ifndef LOCKSTEP_AGENT_CACHE_CONTROL_H_
#define LOCKSTEP_AGENT_CACHE_CONTROL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/fs/ceph_daemons.h"
#include "agent/fs/file_system.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

struct CacheControl {
  bool allow_drop_caches = true;
  std::string drop_caches_path = "/proc/sys/vm/drop_caches";
  // The agent's roots and how to tell their file systems: the client caches
  // are dropped once per file system the roots are on.
  const std::vector<std::string>* roots = nullptr;
  const FileSystemContext* fs = nullptr;
  CephDaemons* daemons = nullptr;  // may be null or empty
};

// Does what `request` asks. PermissionDenied (or the file system's error)
// only when request.required() and something was not done; client caches
// asked of an agent with no root on a file system that has them:
// FailedPrecondition naming its roots when required, else a warning.
absl::StatusOr<v1::CacheReply> DropCaches(const v1::CacheRequest& request,
                                          const CacheControl& control);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_CACHE_CONTROL_H_
