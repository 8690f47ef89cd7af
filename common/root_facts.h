// An agent's roots as it reported them at Attach (HostFacts.roots): which
// root holds a directory, and what its file system can do. Pure functions
// of the facts; the controller's checks before the first phase use them
// (controller/run/fs_checks.h, the AI kinds' dataset sizing).
#ifndef LOCKSTEP_COMMON_ROOT_FACTS_H_
#define LOCKSTEP_COMMON_ROOT_FACTS_H_

#include <string>

#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// The root of `facts` that holds `dir` (relative: the first root; absolute:
// the longest root that is a prefix), null when none does.
const v1::RootFacts* RootOf(const std::string& dir, const v1::HostFacts& facts);

// What the file system of `root` can do: RootFacts.capabilities as its agent
// declared them (agent/fs/file_system.h); from an agent older than wire
// minor 10, judged by the statfs type as controllers before it did (Lustre,
// CephFS, FUSE and types the agent did not know may take layouts and
// checksums, left to Prepare; Lustre, CephFS, NFS, GPFS, BeeGFS and FUSE are
// shared).
v1::FsCapabilities CapabilitiesOf(const v1::RootFacts& root);

// The file system of `root` for messages: "ext4", "cephfs (ceph-fuse)",
// "lustre (2.15.4)".
std::string FsNameOf(const v1::RootFacts& root);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_ROOT_FACTS_H_
