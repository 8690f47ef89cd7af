#include "agent/workloads/checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "agent/workloads/file_io.h"
#include "common/checked_math.h"
#include "common/clock.h"
#include "common/limits.h"
#include "common/status_macros.h"
#include "common/pattern.h"

namespace lockstep {
namespace {

std::string StepDir(const std::string& dir, uint32_t index) {
  return absl::StrFormat("%s/global_epoch1_step%u", dir, index + 1);
}

class CheckpointWorkload : public Workload {
 public:
  CheckpointWorkload(const v1::PhaseSpec& spec, const WorkloadOptions& options)
      : spec_(spec), options_(options) {}

  absl::Status Validate() const override {
    const v1::PhaseSpec& s = spec_;
    if (s.checkpoint_op() != v1::CHECKPOINT_WRITE && s.checkpoint_op() != v1::CHECKPOINT_READ) {
      return SpecError(s, "checkpoint_op is neither write nor read");
    }
    if (s.shard_bytes() == 0) return SpecError(s, "shard size is 0");
    if (s.checkpoints() == 0) return SpecError(s, "checkpoints is 0");
    if (s.transfer_bytes() > kMaxAiChunkBytes) {
      return SpecError(s, absl::StrFormat("transfer size %u is above the limit of %u",
                                          s.transfer_bytes(), kMaxAiChunkBytes));
    }
    return absl::OkStatus();
  }

  std::string TaskPath(const std::string& dir, uint32_t rank) const override {
    return CheckpointShardPath(dir, 0, rank);
  }

  // Write: the step directories (every agent; EEXIST is fine). Read: every
  // shard of this agent's ranks exists and holds shard_bytes.
  absl::Status Prepare(const BeneathDir& held, std::span<v1::TaskResult* const>) override {
    held_ = &held;
    const std::string& dir = held.path();
    dir_ = dir;
    if (Writes()) {  // CreatesMissingDir
      RETURN_IF_ERROR(MakeDirUnlessExists(held, dir, spec_.phase_id()));
    }
    for (uint32_t c = 0; c < spec_.checkpoints(); ++c) {
      if (Writes()) {
        RETURN_IF_ERROR(MakeDirUnlessExists(held, StepDir(dir, c), spec_.phase_id()));
        continue;
      }
      for (uint32_t t = 0; t < spec_.tasks(); ++t) {
        const std::string path = CheckpointShardPath(dir, c, spec_.first_rank() + t);
        struct stat st;
        if (held.Stat(path, &st) != 0 || static_cast<uint64_t>(st.st_size) < spec_.shard_bytes()) {
          return absl::FailedPreconditionError(absl::StrFormat(
              "phase %s: checkpoint shard %s is missing or shorter than %u bytes; write the "
              "checkpoints first (a checkpoint phase with checkpoint_op = \"write\" and the "
              "same dir, shard_size, checkpoints and tasks)",
              spec_.phase_id(), path, spec_.shard_bytes()));
        }
      }
    }
    chunk_bytes_ = AiChunkBytes(spec_);
    ASSIGN_OR_RETURN(buffers_, PatternBuffersPerTask(spec_, chunk_bytes_));
    return absl::OkStatus();
  }

  void RunTask(const TaskContext& task) override {
    v1::TaskResult* r = task.result;
    const int64_t start = RealtimeNs();
    r->set_first_io_unix_ns(start);
    uint64_t bytes = 0, files = 0;
    for (uint32_t c = 0; c < spec_.checkpoints() && !task.Aborted(); ++c) {
      task.phase->Barrier();
      if (task.Aborted()) break;
      v1::CheckpointShard* shard = r->add_checkpoints();
      shard->set_index(c);
      shard->set_file(CheckpointShardPath(dir_, c, task.rank));
      shard->set_start_unix_ns(RealtimeNs());
      if (c == 0) task.FirstOpIssuing();
      const uint64_t moved = Shard(task, shard->file(), buffers_[task.index].get(), bytes);
      if (c == 0 && moved > 0) task.FirstOpReturned();
      shard->set_stop_unix_ns(RealtimeNs());
      shard->set_bytes(moved);
      if (moved < spec_.shard_bytes()) break;  // failed or stopped
      bytes += moved;
      ++files;
    }
    SetWholeSpanTimers(start, RealtimeNs(), r);
    r->set_bytes(bytes);
    r->set_files(files);
  }

  absl::StatusOr<uint32_t> RemoveFiles(const BeneathDir& held) const override {
    const std::string& dir = held.path();
    if (!Writes()) return 0u;
    uint32_t removed = 0;
    for (uint32_t c = 0; c < spec_.checkpoints(); ++c) {
      for (uint32_t t = 0; t < spec_.tasks(); ++t) {
        const std::string path = CheckpointShardPath(dir, c, spec_.first_rank() + t);
        if (held.Unlink(path) == 0) {
          ++removed;
        } else if (errno != ENOENT) {
          return absl::InternalError(
              absl::StrFormat("cannot remove %s: %s", path, BeneathErrorText(errno)));
        }
      }
      held.Rmdir(StepDir(dir, c));  // empty once every agent removed its shards
    }
    return removed;
  }

  bool CreatesFiles() const override { return Writes(); }
  bool CreatesMissingDir() const override { return Writes(); }
  uint64_t AgentWriteBytes() const override {
    if (!Writes()) return 0;  // saturated: never passes the free-space check
    return SaturatingMul(SaturatingMul(spec_.shard_bytes(), spec_.checkpoints()), spec_.tasks());
  }
  // One chunk per task: tasks x AiChunkBytes (transfer size, 1 MiB when 0).
  uint64_t AgentBufferBytes() const override {
    return SaturatingMul(spec_.tasks(), AiChunkBytes(spec_));
  }
  std::string AgentBufferKeys() const override { return "tasks_per_agent or transfer_size"; }

 private:
  bool Writes() const { return spec_.checkpoint_op() == v1::CHECKPOINT_WRITE; }

  // Writes or reads one shard; the bytes moved (less than shard_bytes after
  // task.Fail or a stop). `before` = the task's bytes of earlier shards.
  uint64_t Shard(const TaskContext& task, const std::string& path, char* buf, uint64_t before) {
    const int fd = Writes() ? held_->OpenFile(path, O_CREAT | O_WRONLY | O_TRUNC, 0664)
                            : held_->OpenFile(path, O_RDONLY);
    if (fd < 0) {
      task.Fail({.what = Writes() ? "cannot create" : "cannot open", .path = path, .err = errno});
      return 0;
    }
    uint64_t off = 0;
    int err = 0;
    while (err == 0 && off < spec_.shard_bytes() && !task.Aborted()) {
      const size_t n = std::min<uint64_t>(spec_.shard_bytes() - off, chunk_bytes_);
      size_t done = 0;
      const int64_t t0 = BeginTransferOp(task.counters, options_, off);
      err = Writes() ? PwriteFull(fd, buf, n, off, &done) : PreadFull(fd, buf, n, off, &done);
      EndTransferOp(task.counters, t0, task.latency);
      if (err == 0 && done != n) {
        task.Fail({.what = "short read (end of file) from", .path = path, .offset = off + done});
        ::close(fd);
        return off;
      }
      off += done;
      task.counters->bytes.store(before + off, std::memory_order_relaxed);
      task.counters->ops.fetch_add(1, std::memory_order_relaxed);
    }
    if (err == 0 && Writes() && spec_.checkpoint_fsync() && ::fsync(fd) != 0) err = errno;
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) {
      task.Fail({.what = Writes() ? "write to" : "read from", .path = path, .err = err,
                 .offset = off});
      return std::min(off, spec_.shard_bytes() - 1);
    }
    return off;
  }

  const v1::PhaseSpec spec_;
  const WorkloadOptions options_;
  const BeneathDir* held_ = nullptr;  // from Prepare
  std::string dir_;                  // its path
  uint64_t chunk_bytes_ = kDefaultAiChunkBytes;
  std::vector<AlignedBuffer> buffers_;
};

}  // namespace

std::string CheckpointShardPath(const std::string& dir, uint32_t index, uint32_t rank) {
  return absl::StrFormat("%s/model_states-%u.pt", StepDir(dir, index), rank);
}

std::unique_ptr<Workload> MakeCheckpointWorkload(const v1::PhaseSpec& spec,
                                                 const WorkloadOptions& options) {
  return std::make_unique<CheckpointWorkload>(spec, options);
}

}  // namespace lockstep
