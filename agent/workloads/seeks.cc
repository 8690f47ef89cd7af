#include "agent/workloads/seeks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "agent/workloads/file_io.h"
#include "common/checked_math.h"
#include "common/clock.h"
#include "common/errors.h"
#include "common/layout.h"
#include "common/limits.h"
#include "common/mix.h"
#include "common/pattern.h"
#include "common/sizes.h"

namespace lockstep {

uint64_t SeekFileBytes(const v1::PhaseSpec& spec) {
  return spec.block_bytes() * spec.segments() * spec.total_tasks();
}

uint64_t SeekOffset(const v1::PhaseSpec& spec, uint32_t rank, uint64_t k) {
  const uint64_t chunks = SeekFileBytes(spec) / spec.transfer_bytes();
  const uint64_t key = Mix64(spec.random_seed() ^ Mix64((uint64_t{spec.repetition()} << 32) | rank));
  // SplitMix64's sequence at position k: uniform 64-bit draws.
  const uint64_t draw = Mix64(key + k * 0x9E3779B97F4A7C15ULL);
  // Lemire's multiply-shift: [0, 2^64) onto [0, chunks) without a division.
  const uint64_t chunk =
      static_cast<uint64_t>((static_cast<unsigned __int128>(draw) * chunks) >> 64);
  return chunk * spec.transfer_bytes();
}

bool IsRewriteSeek(uint64_t k, uint32_t pct) {
  if (pct >= 100) return true;
  return (k % 100) * pct % 100 < pct;
}

uint32_t SeekDataRank(const v1::PhaseSpec& spec, uint64_t offset) {
  // Shared layout: offset = segment·tasks·block + rank·block + j·transfer.
  return static_cast<uint32_t>((offset / spec.block_bytes()) % spec.total_tasks());
}

namespace {

constexpr uint64_t kLayoutPieceBytes = uint64_t{4} << 20;

class SeeksWorkload : public Workload {
 public:
  SeeksWorkload(const v1::PhaseSpec& spec, const WorkloadOptions& options)
      : spec_(spec), options_(options) {}

  absl::Status Validate() const override {
    const v1::PhaseSpec& s = spec_;
    if (s.file_per_process()) {
      return SpecError(s, "seeks work on one shared file (bonnie++'s); drop file_per_process");
    }
    if (s.seeks_per_task() == 0) return SpecError(s, "seeks per task is 0");
    if (s.seek_rewrite_pct() > 100) {
      return SpecError(s, absl::StrFormat("seek_rewrite_pct %u is above 100",
                                          s.seek_rewrite_pct()));
    }
    return CheckTransferLayout(s);
  }

  std::string TaskPath(const std::string& dir, uint32_t /*rank*/) const override {
    return TaskFilePath(dir, spec_, 0);
  }

  // Lays the file out when it is missing or short, then one buffer (and, with
  // verify, one scratch buffer) of a transfer per task.
  absl::Status Prepare(const BeneathDir& dir, std::span<v1::TaskResult* const>) override {
    dir_ = &dir;
    path_ = TaskPath(dir.path(), 0);
    if (absl::Status s = LayOutIfShort(dir); !s.ok()) return s;
    tasks_.clear();
    for (uint32_t i = 0; i < spec_.tasks(); ++i) {
      Task t;
      auto buf = AllocateAligned(spec_.transfer_bytes());
      if (!buf.ok()) return buf.status();
      t.buf = std::move(*buf);
      if (spec_.verify()) {
        auto scratch = AllocateAligned(spec_.transfer_bytes());
        if (!scratch.ok()) return scratch.status();
        t.scratch = std::move(*scratch);
      }
      tasks_.push_back(std::move(t));
    }
    return absl::OkStatus();
  }

  void RunTask(const TaskContext& task) override;

  absl::StatusOr<uint32_t> RemoveFiles(const BeneathDir& dir) const override {
    const std::string path = TaskPath(dir.path(), 0);
    if (dir.Unlink(path) == 0) return 1u;
    if (errno == ENOENT) return 0u;
    return absl::InternalError(absl::StrFormat("cannot remove %s: %s", path, BeneathErrorText(errno)));
  }

  // The file may be laid out by Prepare: the session removes it if the
  // controller dies (keep = true releases it as for a write phase).
  bool CreatesFiles() const override { return true; }
  // Per task a transfer buffer (and with verify a scratch one), plus the
  // piece a layout writes through, min(block, 4 MiB), freed before them:
  // tasks x transfer size (x 2 with verify) + the piece.
  uint64_t AgentBufferBytes() const override {
    const uint64_t per_task = SaturatingMul(spec_.transfer_bytes(), spec_.verify() ? 2 : 1);
    return SaturatingAdd(SaturatingMul(spec_.tasks(), per_task),
                         std::min(spec_.block_bytes(), kLayoutPieceBytes));
  }
  std::string AgentBufferKeys() const override { return "tasks_per_agent or transfer_size"; }

 private:
  struct Task {
    AlignedBuffer buf;
    AlignedBuffer scratch;  // for CheckPattern
  };
  class TaskRun;

  absl::Status LayOutIfShort(const BeneathDir& dir) const;
  absl::Status LayOut(int fd) const;

  const v1::PhaseSpec spec_;
  const WorkloadOptions options_;
  const BeneathDir* dir_ = nullptr;  // from Prepare
  std::string path_;
  std::vector<Task> tasks_;
};

absl::Status SeeksWorkload::LayOutIfShort(const BeneathDir& dir) const {
  const uint64_t need = SeekFileBytes(spec_);
  struct stat st;
  uint64_t have = 0;
  if (dir.Stat(path_, &st) == 0) {
    have = static_cast<uint64_t>(st.st_size);
    if (have >= need) return absl::OkStatus();
  } else if (errno != ENOENT) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "seeks phase %s: cannot stat %s: %s", spec_.phase_id(), path_, BeneathErrorText(errno)));
  }
  const uint64_t limit = options_.max_bytes_per_phase;
  if (limit > 0 && need - have > limit) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "seeks phase %s: laying out %s would write %s on this agent; its limit is %s "
        "(limits.max_bytes_per_phase in the agent config): shrink block_size, segments or "
        "tasks, or lay the file out with a write phase of the same keys",
        spec_.phase_id(), path_, HumanBytes(need - have), HumanBytes(limit)));
  }
  struct statvfs sv;
  if (!spec_.ignore_free_space() && ::fstatvfs(dir.fd(), &sv) == 0) {
    const uint64_t free_bytes = static_cast<uint64_t>(sv.f_bavail) * sv.f_frsize;
    if (need - have > free_bytes) {
      return WithKind(absl::ResourceExhaustedError(absl::StrFormat(
                          "seeks phase %s: laying out %s (%u bytes) needs %u more bytes in %s "
                          "and only %u are free; shrink block_size, segments or tasks, or free "
                          "space",
                          spec_.phase_id(), path_, need, need - have, dir.path(), free_bytes)),
                      v1::NO_SPACE);
    }
  }
  const int fd = dir.OpenFile(path_, O_WRONLY | O_CREAT, 0664);
  if (fd < 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "seeks phase %s: cannot create %s to lay it out: %s; put a write phase with the same "
        "dir, block_size, segments and tasks before it",
        spec_.phase_id(), path_, BeneathErrorText(errno)));
  }
  absl::Status s = LayOut(fd);
  if (s.ok() && ::fsync(fd) != 0) {
    s = absl::InternalError(absl::StrFormat("seeks phase %s: fsync of %s after laying it out: %s",
                                            spec_.phase_id(), path_, std::strerror(errno)));
  }
  ::close(fd);
  return s;
}

// Every rank's blocks with that rank's pattern, as a write phase of this
// layout writes them.
absl::Status SeeksWorkload::LayOut(int fd) const {
  const uint64_t piece = std::min(spec_.block_bytes(), kLayoutPieceBytes);
  auto buf = AllocateAligned(piece);
  if (!buf.ok()) return buf.status();
  for (uint64_t segment = 0; segment < spec_.segments(); ++segment) {
    for (uint32_t rank = 0; rank < spec_.total_tasks(); ++rank) {
      const uint64_t tag = PatternTag(spec_.pattern_seed(), rank);
      const uint64_t start = TransferOffset(spec_, rank, segment, 0);
      for (uint64_t done = 0; done < spec_.block_bytes(); done += piece) {
        const size_t len = std::min(piece, spec_.block_bytes() - done);
        FillPattern(buf->get(), len, start + done, tag);
        size_t written = 0;
        if (int err = PwriteFull(fd, buf->get(), len, start + done, &written); err != 0) {
          return WithKind(absl::InternalError(absl::StrFormat(
                              "seeks phase %s: laying out %s: write at offset %u: %s",
                              spec_.phase_id(), path_, start + done, std::strerror(err))),
                          err == ENOSPC ? v1::NO_SPACE : v1::IO_FAILED);
        }
      }
    }
  }
  return absl::OkStatus();
}

// One task's seeks: open, the timed seeks, fsync (with fsync), close.
class SeeksWorkload::TaskRun {
 public:
  TaskRun(const SeeksWorkload& w, Task& t, const TaskContext& ctx)
      : w_(w), s_(w.spec_), t_(t), ctx_(ctx), xfer_(s_.transfer_bytes()) {}

  void Run() {
    v1::TaskResult* r = ctx_.result;
    const bool rewrites = s_.seek_rewrite_pct() > 0;
    const int flags = O_CLOEXEC | O_NOFOLLOW | (rewrites ? O_RDWR : O_RDONLY) |
                      (s_.direct() ? O_DIRECT : 0);
    r->set_open_start_unix_ns(RealtimeNs());
    fd_ = w_.dir_->OpenFile(w_.path_, flags);
    const int open_err = errno;
    r->set_open_stop_unix_ns(RealtimeNs());
    r->set_rdwr_start_unix_ns(r->open_stop_unix_ns());
    if (fd_ < 0) {
      r->set_rdwr_stop_unix_ns(r->open_stop_unix_ns());
      r->set_close_start_unix_ns(r->open_stop_unix_ns());
      r->set_close_stop_unix_ns(r->open_stop_unix_ns());
      Fail("cannot open", open_err, 0);
      return;
    }
    for (uint64_t k = 0; k < s_.seeks_per_task() && !ctx_.Aborted(); ++k) {
      if (!One(k)) break;
    }
    if (rewritten_ > 0 && s_.fsync_at_end() && Clean() && ::fsync(fd_) != 0) {
      Fail("fsync of", errno, 0);
    }
    r->set_rdwr_stop_unix_ns(RealtimeNs());
    r->set_close_start_unix_ns(RealtimeNs());
    if (::close(fd_) != 0 && r->error().empty()) Fail("close of", errno, 0);
    r->set_close_stop_unix_ns(RealtimeNs());
    r->set_bytes(bytes_);
    r->set_ops(seeks_);
    r->set_seeks_rewritten(rewritten_);
  }

 private:
  bool Clean() const { return ctx_.result->error().empty() && !ctx_.Aborted(); }

  void Fail(const std::string& what, int err, uint64_t offset, bool verify = false) {
    ctx_.Fail({.what = what, .path = w_.path_, .err = err, .offset = offset, .verify = verify});
  }

  // Seek k, timed: read the block (checked with verify, which adds its
  // compare to the seek's latency), write it back when k rewrites. False
  // stops the task (it failed).
  bool One(uint64_t k) {
    const uint64_t offset = SeekOffset(s_, ctx_.rank, k);
    const bool rewrite = IsRewriteSeek(k, s_.seek_rewrite_pct());
    const uint32_t data_rank = SeekDataRank(s_, offset);
    const uint64_t tag = PatternTag(s_.pattern_seed(), data_rank);
    char* buf = t_.buf.get();
    const bool first = k == 0;
    if (first) {
      ctx_.result->set_first_io_unix_ns(RealtimeNs());
      ctx_.FirstOpIssuing();
    }
    TaskCounters* c = ctx_.counters;
    const int64_t t0 = BeginTransferOp(c, w_.options_, offset);
    size_t moved = 0;
    int err = PreadFull(fd_, buf, xfer_, offset, &moved);
    bytes_ += moved;
    bool ok = err == 0 ? CheckBlock(buf, offset, moved, tag, data_rank) : false;
    if (err != 0) Fail("read from", err, offset + moved);
    if (ok && rewrite) {
      // "Modified" as the rewrite kind does: the offset words re-stamped, so
      // the block stays the pattern and a later verified read still checks.
      StampPattern(buf, xfer_, offset, tag);
      err = PwriteFull(fd_, buf, xfer_, offset, &moved);
      if (err == 0 && s_.fsync_per_transfer() && ::fsync(fd_) != 0) err = errno;
      bytes_ += moved;
      if (err != 0) {
        Fail("rewrite of", err, offset + moved);
        ok = false;
      } else {
        ++rewritten_;
      }
    }
    EndTransferOp(c, t0, ctx_.latency);
    seeks_ = k + 1;
    c->bytes.store(bytes_, std::memory_order_relaxed);
    c->ops.store(seeks_, std::memory_order_relaxed);
    if (ok && first) ctx_.FirstOpReturned();
    return ok;
  }

  // The read returned the whole block and, with verify, its pattern; else
  // the task failed.
  bool CheckBlock(const char* buf, uint64_t offset, size_t moved, uint64_t tag,
                  uint32_t data_rank) {
    if (moved < xfer_) {
      Fail(absl::StrFormat("file is short (got %u of %u bytes; laid out by a different "
                           "layout?):",
                           moved, xfer_),
           0, offset + moved, /*verify=*/s_.verify());  // with verify: its failure
      return false;
    }
    if (!s_.verify()) return true;
    auto mismatch = CheckPattern(buf, xfer_, offset, tag, t_.scratch.get());
    if (!mismatch) return true;
    Fail(absl::StrFormat("verification failed (%s; block of rank %u) in", mismatch->Describe(),
                         data_rank),
         0, mismatch->file_offset, /*verify=*/true);
    return false;
  }

  const SeeksWorkload& w_;
  const v1::PhaseSpec& s_;
  Task& t_;
  const TaskContext& ctx_;
  const size_t xfer_;
  int fd_ = -1;
  uint64_t bytes_ = 0;
  uint64_t seeks_ = 0;
  uint64_t rewritten_ = 0;
};

void SeeksWorkload::RunTask(const TaskContext& task) {
  TaskRun(*this, tasks_[task.index], task).Run();
}

}  // namespace

std::unique_ptr<Workload> MakeSeeksWorkload(const v1::PhaseSpec& spec,
                                            const WorkloadOptions& options) {
  return std::make_unique<SeeksWorkload>(spec, options);
}

}  // namespace lockstep
