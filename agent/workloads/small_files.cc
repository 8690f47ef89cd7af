#include "agent/workloads/small_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <set>
#include <vector>

#include "absl/strings/str_format.h"
#include "agent/workloads/file_io.h"
#include "common/checked_math.h"
#include "common/clock.h"
#include "common/limits.h"
#include "common/mix.h"
#include "common/pattern.h"

namespace lockstep {
namespace {

// Each small file's pattern starts at a distinct "offset" (index << 32), so a
// file holding another file's data is caught; the stamps stay 4 KiB aligned.
uint64_t SmallFileBase(uint64_t index) { return index << 32; }

class SmallFilesWorkload : public Workload {
 public:
  explicit SmallFilesWorkload(const v1::PhaseSpec& spec) : spec_(spec) {}

  absl::Status Validate() const override {
    const v1::PhaseSpec& s = spec_;
    if (s.small_files() == 0) return SpecError(s, "small_files is 0");
    if (s.small_file_min_bytes() > s.small_file_max_bytes()) {
      return SpecError(s, absl::StrFormat("small file size range %u..%u is empty",
                                          s.small_file_min_bytes(), s.small_file_max_bytes()));
    }
    if (s.small_file_max_bytes() > kMaxSmallFileBytes) {
      return SpecError(s, absl::StrFormat("small files of up to %u bytes: the limit is %u",
                                          s.small_file_max_bytes(), kMaxSmallFileBytes));
    }
    return absl::OkStatus();
  }

  std::string TaskPath(const std::string& dir, uint32_t rank) const override {
    return SmallFilesRoot(dir, spec_, rank);
  }

  // Removes stale trees; one buffer (filled with the pattern) and one scratch
  // buffer of the largest file per task.
  absl::Status Prepare(const BeneathDir& dir, std::span<v1::TaskResult* const>) override {
    dir_ = &dir;
    auto removed = RemoveFiles(dir);
    if (!removed.ok()) return removed.status();
    const size_t bytes = std::max<uint64_t>(spec_.small_file_max_bytes(), 8);
    tasks_.clear();
    for (uint32_t i = 0; i < spec_.tasks(); ++i) {
      Task t;
      auto buf = AllocateAligned(bytes);
      if (!buf.ok()) return buf.status();
      t.buf = std::move(*buf);
      FillPattern(t.buf.get(), bytes / 8 * 8, 0,
                  PatternTag(spec_.pattern_seed(), spec_.first_rank() + i));
      auto scratch = AllocateAligned(bytes);
      if (!scratch.ok()) return scratch.status();
      t.scratch = std::move(*scratch);
      tasks_.push_back(std::move(t));
    }
    return absl::OkStatus();
  }

  void RunTask(const TaskContext& task) override {
    TaskRun run(*this, tasks_[task.index], task);
    bool ok = run.MakeDirs();
    const uint64_t written = run.WriteFiles(&ok);
    run.ReadBack(ok, written);
  }

  absl::StatusOr<uint32_t> RemoveFiles(const BeneathDir& dir) const override {
    std::set<std::string> roots;
    for (uint32_t i = 0; i < spec_.tasks(); ++i) {
      roots.insert(SmallFilesRoot(dir.path(), spec_, spec_.first_rank() + i));
    }
    uint32_t removed = 0;
    for (const std::string& r : roots) {
      auto n = dir.RemoveTree(r);
      if (!n.ok()) return n.status();
      if (*n > 0) ++removed;
    }
    return removed;
  }

  bool CreatesFiles() const override { return true; }
  // Every task's files at the mean of their log-uniform sizes (exact when
  // the min and max are one size), saturated: what the agent's byte limit
  // and the free-space check weigh.
  uint64_t AgentWriteBytes() const override {
    const double lo = static_cast<double>(std::max<uint64_t>(spec_.small_file_min_bytes(), 8));
    const double hi = static_cast<double>(std::max<uint64_t>(spec_.small_file_max_bytes(), 8));
    const double mean = hi <= lo ? hi : (hi - lo) / std::log(hi / lo);
    const double files = static_cast<double>(SaturatingMul(spec_.tasks(), spec_.small_files()));
    const double bytes = files * mean;
    return bytes >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(bytes);
  }
  // Per task the largest file's pattern and a scratch buffer for its check:
  // tasks x 2 x max(small_file_max_bytes, 8).
  uint64_t AgentBufferBytes() const override {
    const uint64_t file = std::max<uint64_t>(spec_.small_file_max_bytes(), 8);
    return SaturatingMul(SaturatingMul(spec_.tasks(), 2), file);
  }
  std::string AgentBufferKeys() const override {
    return "tasks_per_agent or small_file_max_size";
  }

 private:
  struct Task {
    AlignedBuffer buf;      // the largest file's pattern, re-stamped per file
    AlignedBuffer scratch;  // for CheckPattern
  };

  // One task's tree: directories, files, read-back.
  class TaskRun {
   public:
    TaskRun(const SmallFilesWorkload& w, Task& t, const TaskContext& ctx)
        : s_(w.spec_),
          dir_(*w.dir_),
          t_(t),
          ctx_(ctx),
          files_(s_.small_files()),
          per_dir_(std::max<uint32_t>(s_.small_files_per_dir(), 1)),
          tag_(PatternTag(s_.pattern_seed(), ctx.rank)),
          root_(SmallFilesRoot(w.dir_->path(), s_, ctx.rank)) {}

    // The open window: the root and its directories. False when one failed.
    bool MakeDirs() {
      v1::TaskResult* r = ctx_.result;
      r->set_open_start_unix_ns(RealtimeNs());
      r->set_first_io_unix_ns(r->open_start_unix_ns());
      // The task's first operation, bracketed for the start gate (workload.h).
      ctx_.FirstOpIssuing();
      bool ok = MakeDir(root_);
      if (ok) ctx_.FirstOpReturned();
      for (uint64_t d = 0; ok && d * per_dir_ < files_; ++d) {
        ok = MakeDir(absl::StrFormat("%s/d%06u", root_, d));
      }
      r->set_open_stop_unix_ns(RealtimeNs());
      return ok;
    }

    // The transfer window: create, write, close every file (while *ok).
    // Returns the files written; *ok turns false on a failure.
    uint64_t WriteFiles(bool* ok) {
      v1::TaskResult* r = ctx_.result;
      r->set_rdwr_start_unix_ns(RealtimeNs());
      uint64_t bytes = 0, ops = 0;
      for (uint64_t i = 0; *ok && i < files_; ++i) {
        if (ctx_.Aborted()) break;
        const std::string path = FilePath(i);
        const uint64_t size = SmallFileSize(s_, ctx_.rank, i);
        StampPattern(t_.buf.get(), size, SmallFileBase(i), tag_);
        const int64_t t0 = MonotonicNs();
        const int err = CreateAndWrite(path, size);
        ctx_.latency->Record(static_cast<uint64_t>(MonotonicNs() - t0));
        if (err != 0) {
          Fail("cannot create and write", path, err, 0, false);
          *ok = false;
          break;
        }
        bytes += size;
        ++ops;
        ctx_.counters->bytes.store(bytes, std::memory_order_relaxed);
        ctx_.counters->ops.store(ops, std::memory_order_relaxed);
      }
      r->set_rdwr_stop_unix_ns(RealtimeNs());
      r->set_close_start_unix_ns(r->rdwr_stop_unix_ns());
      r->set_close_stop_unix_ns(r->rdwr_stop_unix_ns());
      r->set_bytes(bytes);
      r->set_ops(ops);
      return ops;
    }

    // Reads back and checks each of the first `files` files (its own row).
    void ReadBack(bool ok, uint64_t files) {
      v1::TaskResult* r = ctx_.result;
      r->set_readback_start_unix_ns(RealtimeNs());
      uint64_t back = 0;
      for (uint64_t i = 0; ok && i < files; ++i) {
        if (ctx_.Aborted()) break;
        const uint64_t size = SmallFileSize(s_, ctx_.rank, i);
        if (!ReadBackOne(i, size)) break;
        back += size;
      }
      r->set_readback_stop_unix_ns(RealtimeNs());
      r->set_readback_bytes(back);
    }

   private:
    std::string FilePath(uint64_t i) const {
      return absl::StrFormat("%s/d%06u/f%08u", root_, i / per_dir_, i);
    }

    void Fail(const std::string& what, const std::string& path, int err, uint64_t offset,
              bool verify) {
      ctx_.Fail({.what = what, .path = path, .err = err, .offset = offset, .verify = verify});
    }

    bool MakeDir(const std::string& path) {
      if (dir_.Mkdir(path, 0775) == 0) return true;
      Fail("cannot create directory", path, errno, 0, false);
      return false;
    }

    // 0 or the errno of the open, write, fsync or close.
    int CreateAndWrite(const std::string& path, uint64_t size) {
      const int fd = dir_.OpenFile(path, O_CREAT | O_WRONLY | O_TRUNC, 0664);
      if (fd < 0) return errno;
      int err = WriteAll(fd, t_.buf.get(), size);
      if (err == 0 && s_.fsync_per_transfer() && ::fsync(fd) != 0) err = errno;
      if (::close(fd) != 0 && err == 0) err = errno;
      return err;
    }

    // False (and the task failed) when file `i` cannot be read or differs.
    bool ReadBackOne(uint64_t i, uint64_t size) {
      const std::string path = FilePath(i);
      const int fd = dir_.OpenFile(path, O_RDONLY);
      if (fd < 0) {
        Fail("cannot open for read-back", path, errno, 0, false);
        return false;
      }
      size_t got = 0;
      const int err = ReadAll(fd, t_.buf.get(), size, &got);
      ::close(fd);
      if (err != 0) {
        Fail("cannot read back", path, err, got, false);
        return false;
      }
      if (got != size) {
        Fail(absl::StrFormat("short read-back (got %u of %u bytes) of", got, size), path, 0, got,
             true);
        return false;
      }
      auto m = CheckPattern(t_.buf.get(), size, SmallFileBase(i), tag_, t_.scratch.get());
      if (!m) return true;
      PatternMismatch local = *m;
      local.file_offset -= SmallFileBase(i);
      Fail(absl::StrFormat("read-back verification failed (%s) in", local.Describe()), path, 0,
           local.file_offset, true);
      return false;
    }

    const v1::PhaseSpec& s_;
    const BeneathDir& dir_;
    Task& t_;
    const TaskContext& ctx_;
    const uint64_t files_;
    const uint64_t per_dir_;
    const uint64_t tag_;
    const std::string root_;
  };

  const v1::PhaseSpec spec_;
  const BeneathDir* dir_ = nullptr;  // from Prepare
  std::vector<Task> tasks_;
};

}  // namespace

std::string SmallFilesRoot(const std::string& dir, const v1::PhaseSpec& spec, uint32_t rank) {
  return absl::StrFormat("%s/%s.small.%08d", dir, spec.file_name(), rank);
}

uint64_t SmallFileSize(const v1::PhaseSpec& spec, uint32_t rank, uint64_t index) {
  const double lo = static_cast<double>(std::max<uint64_t>(spec.small_file_min_bytes(), 8));
  const double hi = static_cast<double>(std::max<uint64_t>(spec.small_file_max_bytes(), 8));
  const uint64_t r = Mix64(spec.pattern_seed() ^ Mix64((uint64_t{rank} << 40) ^ index));
  const double u = static_cast<double>(r >> 11) / 9007199254740992.0;  // [0, 1)
  double v = hi <= lo ? lo : std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo)));
  uint64_t size = static_cast<uint64_t>(v) / 8 * 8;
  return std::clamp<uint64_t>(size, static_cast<uint64_t>(lo) / 8 * 8,
                              static_cast<uint64_t>(hi) / 8 * 8);
}

std::unique_ptr<Workload> MakeSmallFilesWorkload(const v1::PhaseSpec& spec,
                                                 const WorkloadOptions& /*options*/) {
  return std::make_unique<SmallFilesWorkload>(spec);
}

}  // namespace lockstep
