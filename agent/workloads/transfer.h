// IOR's transfer loop: WRITE and READ phases, one file per task or one shared
// file (common/layout.h), transfers in order or shuffled (IOR -z), stonewall
// (-D) with wear-out, intra-phase barriers (-g), fsync (-e, -Y), verified
// reads (-R) and the re-read after a write (-W). REWRITE (rewrite.h) is this
// loop with a read-modify-write for each transfer.
#ifndef LOCKSTEP_AGENT_WORKLOADS_TRANSFER_H_
#define LOCKSTEP_AGENT_WORKLOADS_TRANSFER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agent/workloads/workload.h"

namespace lockstep {

class TransferWorkload : public Workload {
 public:
  TransferWorkload(const v1::PhaseSpec& spec, const WorkloadOptions& options);
  ~TransferWorkload() override;

  absl::Status Validate() const override;
  std::string TaskPath(const std::string& dir, uint32_t rank) const override;
  // Write: removes stale files (IOR does, a stale file changes what a write
  // measures). Read and rewrite: each task's file must be as long as the
  // layout needs.
  absl::Status Prepare(const BeneathDir& dir, std::span<v1::TaskResult* const> results) override;
  void RunTask(const TaskContext& task) override;
  // Write: the first transfer's pattern, stamped into the task's buffer.
  void PrimeTask(uint32_t index) override;
  // Stats each task's file (each distinct file once) into its
  // TaskResult.file_size_bytes, after every task of this agent closed it.
  void Finish() override;
  absl::StatusOr<uint32_t> RemoveFiles(const BeneathDir& dir) const override;
  bool CreatesFiles() const override;
  // Write: tasks × block × segments.
  uint64_t AgentWriteBytes() const override;
  // Per task a transfer buffer, and a scratch one for the pattern check:
  // tasks x transfer size, x 2 with verify or verify_after_write (either,
  // as CheckTransferLayout weighs it: TransferBufferBytes).
  uint64_t AgentBufferBytes() const override { return TransferBufferBytes(spec_); }
  std::string AgentBufferKeys() const override { return "tasks_per_agent or transfer_size"; }

 protected:
  // open(2) flags of a task's file, besides O_CLOEXEC | O_NOFOLLOW | O_DIRECT.
  virtual int OpenFlags() const;
  // The I/O of a failed transfer in messages: "write to", "read from".
  virtual const char* IoVerb() const;
  // The system calls of one transfer of `len` bytes at `offset` through `buf`
  // (for a write the pattern is in `buf` already; `tag` is the task's
  // pattern tag). Returns 0 or an errno; *moved receives the bytes the file
  // returned or took.
  virtual int Transfer(int fd, char* buf, size_t len, uint64_t offset, uint64_t tag,
                       size_t* moved) const;

  const v1::PhaseSpec& spec() const { return spec_; }

 private:
  struct Task;
  class TaskRun;

  absl::Status CheckFileToRead(Task& t) const;
  absl::Status AllocateBuffers(Task& t) const;

  const v1::PhaseSpec spec_;
  const WorkloadOptions options_;
  const BeneathDir* dir_ = nullptr;           // the phase directory, from Prepare
  std::vector<std::unique_ptr<Task>> tasks_;  // by task index, from Prepare
  std::vector<v1::TaskResult*> results_;      // by task index, from Prepare (the runner's)
  // The monotonic instant the first task of this agent ended (its close);
  // 0 until then. Each task compares its transfers' completions with it:
  // TaskResult.bytes_at_first_done (IOzone's Min xfer), exact among the
  // tasks of one agent.
  mutable std::atomic<int64_t> first_done_mono_ns_{0};
};

std::unique_ptr<Workload> MakeTransferWorkload(const v1::PhaseSpec& spec,
                                               const WorkloadOptions& options);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_TRANSFER_H_
