#include "agent/phase_runner.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/procfs.h"
#include "agent/workloads.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/histogram.h"
#include "common/layout.h"
#include "common/mdtest_layout.h"
#include "common/names.h"
#include "common/pattern.h"

namespace lockstep {
namespace {

constexpr uint32_t kSeriesIntervalMs = 100;
constexpr size_t kBufferAlign = 4096;
constexpr uint64_t kMaxSmallBuffer = 64ull << 20;
constexpr uint64_t kMaxTreeDirs = 10'000'000;

bool IsTransferKind(v1::PhaseKind k) {
  return k == v1::WRITE || k == v1::READ || k == v1::REWRITE;
}

struct AlignedFree {
  void operator()(char* p) const { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<char, AlignedFree>;

absl::StatusOr<AlignedBuffer> AllocateAligned(size_t bytes) {
  void* p = nullptr;
  size_t rounded = (bytes + kBufferAlign - 1) / kBufferAlign * kBufferAlign;
  if (posix_memalign(&p, kBufferAlign, rounded) != 0) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("cannot allocate a %u-byte I/O buffer; use a smaller transfer_size", bytes));
  }
  return AlignedBuffer(static_cast<char*>(p));
}

// pwrite(2) until all of `len` is written; returns 0 or an errno.
int PwriteFull(int fd, const char* buf, size_t len, uint64_t offset, size_t* done) {
  *done = 0;
  while (*done < len) {
    ssize_t n = ::pwrite(fd, buf + *done, len - *done, static_cast<off_t>(offset + *done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    *done += static_cast<size_t>(n);
  }
  return 0;
}

// pread(2) until `len` bytes or end of file; returns 0 or an errno.
int PreadFull(int fd, char* buf, size_t len, uint64_t offset, size_t* done) {
  *done = 0;
  while (*done < len) {
    ssize_t n = ::pread(fd, buf + *done, len - *done, static_cast<off_t>(offset + *done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) break;  // end of file
    *done += static_cast<size_t>(n);
  }
  return 0;
}

absl::Status ValidateSpec(const v1::PhaseSpec& s) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrFormat("phase %s: %s", s.phase_id(), why));
  };
  if (!IsTransferKind(s.kind()) && s.kind() != v1::SMALL_FILES && s.kind() != v1::MDTEST) {
    return bad("kind must be write, read, rewrite, small_files or mdtest");
  }
  if (s.file_name().empty() || s.file_name().find('/') != std::string::npos) {
    return bad(absl::StrFormat("file name \"%s\" must be a plain name without '/'", s.file_name()));
  }
  if (s.tasks() == 0) return bad("no tasks for this agent");
  if (s.total_tasks() == 0 || s.first_rank() + s.tasks() > s.total_tasks()) {
    return bad(absl::StrFormat("ranks %u..%u do not fit in %u tasks", s.first_rank(),
                               s.first_rank() + s.tasks() - 1, s.total_tasks()));
  }
  if (s.kind() == v1::SMALL_FILES) {
    if (s.small_files() == 0) return bad("small_files is 0");
    if (s.small_file_min_bytes() > s.small_file_max_bytes()) {
      return bad(absl::StrFormat("small file size range %u..%u is empty", s.small_file_min_bytes(),
                                 s.small_file_max_bytes()));
    }
    if (s.small_file_max_bytes() > kMaxSmallBuffer) {
      return bad(absl::StrFormat("small files of up to %u bytes: the limit is %u",
                                 s.small_file_max_bytes(), kMaxSmallBuffer));
    }
    return absl::OkStatus();
  }
  if (s.kind() == v1::MDTEST) {
    if (s.md_op() == v1::MD_OP_UNSPECIFIED) return bad("mdtest phase without md_op");
    if (s.md_write_bytes() > kMaxSmallBuffer || s.md_read_bytes() > kMaxSmallBuffer) {
      return bad(absl::StrFormat("mdtest -w/-e of more than %u bytes", kMaxSmallBuffer));
    }
    if (s.md_branching() > 1 && s.md_depth() > 0 &&
        std::pow(double(s.md_branching()), double(s.md_depth())) > double(kMaxTreeDirs)) {
      return bad(absl::StrFormat("a tree of branching %u and depth %u has more than %u dirs",
                                 s.md_branching(), s.md_depth(), kMaxTreeDirs));
    }
    if (MdtestTreeDirs(s.md_branching(), s.md_depth()) > kMaxTreeDirs) {
      return bad(absl::StrFormat("a tree of more than %u directories", kMaxTreeDirs));
    }
    if (s.md_unique_dir() && s.md_depth() > 0 && s.md_neighbor_shift() % s.total_tasks() != 0) {
      return bad("mdtest -u -N with a tree deeper than 0 (-z): mdtest 4.1 looks for the items "
                 "in directories that do not exist");
    }
    return absl::OkStatus();
  }
  if (s.transfer_bytes() == 0) return bad("transfer size is 0");
  if (s.transfer_bytes() % 8 != 0) return bad("transfer size must be a multiple of 8 bytes");
  if (s.block_bytes() == 0) return bad("block size is 0");
  if (s.block_bytes() % s.transfer_bytes() != 0) {
    return bad(absl::StrFormat("block size %u is not a multiple of transfer size %u",
                               s.block_bytes(), s.transfer_bytes()));
  }
  if (s.segments() == 0) return bad("segments is 0");
  if (s.tasks() == 0) return bad("no tasks for this agent");
  if (s.total_tasks() == 0 || s.first_rank() + s.tasks() > s.total_tasks()) {
    return bad(absl::StrFormat("ranks %u..%u do not fit in %u tasks", s.first_rank(),
                               s.first_rank() + s.tasks() - 1, s.total_tasks()));
  }
  if (s.direct() && s.transfer_bytes() % 4096 != 0) {
    return bad(absl::StrFormat(
        "O_DIRECT needs a transfer size that is a multiple of 4096, got %u", s.transfer_bytes()));
  }
  return absl::OkStatus();
}

}  // namespace

struct Task {
  uint32_t rank = 0;
  uint32_t data_rank = 0;
  std::string path;
  AlignedBuffer buf;
  AlignedBuffer scratch;  // verify
  std::optional<Permutation> perm;  // IOR -z
  v1::TaskResult result;
  LatencyHistogram hist;
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> ops{0};
  // The transfer in flight, for stall reports: monotonic start (0 = none)
  // and file offset.
  std::atomic<int64_t> op_start_ns{0};
  std::atomic<uint64_t> op_offset{0};
  std::thread thread;
};

struct PhaseRunner::Impl {
  RunnerOptions options;
  v1::PhaseSpec spec;
  std::string dir;
  std::vector<std::unique_ptr<Task>> tasks;
  std::vector<std::string> files;
  // MDTEST: the trees' directories, per task (index into tasks); shared
  // trees are the same for every task.
  std::vector<std::vector<std::string>> trees;

  std::atomic<bool> abort{false};
  std::atomic<bool> done{false};

  absl::Mutex mu;
  bool start_given ABSL_GUARDED_BY(mu) = false;
  int64_t start_at ABSL_GUARDED_BY(mu) = 0;
  int64_t spin_duration_ns ABSL_GUARDED_BY(mu) = 0;
  uint32_t tasks_done ABSL_GUARDED_BY(mu) = 0;
  std::string abort_reason ABSL_GUARDED_BY(mu);
  // Stonewall wear-out: pairs reported by the tasks that reached the wall.
  uint32_t wear_reported ABSL_GUARDED_BY(mu) = 0;
  uint64_t wear_max_pairs ABSL_GUARDED_BY(mu) = 0;
  // IOR -g: a reusable barrier over this agent's tasks.
  uint32_t barrier_arrived ABSL_GUARDED_BY(mu) = 0;
  uint64_t barrier_generation ABSL_GUARDED_BY(mu) = 0;

  EventSink sink;
  uint32_t progress_interval_ms = 1000;
  std::thread monitor;

  void TaskMain(Task* t);
  void RunIo(Task* t);
  void RunWork(Task* t, size_t index);
  void VerifyAfterWrite(Task* t, uint64_t pairs);
  void Fail(Task* t, const std::string& what, int err, uint64_t offset);
  void FailAt(Task* t, const std::string& what, const std::string& path, int err,
              uint64_t offset);
  // Reports `pairs` and waits until every task did; returns the largest.
  uint64_t WearOut(uint64_t pairs);
  // Waits until every task of this agent arrived (or the phase aborts).
  void Barrier();
  void MonitorMain();
  void RequestAbort(const std::string& reason) {
    // Under mu, so that tasks parked in Await see it.
    absl::MutexLock lock(&mu);
    if (abort_reason.empty()) abort_reason = reason;
    abort.store(true);
  }
};

void PhaseRunner::Impl::Fail(Task* t, const std::string& what, int err, uint64_t offset) {
  FailAt(t, what, t->path, err, offset);
}

uint64_t PhaseRunner::Impl::WearOut(uint64_t pairs) {
  absl::MutexLock lock(&mu);
  wear_max_pairs = std::max(wear_max_pairs, pairs);
  ++wear_reported;
  mu.Await(absl::Condition(
      +[](Impl* self) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return self->wear_reported == self->tasks.size() || self->abort.load();
      },
      this));
  return wear_max_pairs;
}

void PhaseRunner::Impl::Barrier() {
  absl::MutexLock lock(&mu);
  const uint64_t gen = barrier_generation;
  if (++barrier_arrived == tasks.size()) {
    barrier_arrived = 0;
    ++barrier_generation;
    return;
  }
  struct Arg {
    Impl* self;
    uint64_t gen;
  } arg{this, gen};
  mu.Await(absl::Condition(
      +[](Arg* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return a->self->barrier_generation != a->gen || a->self->abort.load();
      },
      &arg));
}

void PhaseRunner::Impl::FailAt(Task* t, const std::string& what, const std::string& path, int err,
                               uint64_t offset) {
  if (t->result.error().empty()) {
    std::string msg = absl::StrFormat("task %u: %s %s at offset %u", t->rank, what, path,
                                      offset);
    if (err != 0) msg += absl::StrFormat(": %s (errno %d)", std::strerror(err), err);
    msg += absl::StrFormat(" after %u bytes", t->bytes.load());
    t->result.set_error(msg);
    t->result.set_error_errno(err);
    t->result.set_error_offset(offset);
    RequestAbort(msg);
  }
}

void PhaseRunner::Impl::RunIo(Task* t) {
  const v1::PhaseSpec& s = spec;
  const v1::PhaseKind kind = s.kind();
  const bool write = kind == v1::WRITE;
  const bool rewrite = kind == v1::REWRITE;
  const bool reads = kind == v1::READ || rewrite;
  // O_NOFOLLOW: the agent runs as root; a symlink planted at a task's file
  // name (after Prepare removed the stale file) must not redirect the write.
  int flags = O_CLOEXEC | O_NOFOLLOW | (write ? (O_RDWR | O_CREAT) : rewrite ? O_RDWR : O_RDONLY);
  if (s.direct()) flags |= O_DIRECT;
  const size_t xfer = s.transfer_bytes();
  const uint64_t per_block = TransfersPerBlock(s);
  const uint64_t total_pairs = TransfersPerTask(s);
  const Permutation* perm = t->perm ? &*t->perm : nullptr;
  const uint64_t tag = PatternTag(s.pattern_seed(), t->data_rank);
  const bool stamp_only = xfer % kPatternBlockBytes == 0;
  const char* what_io = write ? "write to" : rewrite ? "rewrite of" : "read from";

  t->result.set_open_start_unix_ns(RealtimeNs());
  int fd = ::open(t->path.c_str(), flags, 0664);
  int open_err = errno;
  t->result.set_open_stop_unix_ns(RealtimeNs());
  if (fd < 0) {
    t->result.set_rdwr_start_unix_ns(t->result.open_stop_unix_ns());
    t->result.set_rdwr_stop_unix_ns(t->result.open_stop_unix_ns());
    t->result.set_close_start_unix_ns(t->result.open_stop_unix_ns());
    t->result.set_close_stop_unix_ns(t->result.open_stop_unix_ns());
    Fail(t, write ? "cannot create" : "cannot open", open_err, 0);
    return;
  }
  if (s.intra_barriers()) Barrier();  // IOR -g: after open

  t->result.set_rdwr_start_unix_ns(RealtimeNs());
  const int64_t rdwr_start_mono_ns = MonotonicNs();
  const int64_t wall_ns =
      s.stonewall_seconds() > 0 ? MonotonicNs() + int64_t{s.stonewall_seconds()} * 1'000'000'000
                                : INT64_MAX;
  bool first = true;
  uint64_t bytes = 0;
  uint64_t k = 0;  // pairs done
  // One transfer (or read-modify-write pair); false stops the loop.
  auto one = [&](uint64_t kk) -> bool {
    const uint64_t offset = OrderedTransferOffset(s, t->data_rank, perm, per_block, kk);
    size_t moved = 0;
    int err = 0;
    if (write) {
      if (stamp_only) {
        StampPattern(t->buf.get(), xfer, offset, tag);
      } else {
        FillPattern(t->buf.get(), xfer, offset, tag);
      }
    }
    if (first) {
      t->result.set_first_io_unix_ns(RealtimeNs());
      first = false;
    }
    const int64_t t0 = MonotonicNs();
    t->op_offset.store(offset, std::memory_order_relaxed);
    t->op_start_ns.store(t0, std::memory_order_relaxed);
    if (options.test_delay_per_transfer_ns > 0) {
      // Test only: a slower device.
      absl::SleepFor(absl::Nanoseconds(options.test_delay_per_transfer_ns));
    }
    if (write) {
      err = PwriteFull(fd, t->buf.get(), xfer, offset, &moved);
      if (err == 0 && s.fsync_per_transfer() && ::fsync(fd) != 0) err = errno;
    } else {
      err = PreadFull(fd, t->buf.get(), xfer, offset, &moved);
    }
    if (rewrite && err == 0 && moved == xfer) {
      // Modify in memory (re-stamp each 4 KiB block's offset word: the data
      // stays the pattern, so a later verified read still checks it), then
      // write it back where it came from.
      StampPattern(t->buf.get(), xfer, offset, tag);
      err = PwriteFull(fd, t->buf.get(), xfer, offset, &moved);
      if (err == 0 && s.fsync_per_transfer() && ::fsync(fd) != 0) err = errno;
    }
    const int64_t t1 = MonotonicNs();
    t->op_start_ns.store(0, std::memory_order_relaxed);
    t->hist.Record(static_cast<uint64_t>(t1 - t0));
    bytes += moved;
    t->bytes.store(bytes, std::memory_order_relaxed);
    t->ops.store(kk + 1, std::memory_order_relaxed);
    if (err != 0) {
      Fail(t, what_io, err, offset + moved);
      return false;
    }
    if (reads && moved < xfer) {
      Fail(t,
           absl::StrFormat("file is short (got %u of %u bytes; written by a different layout?):",
                           moved, xfer),
           0, offset + moved);
      return false;
    }
    if (reads && s.verify()) {
      auto mismatch = CheckPattern(t->buf.get(), xfer, offset, tag, t->scratch.get());
      if (mismatch) {
        Fail(t, absl::StrFormat("verification failed (%s) in", mismatch->Describe()), 0,
             mismatch->file_offset);
        t->result.set_error_offset(mismatch->file_offset);
        t->result.set_verify_failed(true);
        return false;
      }
    }
    return true;
  };
  bool hit = false;
  bool ok = true;
  for (; k < total_pairs; ++k) {
    if (abort.load(std::memory_order_relaxed)) break;
    if (MonotonicNs() >= wall_ns) {
      hit = true;
      break;
    }
    if (!one(k)) {
      ok = false;
      ++k;
      break;
    }
  }
  if (s.stonewall_seconds() > 0) {
    t->result.set_stonewall_pairs(k);
    t->result.set_stonewall_hit(hit);
    t->result.set_stonewall_duration_ns(MonotonicNs() - rdwr_start_mono_ns);
    // IOR -O stoneWallingWearOut=1: continue to the most pairs any task did.
    if (s.stonewall_wear_out()) {
      uint64_t target = WearOut(ok ? k : total_pairs);
      // As IOR: the stonewall's duration ends when the tasks agreed on the target.
      t->result.set_stonewall_duration_ns(MonotonicNs() - rdwr_start_mono_ns);
      for (; ok && k < std::min(target, total_pairs); ++k) {
        if (abort.load(std::memory_order_relaxed)) break;
        if (!one(k)) {
          ++k;
          break;
        }
      }
    }
  }
  if ((write || rewrite) && s.fsync_at_end() && t->result.error().empty() && !abort.load()) {
    if (::fsync(fd) != 0) Fail(t, "fsync of", errno, bytes);
  }
  t->result.set_rdwr_stop_unix_ns(RealtimeNs());
  if (s.intra_barriers()) Barrier();  // IOR -g: after the transfers
  t->result.set_close_start_unix_ns(RealtimeNs());
  if (::close(fd) != 0 && t->result.error().empty()) Fail(t, "close of", errno, bytes);
  t->result.set_close_stop_unix_ns(RealtimeNs());
  t->result.set_bytes(bytes);
  t->result.set_ops(k);
  if (write && s.verify_after_write() && t->result.error().empty() && !abort.load()) {
    VerifyAfterWrite(t, k);
  }
}

// IOR -W: untimed, after the close: re-read what this task wrote, in the
// order it wrote it, and compare with the pattern.
void PhaseRunner::Impl::VerifyAfterWrite(Task* t, uint64_t pairs) {
  const v1::PhaseSpec& s = spec;
  const size_t xfer = s.transfer_bytes();
  const uint64_t per_block = TransfersPerBlock(s);
  const Permutation* perm = t->perm ? &*t->perm : nullptr;
  const uint64_t tag = PatternTag(s.pattern_seed(), t->data_rank);
  int fd = ::open(t->path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (s.direct() ? O_DIRECT : 0));
  if (fd < 0) {
    Fail(t, "cannot open for verification after write", errno, 0);
    return;
  }
  for (uint64_t k = 0; k < pairs; ++k) {
    if (abort.load(std::memory_order_relaxed)) break;
    const uint64_t offset = OrderedTransferOffset(s, t->data_rank, perm, per_block, k);
    size_t moved = 0;
    int err = PreadFull(fd, t->buf.get(), xfer, offset, &moved);
    if (err != 0) {
      Fail(t, "verification after write: read from", err, offset + moved);
      break;
    }
    if (moved < xfer) {
      Fail(t, absl::StrFormat("verification after write: file is short (got %u of %u bytes):",
                              moved, xfer),
           0, offset + moved);
      t->result.set_verify_failed(true);
      break;
    }
    auto mismatch = CheckPattern(t->buf.get(), xfer, offset, tag, t->scratch.get());
    if (mismatch) {
      Fail(t, absl::StrFormat("verification after write failed (%s) in", mismatch->Describe()), 0,
           mismatch->file_offset);
      t->result.set_error_offset(mismatch->file_offset);
      t->result.set_verify_failed(true);
      break;
    }
  }
  ::close(fd);
}

void PhaseRunner::Impl::RunWork(Task* t, size_t index) {
  TaskWork w;
  w.spec = &spec;
  w.dir = dir;
  w.rank = t->rank;
  w.buf = t->buf.get();
  w.scratch = t->scratch.get();
  w.tree = trees.empty() ? nullptr : &trees[index];
  if (spec.kind() == v1::MDTEST) w.md_owner = MdtestItemOwner(spec, t->rank);
  w.abort = &abort;
  w.result = &t->result;
  w.hist = &t->hist;
  w.bytes = &t->bytes;
  w.ops = &t->ops;
  w.fail = [this, t](const std::string& what, const std::string& path, int err, uint64_t offset,
                     bool verify) {
    FailAt(t, what, path, err, offset);
    if (verify) t->result.set_verify_failed(true);
  };
  if (spec.kind() == v1::SMALL_FILES) {
    RunSmallFilesTask(w);
  } else {
    RunMdtestTask(w);
  }
}

void PhaseRunner::Impl::TaskMain(Task* t) {
  int64_t at = 0;
  int64_t spin = 0;
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](Impl* self) ABSL_NO_THREAD_SAFETY_ANALYSIS {
          return self->start_given || self->abort.load();
        },
        this));
    at = start_at;
    spin = spin_duration_ns;
  }
  if (!abort.load()) {
    // Wake within ~1 µs of the instant instead of the default 50 µs slack.
    ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    // While waiting for the instant, a real-time priority (where permitted)
    // makes the wake-up preempt whatever else runs on the core; the task
    // drops back to normal scheduling before its first I/O.
    struct sched_param rt = {};
    rt.sched_priority = 1;
    const bool raised = spin > 0 && pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt) == 0;
    const bool released = WaitUntilRealtime(at, spin, &abort);
    if (raised) {
      struct sched_param normal = {};
      pthread_setschedparam(pthread_self(), SCHED_OTHER, &normal);
    }
    if (released) {
      t->result.set_release_unix_ns(RealtimeNs());
      if (IsTransferKind(spec.kind())) {
        RunIo(t);
      } else {
        size_t index = 0;
        while (tasks[index].get() != t) ++index;
        RunWork(t, index);
      }
    }
  }
  if (abort.load() && t->result.error().empty()) {
    absl::MutexLock lock(&mu);
    t->result.set_error(absl::StrFormat("task %u stopped: %s", t->rank, abort_reason));
  }
  absl::MutexLock lock(&mu);
  ++tasks_done;
}

void PhaseRunner::Impl::MonitorMain() {
  int64_t at;
  {
    absl::MutexLock lock(&mu);
    at = start_at;
  }
  std::vector<uint64_t> series;
  uint64_t last_series_bytes = 0;
  CpuTimes last_cpu;
  bool have_cpu = false;
  int64_t next_series = at + int64_t{kSeriesIntervalMs} * 1'000'000;
  int64_t next_progress = at + int64_t{progress_interval_ms} * 1'000'000;
  const uint32_t n = static_cast<uint32_t>(tasks.size());
  auto total_bytes = [&] {
    uint64_t b = 0;
    for (auto& t : tasks) b += t->bytes.load(std::memory_order_relaxed);
    return b;
  };
  for (;;) {
    int64_t now = RealtimeNs();
    int64_t wake = std::min(next_series, next_progress);
    bool all_done;
    uint32_t done_count;
    {
      absl::MutexLock lock(&mu);
      mu.AwaitWithTimeout(
          absl::Condition(
              +[](Impl* self) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                return self->tasks_done == self->tasks.size();
              },
              this),
          absl::Nanoseconds(std::max<int64_t>(wake - now, 0)));
      all_done = tasks_done == n;
      done_count = tasks_done;
    }
    now = RealtimeNs();
    if (all_done) break;
    if (now >= next_series) {
      uint64_t b = total_bytes();
      while (next_series <= now) {
        series.push_back(b - last_series_bytes);
        last_series_bytes = b;
        next_series += int64_t{kSeriesIntervalMs} * 1'000'000;
      }
    }
    if (now >= next_progress) {
      v1::PhaseEvent ev;
      v1::Progress* p = ev.mutable_progress();
      p->set_bytes(total_bytes());
      uint64_t ops = 0;
      for (auto& t : tasks) ops += t->ops.load(std::memory_order_relaxed);
      p->set_ops(ops);
      p->set_elapsed_ns(now - at);
      p->set_tasks_done(done_count);
      // This host's CPU since the last progress event, for the live line.
      if (auto text = ReadFileToString("/proc/stat"); text.ok()) {
        if (auto stat = ParseProcStat(*text); stat.ok()) {
          if (have_cpu) {
            CpuPercent pct = CpuPercentBetween(last_cpu, stat->cpu);
            p->set_cpu_busy_pct(100.0 - pct.idle);
            p->set_cpu_iowait_pct(pct.iowait);
          }
          last_cpu = stat->cpu;
          have_cpu = true;
        }
      }
      sink(ev);
      while (next_progress <= now) next_progress += int64_t{progress_interval_ms} * 1'000'000;
    }
  }
  for (auto& t : tasks) {
    if (t->thread.joinable()) t->thread.join();
  }
  if (spec.kind() == v1::MDTEST) FinishMdtestPhase(spec, dir);
  uint64_t b = total_bytes();
  if (b > last_series_bytes || series.empty()) series.push_back(b - last_series_bytes);

  v1::PhaseEvent ev;
  v1::PhaseResult* r = ev.mutable_result();
  r->set_phase_id(spec.phase_id());
  r->set_ok(true);
  for (auto& t : tasks) {
    t->result.set_rank(t->rank);
    t->result.set_file(t->path);
    t->hist.ToProto(t->result.mutable_latency());
    if (!t->result.error().empty() && r->ok()) {
      r->set_ok(false);
    }
    *r->add_tasks() = t->result;
  }
  if (!r->ok()) {
    // The first real failure, not the "stopped" echoes it caused.
    for (auto& t : tasks) {
      if (t->result.error_errno() != 0 || t->result.error().find("stopped:") == std::string::npos) {
        if (!t->result.error().empty()) {
          r->set_error(t->result.error());
          break;
        }
      }
    }
    if (r->error().empty()) {
      absl::MutexLock lock(&mu);
      r->set_error(abort_reason);
    }
  }
  r->set_series_interval_ms(kSeriesIntervalMs);
  for (uint64_t v : series) r->add_series_bytes(v);
  // Done before the result leaves: a controller holding the result may send
  // the next Prepare at once, and Prepare refuses a runner that is not Done()
  // ("still running"). Every task thread is joined above, so nothing runs.
  done.store(true);
  sink(ev);
}

PhaseRunner::PhaseRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

PhaseRunner::~PhaseRunner() {
  impl_->RequestAbort("phase runner shut down");
  if (impl_->monitor.joinable()) {
    impl_->monitor.join();
  }
  for (auto& t : impl_->tasks) {
    if (t->thread.joinable()) t->thread.join();
  }
}

absl::StatusOr<std::unique_ptr<PhaseRunner>> PhaseRunner::Prepare(const v1::PhaseSpec& spec,
                                                                  const std::string& dir,
                                                                  const RunnerOptions& options) {
  absl::Status valid = ValidateSpec(spec);
  if (!valid.ok()) return valid;
  // IOR -d: the delay comes before the stale files are removed and before
  // the start barrier, so it is never timed.
  if (spec.delay_seconds() > 0) absl::SleepFor(absl::Seconds(spec.delay_seconds()));
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->spec = spec;
  impl->dir = dir;
  const v1::PhaseKind kind = spec.kind();
  const bool write = kind == v1::WRITE;
  std::set<std::string> seen;
  for (uint32_t i = 0; i < spec.tasks(); ++i) {
    auto t = std::make_unique<Task>();
    t->rank = spec.first_rank() + i;
    t->data_rank = IsTransferKind(kind) ? DataRank(spec, t->rank) : t->rank;
    if (kind == v1::SMALL_FILES) {
      t->path = SmallFilesRoot(dir, spec, t->rank);
    } else if (kind == v1::MDTEST) {
      impl->trees.push_back(MdtestTaskTree(dir, spec, t->rank));
      t->path = impl->trees.back().front();
    } else {
      t->path = TaskFilePath(dir, spec, t->rank);
    }
    if (spec.random_offsets() && IsTransferKind(kind)) {
      t->perm.emplace(TransfersPerTask(spec), RandomOffsetsKey(spec, t->data_rank));
    }
    if (seen.insert(t->path).second) impl->files.push_back(t->path);
    impl->tasks.push_back(std::move(t));
  }
  // Stale files from an earlier run would change what a write measures
  // (IOR removes the old file before the write phase).
  if (write || kind == v1::SMALL_FILES ||
      (kind == v1::MDTEST && spec.md_op() == v1::MD_TREE_CREATE)) {
    auto removed = RemovePhaseFiles(spec, dir);
    if (!removed.ok()) return removed.status();
    if (kind == v1::MDTEST && spec.first_rank() == 0) {
      absl::Status made = PrepareMdtestTestDir(spec, dir);
      if (!made.ok()) return made;
    }
  } else if (IsTransferKind(kind)) {
    for (auto& t : impl->tasks) {
      struct stat st;
      uint64_t need = RequiredFileSize(spec, t->data_rank);
      if (::stat(t->path.c_str(), &st) != 0) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "%s phase %s: file %s of task %u does not exist (%s); run a write phase with the "
            "same dir, file_per_process, block_size, segments and tasks first, with keep = true "
            "if it is in another run",
            PhaseKindName(kind), spec.phase_id(), t->path, t->rank, std::strerror(errno)));
      }
      if (static_cast<uint64_t>(st.st_size) < need) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "%s phase %s: file %s of task %u is %d bytes, the layout needs %u; it was written "
            "with a different block_size, segments or tasks",
            PhaseKindName(kind), spec.phase_id(), t->path, t->rank,
            static_cast<int64_t>(st.st_size), need));
      }
    }
  }
  size_t buf_bytes = spec.transfer_bytes();
  if (kind == v1::SMALL_FILES) buf_bytes = std::max<uint64_t>(spec.small_file_max_bytes(), 8);
  if (kind == v1::MDTEST) {
    buf_bytes = std::max<uint64_t>({spec.md_write_bytes(), spec.md_read_bytes(), 8});
  }
  const bool need_scratch = (kind == v1::READ && spec.verify()) ||
                            (kind == v1::REWRITE && spec.verify()) ||
                            (write && spec.verify_after_write()) || kind == v1::SMALL_FILES;
  for (auto& t : impl->tasks) {
    auto buf = AllocateAligned(buf_bytes);
    if (!buf.ok()) return buf.status();
    t->buf = std::move(*buf);
    if (write) {
      FillPattern(t->buf.get(), spec.transfer_bytes(), TransferOffset(spec, t->data_rank, 0, 0),
                  PatternTag(spec.pattern_seed(), t->data_rank));
    } else if (kind == v1::SMALL_FILES || kind == v1::MDTEST) {
      FillPattern(t->buf.get(), buf_bytes / 8 * 8, 0, PatternTag(spec.pattern_seed(), t->rank));
    } else {
      std::memset(t->buf.get(), 0, spec.transfer_bytes());
    }
    if (need_scratch) {
      auto scratch = AllocateAligned(buf_bytes);
      if (!scratch.ok()) return scratch.status();
      t->scratch = std::move(*scratch);
    }
  }
  if (kind == v1::MDTEST && spec.first_rank() == 0) {
    // mdtest's "FS" line: rank 0 statfs(2)s the -d directory.
    struct statfs sf;
    if (::statfs(dir.c_str(), &sf) == 0) {
      v1::FsStats* fs = impl->tasks.front()->result.mutable_dir_fs();
      fs->set_block_bytes(static_cast<uint64_t>(sf.f_bsize));
      fs->set_blocks(static_cast<uint64_t>(sf.f_blocks));
      fs->set_blocks_free(static_cast<uint64_t>(sf.f_bfree));
      fs->set_files(static_cast<uint64_t>(sf.f_files));
      fs->set_files_free(static_cast<uint64_t>(sf.f_ffree));
    }
  }
  Impl* raw = impl.get();
  for (auto& t : impl->tasks) {
    Task* tp = t.get();
    tp->thread = std::thread([raw, tp] {
      // Named so that perf and bpftrace can pick the I/O threads out.
      std::string name = absl::StrFormat("ls-task-%u", tp->rank).substr(0, 15);
      pthread_setname_np(pthread_self(), name.c_str());
      raw->TaskMain(tp);
    });
  }
  return std::unique_ptr<PhaseRunner>(new PhaseRunner(std::move(impl)));
}

absl::Status PhaseRunner::Start(int64_t start_at_unix_ns, int64_t spin_duration_ns,
                                uint32_t progress_interval_ms, EventSink sink) {
  {
    absl::MutexLock lock(&impl_->mu);
    if (impl_->start_given) {
      return absl::FailedPreconditionError(
          absl::StrFormat("phase %s was already started", impl_->spec.phase_id()));
    }
    if (impl_->abort.load()) {
      return absl::AbortedError(absl::StrFormat("phase %s was aborted before its start: %s",
                                                impl_->spec.phase_id(), impl_->abort_reason));
    }
    impl_->sink = std::move(sink);
    impl_->progress_interval_ms = std::max<uint32_t>(progress_interval_ms, 50);
    impl_->start_at = start_at_unix_ns;
    impl_->spin_duration_ns = spin_duration_ns;
    impl_->start_given = true;
  }
  Impl* raw = impl_.get();
  impl_->monitor = std::thread([raw] { raw->MonitorMain(); });
  return absl::OkStatus();
}

void PhaseRunner::Abort(const std::string& reason) { impl_->RequestAbort(reason); }

bool PhaseRunner::Done() const { return impl_->done.load(); }

bool PhaseRunner::Started() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->start_given;
}

std::vector<std::string> PhaseRunner::Stalled(int64_t threshold_ns) const {
  std::vector<std::string> out;
  if (impl_->done.load()) return out;
  const int64_t now = MonotonicNs();
  for (const auto& t : impl_->tasks) {
    const int64_t since = t->op_start_ns.load(std::memory_order_relaxed);
    if (since == 0 || now - since < threshold_ns) continue;
    out.push_back(absl::StrFormat("task %u stuck in %s %s at offset %u for %.1f s", t->rank,
                                  PhaseKindName(impl_->spec.kind()), t->path,
                                  t->op_offset.load(std::memory_order_relaxed),
                                  static_cast<double>(now - since) / 1e9));
  }
  return out;
}

const v1::PhaseSpec& PhaseRunner::spec() const { return impl_->spec; }
const std::vector<std::string>& PhaseRunner::files() const { return impl_->files; }

absl::StatusOr<uint32_t> RemovePhaseFiles(const v1::PhaseSpec& spec, const std::string& dir) {
  uint32_t removed = 0;
  if (spec.kind() == v1::SMALL_FILES || spec.kind() == v1::MDTEST) {
    // Whole trees: each task's own, or the shared mdtest tree (rank 0's).
    std::set<std::string> roots;
    v1::PhaseSpec own = spec;
    own.set_md_op(v1::MD_TREE_REMOVE);  // the trees the tasks own
    for (uint32_t i = 0; i < spec.tasks(); ++i) {
      const uint32_t rank = spec.first_rank() + i;
      if (spec.kind() == v1::SMALL_FILES) {
        roots.insert(SmallFilesRoot(dir, spec, rank));
      } else if (MdtestOwnsTree(own, rank)) {
        roots.insert(MdtestTaskTree(dir, own, rank).front());
      }
    }
    for (const std::string& r : roots) {
      auto n = RemoveTree(r);
      if (!n.ok()) return n.status();
      if (*n > 0) ++removed;
    }
    // The iteration's test-dir, once empty, by rank 0's agent as mdtest's
    // rank 0 (another agent's trees may still be in it).
    if (spec.kind() == v1::MDTEST && spec.first_rank() == 0) {
      ::rmdir(MdtestTestDir(dir, spec.repetition()).c_str());
    }
    return removed;
  }
  std::set<std::string> paths;
  if (spec.file_per_process()) {
    v1::PhaseSpec own = spec;
    own.set_reorder_shift(0);  // a task removes the file it owns, not the one it read
    own.set_reorder_random(false);
    for (uint32_t i = 0; i < spec.tasks(); ++i) {
      paths.insert(TaskFilePath(dir, own, spec.first_rank() + i));
    }
  } else {
    // IOR's rank 0 alone removes a shared file; every agent tries, so that a
    // directory that is not shared after all is left clean too.
    paths.insert(TaskFilePath(dir, spec, 0));
  }
  for (const std::string& p : paths) {
    if (::unlink(p.c_str()) == 0) {
      ++removed;
    } else if (errno != ENOENT) {
      return absl::InternalError(
          absl::StrFormat("cannot remove %s: %s", p, std::strerror(errno)));
    }
  }
  return removed;
}

}  // namespace lockstep
