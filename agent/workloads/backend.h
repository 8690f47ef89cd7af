// BACKEND: a server agent's own storage, measured without the network, so
// that an end-to-end figure can be read against what the servers' back end
// can do (Lustre's obdfilter-survey, BeeGFS's StorageBench, `ceph tell
// osd.N bench`).
//
// Two methods (PhaseSpec.backend.method):
//   "file"       each task writes one scratch file of `bytes` in the phase
//                directory (below the agent's roots: the directory on the
//                server's device) sequentially with O_DIRECT in blocks of
//                block_bytes, fdatasync inside the time, then reads it back
//                with O_DIRECT; the file is removed when the task ends, on
//                every path, and again by RemoveFiles (cleanup, the lease).
//   "osd_bench"  one task per OSD the agent serves (its config's [ceph]
//                daemons), all at once: the OSD's own bench through its
//                admin socket (agent/fs/ceph_daemons.h), as the OSD timed
//                it. Writes only. The phase's tasks must equal the OSDs.
// TaskResult.backend holds each task's figures; the transfer timers span the
// write (file: and bytes the write's), readback_* the read.
#ifndef LOCKSTEP_AGENT_WORKLOADS_BACKEND_H_
#define LOCKSTEP_AGENT_WORKLOADS_BACKEND_H_

#include <memory>

#include "agent/workloads/workload.h"

namespace lockstep {

std::unique_ptr<Workload> MakeBackendWorkload(const v1::PhaseSpec& spec,
                                              const WorkloadOptions& options);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_BACKEND_H_
