// REWRITE (bonnie++'s Rewrite): each transfer is read, modified in memory and
// written back where it came from, over the files a write phase left. The
// loop, stonewall, barriers and checks are the transfer workload's.
#ifndef LOCKSTEP_AGENT_WORKLOADS_REWRITE_H_
#define LOCKSTEP_AGENT_WORKLOADS_REWRITE_H_

#include <memory>

#include "agent/workloads/transfer.h"

namespace lockstep {

class RewriteWorkload : public TransferWorkload {
 public:
  using TransferWorkload::TransferWorkload;

 protected:
  int OpenFlags() const override;
  const char* IoVerb() const override;
  // pread, re-stamp, pwrite (and fsync with fsync_per_transfer). *moved is
  // what the read returned until the write, then what the write took.
  int Transfer(int fd, char* buf, size_t len, uint64_t offset, uint64_t tag,
               size_t* moved) const override;
};

std::unique_ptr<Workload> MakeRewriteWorkload(const v1::PhaseSpec& spec,
                                              const WorkloadOptions& options);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_REWRITE_H_
