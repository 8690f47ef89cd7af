#include "agent/workloads/transfer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "agent/workloads/file_io.h"
#include "common/clock.h"
#include "common/layout.h"
#include "common/checked_math.h"
#include "common/limits.h"
#include "common/names.h"
#include "common/pattern.h"

namespace lockstep {

struct TransferWorkload::Task {
  uint32_t rank = 0;
  uint32_t data_rank = 0;  // whose data the task touches (IOR -C, -Z)
  std::string path;
  AlignedBuffer buf;
  AlignedBuffer scratch;            // for CheckPattern
  std::optional<Permutation> perm;  // IOR -z
  uint64_t file_blocks = 0;         // IOR -z -z: whole blocks in the file (stat at Prepare)
  bool first_stamped = false;       // PrimeTask stamped transfer 0 into buf
};

// One task's pass over its file: open, the transfers (to the stonewall and
// the wear-out target), fsync, close, the re-read of -W.
class TransferWorkload::TaskRun {
 public:
  TaskRun(const TransferWorkload& w, Task& t, const TaskContext& ctx)
      : w_(w),
        s_(w.spec_),
        t_(t),
        ctx_(ctx),
        write_(s_.kind() == v1::WRITE),
        xfer_(s_.transfer_bytes()),
        per_block_(TransfersPerBlock(s_)),
        total_pairs_(TransfersPerTask(s_)),
        perm_(t.perm ? &*t.perm : nullptr),
        tag_(PatternTag(s_.pattern_seed(), t.data_rank)),
        stamp_only_(xfer_ % kPatternBlockBytes == 0),
        blocks_(RandomBlocksState(s_, t.data_rank)) {}

  void Run() {
    if (!Open()) return;
    if (s_.intra_barriers()) ctx_.phase->Barrier();  // IOR -g: after open
    ctx_.phase->BeforeFirstTransfer(ctx_.index);
    ctx_.result->set_rdwr_start_unix_ns(RealtimeNs());
    rdwr_start_mono_ns_ = MonotonicNs();
    const bool ok = TransfersToStonewall();
    if (s_.stonewall_seconds() > 0 && s_.stonewall_wear_out()) WearOut(ok);
    SyncAndClose();
    NoteDone();
    if (write_ && s_.verify_after_write() && Clean()) VerifyAfterWrite();
  }

 private:
  bool Clean() const { return ctx_.result->error().empty() && !ctx_.abort->load(); }

  void Fail(const std::string& what, int err, uint64_t offset, bool verify = false) {
    ctx_.Fail({.what = what, .path = t_.path, .err = err, .offset = offset, .verify = verify});
  }

  // Opens the task's file, timed as IOR's open; false (and the task failed)
  // when it cannot.
  bool Open() {
    v1::TaskResult* r = ctx_.result;
    // O_NOFOLLOW: the agent runs as root; a symlink planted at a task's file
    // name (after Prepare removed the stale file) must not redirect the write.
    const int flags =
        O_CLOEXEC | O_NOFOLLOW | w_.OpenFlags() | (s_.direct() ? O_DIRECT : 0);
    r->set_open_start_unix_ns(RealtimeNs());
    fd_ = w_.dir_->OpenFile(t_.path, flags, 0664);
    const int open_err = errno;
    r->set_open_stop_unix_ns(RealtimeNs());
    if (fd_ >= 0) return true;
    r->set_rdwr_start_unix_ns(r->open_stop_unix_ns());
    r->set_rdwr_stop_unix_ns(r->open_stop_unix_ns());
    r->set_close_start_unix_ns(r->open_stop_unix_ns());
    r->set_close_stop_unix_ns(r->open_stop_unix_ns());
    Fail(write_ ? "cannot create" : "cannot open", open_err, 0);
    return false;
  }

  // Transfers in order until all are done, the stonewall or an abort; false
  // when a transfer failed.
  bool TransfersToStonewall() {
    const int64_t wall_mono_ns =
        s_.stonewall_seconds() > 0
            ? MonotonicNs() + int64_t{s_.stonewall_seconds()} * 1'000'000'000
            : INT64_MAX;
    bool hit = false;
    bool ok = true;
    for (; pairs_ < total_pairs_; ++pairs_) {
      if (ctx_.Aborted()) break;
      if (MonotonicNs() >= wall_mono_ns) {
        hit = true;
        ctx_.result->set_stonewall_stop_unix_ns(RealtimeNs());
        break;
      }
      if (!One(pairs_)) {
        ok = false;
        ++pairs_;
        break;
      }
    }
    if (s_.stonewall_seconds() > 0) {
      ctx_.result->set_stonewall_pairs(pairs_);
      ctx_.result->set_stonewall_hit(hit);
      ctx_.result->set_stonewall_duration_ns(MonotonicNs() - rdwr_start_mono_ns_);
    }
    return ok;
  }

  // IOR -O stoneWallingWearOut=1: continue to the most pairs any task did.
  void WearOut(bool ok) {
    const uint64_t target = ctx_.phase->WearOut(ok ? pairs_ : total_pairs_);
    // As IOR: the stonewall's duration ends when the tasks agreed on the target.
    ctx_.result->set_stonewall_duration_ns(MonotonicNs() - rdwr_start_mono_ns_);
    for (; ok && pairs_ < std::min(target, total_pairs_); ++pairs_) {
      if (ctx_.Aborted()) break;
      if (!One(pairs_)) {
        ++pairs_;
        break;
      }
    }
  }

  // After a transfer of `moved` bytes that completed at `done_mono_ns`: the
  // first time the agent's first task has ended, the bytes this task had
  // moved by that instant (this transfer counts if it completed before).
  // Every earlier check saw no end yet, so every earlier transfer counts.
  void ObserveFirstDone(int64_t done_mono_ns, size_t moved) {
    if (at_first_done_noted_) return;
    const int64_t first = w_.first_done_mono_ns_.load(std::memory_order_acquire);
    if (first == 0) return;
    at_first_done_noted_ = true;
    ctx_.result->set_bytes_at_first_done(done_mono_ns <= first ? bytes_ : bytes_ - moved);
  }

  // The task ended: the first of the agent to end sets the instant; one that
  // never saw it during its transfers moved all its bytes before it.
  void NoteDone() {
    int64_t expected = 0;
    w_.first_done_mono_ns_.compare_exchange_strong(expected, MonotonicNs(),
                                                   std::memory_order_acq_rel);
    if (!at_first_done_noted_) ctx_.result->set_bytes_at_first_done(bytes_);
    if (w_.options_.test_on_done) w_.options_.test_on_done(ctx_.index);
  }

  // Offset of the task's k-th transfer: in order, shuffled (-z), or, with
  // -z -z, within the block drawn for its segment (IOR's WriteOrRead: a
  // rand64 draw per segment, modulo the file's whole blocks).
  uint64_t OffsetOf(uint64_t k) {
    if (!s_.random_blocks()) return OrderedTransferOffset(s_, t_.data_rank, perm_, per_block_, k);
    if (k % per_block_ == 0) block_ = blocks_.Next() % t_.file_blocks;
    return block_ * s_.block_bytes() + (k % per_block_) * xfer_;
  }

  // One transfer (or read-modify-write pair), timed; false stops the loop.
  bool One(uint64_t k) {
    const uint64_t offset = OffsetOf(k);
    char* buf = t_.buf.get();
    if (write_ && !(k == 0 && t_.first_stamped)) {
      if (stamp_only_) {
        StampPattern(buf, xfer_, offset, tag_);
      } else {
        FillPattern(buf, xfer_, offset, tag_);
      }
    }
    const bool first = first_;
    if (first_) {
      ctx_.result->set_first_io_unix_ns(RealtimeNs());
      first_ = false;
    }
    if (k < 2 && w_.options_.test_on_issue) w_.options_.test_on_issue(ctx_.index, k, MonotonicNs());
    if (first) ctx_.FirstOpIssuing();
    TaskCounters* c = ctx_.counters;
    const int64_t t0 = BeginTransferOp(c, w_.options_, offset);
    size_t moved = 0;
    const int err = w_.Transfer(fd_, buf, xfer_, offset, tag_, &moved);
    const int64_t t1 = EndTransferOp(c, t0, ctx_.latency);
    bytes_ += moved;
    c->bytes.store(bytes_, std::memory_order_relaxed);
    c->ops.store(k + 1, std::memory_order_relaxed);
    ObserveFirstDone(t1, moved);
    if (err != 0) {
      Fail(w_.IoVerb(), err, offset + moved);
      return false;
    }
    if (first) ctx_.FirstOpReturned();  // every task issued its first before this one's second
    return write_ || CheckRead(buf, offset, moved);
  }

  // A read (or the read of a rewrite) returned the whole transfer and, with
  // verify (-R), the pattern. With verify, a short file is a failed
  // verification (VERIFY_FAILED: the controller keeps the file).
  bool CheckRead(const char* buf, uint64_t offset, size_t moved) {
    if (moved < xfer_) {
      Fail(absl::StrFormat("file is short: end of file after %u of %u bytes of a transfer "
                           "(IOR: \"returned EOF prematurely\"; the file is smaller than the "
                           "layout's %u bytes: written with a different block_size, segments or "
                           "tasks?):",
                           moved, xfer_, RequiredFileSize(s_, t_.data_rank)),
           0, offset + moved, /*verify=*/s_.verify());  // -R: a short file fails it
      return false;
    }
    if (!s_.verify()) return true;
    auto mismatch = CheckPattern(buf, xfer_, offset, tag_, t_.scratch.get());
    if (!mismatch) return true;
    Fail(absl::StrFormat("verification failed (%s) in", mismatch->Describe()), 0,
         mismatch->file_offset, /*verify=*/true);
    return false;
  }

  void SyncAndClose() {
    v1::TaskResult* r = ctx_.result;
    if (s_.kind() != v1::READ && s_.fsync_at_end() && Clean()) {
      if (::fsync(fd_) != 0) Fail("fsync of", errno, bytes_);
    }
    r->set_rdwr_stop_unix_ns(RealtimeNs());
    if (s_.intra_barriers()) ctx_.phase->Barrier();  // IOR -g: after the transfers
    r->set_close_start_unix_ns(RealtimeNs());
    if (::close(fd_) != 0 && r->error().empty()) Fail("close of", errno, bytes_);
    r->set_close_stop_unix_ns(RealtimeNs());
    r->set_bytes(bytes_);
    r->set_ops(pairs_);
  }

  // IOR -W: untimed, after the close: re-read what this task wrote, in the
  // order it wrote it, and compare with the pattern.
  void VerifyAfterWrite() {
    const int fd = w_.dir_->OpenFile(t_.path, O_RDONLY | (s_.direct() ? O_DIRECT : 0));
    if (fd < 0) {
      Fail("cannot open for verification after write", errno, 0);
      return;
    }
    for (uint64_t k = 0; k < pairs_; ++k) {
      if (ctx_.Aborted()) break;
      const uint64_t offset = OrderedTransferOffset(s_, t_.data_rank, perm_, per_block_, k);
      size_t moved = 0;
      const int err = PreadFull(fd, t_.buf.get(), xfer_, offset, &moved);
      if (err != 0) {
        Fail("verification after write: read from", err, offset + moved);
        break;
      }
      if (moved < xfer_) {
        Fail(absl::StrFormat("verification after write: file is short (got %u of %u bytes):",
                             moved, xfer_),
             0, offset + moved, /*verify=*/true);
        break;
      }
      auto mismatch = CheckPattern(t_.buf.get(), xfer_, offset, tag_, t_.scratch.get());
      if (mismatch) {
        Fail(absl::StrFormat("verification after write failed (%s) in", mismatch->Describe()), 0,
             mismatch->file_offset, /*verify=*/true);
        break;
      }
    }
    ::close(fd);
  }

  const TransferWorkload& w_;
  const v1::PhaseSpec& s_;
  Task& t_;
  const TaskContext& ctx_;
  const bool write_;
  const size_t xfer_;
  const uint64_t per_block_;
  const uint64_t total_pairs_;
  const Permutation* const perm_;
  const uint64_t tag_;
  const bool stamp_only_;
  IorRand64 blocks_;    // -z -z draws
  uint64_t block_ = 0;  // -z -z: the block of the current segment
  int fd_ = -1;
  bool first_ = true;  // no transfer issued yet
  bool at_first_done_noted_ = false;  // bytes_at_first_done set
  int64_t rdwr_start_mono_ns_ = 0;
  uint64_t bytes_ = 0;
  uint64_t pairs_ = 0;  // transfers (pairs) done
};

TransferWorkload::TransferWorkload(const v1::PhaseSpec& spec, const WorkloadOptions& options)
    : spec_(spec), options_(options) {}

TransferWorkload::~TransferWorkload() = default;

absl::Status TransferWorkload::Validate() const {
  return CheckTransferLayout(spec_);
}

std::string TransferWorkload::TaskPath(const std::string& dir, uint32_t rank) const {
  return TaskFilePath(dir, spec_, rank);
}

absl::Status TransferWorkload::Prepare(const BeneathDir& dir,
                                       std::span<v1::TaskResult* const> results) {
  dir_ = &dir;
  tasks_.clear();
  results_.assign(results.begin(), results.end());
  for (uint32_t i = 0; i < spec_.tasks(); ++i) {
    auto t = std::make_unique<Task>();
    t->rank = spec_.first_rank() + i;
    t->data_rank = DataRank(spec_, t->rank);
    t->path = TaskPath(dir.path(), t->rank);
    if (spec_.random_offsets()) {
      t->perm.emplace(TransfersPerTask(spec_), RandomOffsetsKey(spec_, t->data_rank));
    }
    tasks_.push_back(std::move(t));
  }
  if (CreatesFiles()) {
    // Stale files from an earlier run would change what a write measures
    // (IOR removes the old file before the write phase).
    auto removed = RemoveFiles(dir);
    if (!removed.ok()) return removed.status();
  } else {
    for (const auto& t : tasks_) {
      if (absl::Status s = CheckFileToRead(*t); !s.ok()) return s;
    }
  }
  for (const auto& t : tasks_) {
    if (absl::Status s = AllocateBuffers(*t); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// A missing file is refused before the start (IOR's open fails before any
// transfer). A file smaller than the layout is read as IOR reads it: every
// transfer within it moves, the first that meets its end fails the task
// ("file is short", as IOR's "read(...) returned EOF prematurely" aborts).
absl::Status TransferWorkload::CheckFileToRead(Task& t) const {
  struct stat st;
  if (dir_->Stat(t.path, &st) != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s phase %s: file %s of task %u does not exist (%s); run a write phase with the "
        "same dir, file_per_process, block_size, segments and tasks first, with keep = true "
        "if it is in another run",
        PhaseKindName(spec_.kind()), spec_.phase_id(), t.path, t.rank, BeneathErrorText(errno)));
  }
  // -z -z draws its blocks from the file's actual size (IOR stats it
  // before the read, get_file_size).
  t.file_blocks = static_cast<uint64_t>(st.st_size) / spec_.block_bytes();
  if (spec_.random_blocks() && t.file_blocks == 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s phase %s: file %s of task %u has %u bytes, less than one block (%u bytes): random "
        "blocks (IOR -z -z) are drawn from the file's whole blocks, and there are none (IOR "
        "divides by zero here and dies of SIGFPE); read a file written with at least one block",
        PhaseKindName(spec_.kind()), spec_.phase_id(), t.path, t.rank,
        static_cast<uint64_t>(st.st_size), spec_.block_bytes()));
  }
  return absl::OkStatus();
}

absl::Status TransferWorkload::AllocateBuffers(Task& t) const {
  const size_t xfer = spec_.transfer_bytes();
  auto buf = AllocateAligned(xfer);
  if (!buf.ok()) return buf.status();
  t.buf = std::move(*buf);
  if (spec_.kind() == v1::WRITE) {
    // The pattern of the first transfer; each later one re-stamps it.
    FillPattern(t.buf.get(), xfer, TransferOffset(spec_, t.data_rank, 0, 0),
                PatternTag(spec_.pattern_seed(), t.data_rank));
  } else {
    std::memset(t.buf.get(), 0, xfer);
  }
  const bool checks =
      spec_.kind() == v1::WRITE ? spec_.verify_after_write() : spec_.verify();
  if (checks) {
    auto scratch = AllocateAligned(xfer);
    if (!scratch.ok()) return scratch.status();
    t.scratch = std::move(*scratch);
  }
  return absl::OkStatus();
}

void TransferWorkload::PrimeTask(uint32_t index) {
  Task& t = *tasks_[index];
  if (spec_.kind() != v1::WRITE || TransfersPerTask(spec_) == 0 || !t.buf) return;
  const uint64_t offset = OrderedTransferOffset(spec_, t.data_rank, t.perm ? &*t.perm : nullptr,
                                                TransfersPerBlock(spec_), 0);
  const uint64_t tag = PatternTag(spec_.pattern_seed(), t.data_rank);
  if (spec_.transfer_bytes() % kPatternBlockBytes == 0) {
    StampPattern(t.buf.get(), spec_.transfer_bytes(), offset, tag);
  } else {
    FillPattern(t.buf.get(), spec_.transfer_bytes(), offset, tag);
  }
  t.first_stamped = true;
}

void TransferWorkload::RunTask(const TaskContext& task) {
  TaskRun(*this, *tasks_[task.index], task).Run();
}

void TransferWorkload::Finish() {
  std::map<std::string, std::optional<uint64_t>> sizes;  // one stat per distinct file
  for (size_t i = 0; i < tasks_.size() && i < results_.size(); ++i) {
    auto [it, fresh] = sizes.try_emplace(tasks_[i]->path);
    if (fresh) {
      struct stat st;
      if (dir_->Stat(it->first, &st) == 0) it->second = static_cast<uint64_t>(st.st_size);
    }
    if (it->second) results_[i]->set_file_size_bytes(*it->second);
  }
}

absl::StatusOr<uint32_t> TransferWorkload::RemoveFiles(const BeneathDir& held) const {
  const std::string& dir = held.path();
  std::set<std::string> paths;
  if (spec_.file_per_process()) {
    v1::PhaseSpec own = spec_;
    own.set_reorder_shift(0);  // a task removes the file it owns, not the one it read
    own.set_reorder_random(false);
    for (uint32_t i = 0; i < spec_.tasks(); ++i) {
      paths.insert(TaskFilePath(dir, own, spec_.first_rank() + i));
    }
  } else {
    // IOR's rank 0 alone removes a shared file; every agent tries, so that a
    // directory that is not shared after all is left clean too.
    paths.insert(TaskFilePath(dir, spec_, 0));
  }
  uint32_t removed = 0;
  for (const std::string& p : paths) {
    if (held.Unlink(p) == 0) {
      ++removed;
    } else if (errno != ENOENT) {
      return absl::InternalError(absl::StrFormat("cannot remove %s: %s", p, BeneathErrorText(errno)));
    }
  }
  return removed;
}

bool TransferWorkload::CreatesFiles() const { return spec_.kind() == v1::WRITE; }

uint64_t TransferWorkload::AgentWriteBytes() const {
  if (spec_.kind() != v1::WRITE) return 0;
  // Saturated: a size beyond 64 bits never passes the free-space check.
  return SaturatingMul(SaturatingMul(spec_.tasks(), spec_.block_bytes()), spec_.segments());
}

int TransferWorkload::OpenFlags() const {
  return spec_.kind() == v1::WRITE ? (O_RDWR | O_CREAT) : O_RDONLY;
}

const char* TransferWorkload::IoVerb() const {
  return spec_.kind() == v1::WRITE ? "write to" : "read from";
}

int TransferWorkload::Transfer(int fd, char* buf, size_t len, uint64_t offset, uint64_t /*tag*/,
                               size_t* moved) const {
  if (spec_.kind() != v1::WRITE) return PreadFull(fd, buf, len, offset, moved);
  int err = PwriteFull(fd, buf, len, offset, moved);
  if (err == 0 && spec_.fsync_per_transfer() && ::fsync(fd) != 0) err = errno;
  return err;
}

std::unique_ptr<Workload> MakeTransferWorkload(const v1::PhaseSpec& spec,
                                               const WorkloadOptions& options) {
  return std::make_unique<TransferWorkload>(spec, options);
}

}  // namespace lockstep
