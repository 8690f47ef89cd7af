#include "agent/workloads/datagen.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/checked_math.h"
#include "common/dataset.h"
#include "agent/workloads/file_io.h"
#include "common/clock.h"
#include "common/limits.h"
#include "common/status_macros.h"
#include "common/pattern.h"

namespace lockstep {
namespace {

class DatagenWorkload : public Workload {
 public:
  explicit DatagenWorkload(const v1::PhaseSpec& spec) : spec_(spec) {}

  absl::Status Validate() const override { return CheckDatasetSpec(spec_); }

  std::string TaskPath(const std::string& dir, uint32_t rank) const override {
    if (rank >= spec_.num_files()) return DatasetTrainDir(dir);
    return DatasetFilePath(dir, spec_, rank);
  }

  // <dir>/train, and one chunk of the pattern per task.
  absl::Status Prepare(const BeneathDir& dir, std::span<v1::TaskResult* const>) override {
    dir_ = &dir;
    // The phase directory too: rank 0's agent made it (CreatesMissingDir),
    // the others may get here first.
    for (const std::string& d : {dir.path(), DatasetTrainDir(dir.path())}) {
      RETURN_IF_ERROR(MakeDirUnlessExists(dir, d, spec_.phase_id()));
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
    bool first = true;
    for (uint64_t i = task.rank; i < spec_.num_files(); i += spec_.total_tasks()) {
      if (task.Aborted()) break;
      if (first) task.FirstOpIssuing();
      const int64_t t0 = MonotonicNs();
      const uint64_t written = WriteFile(task, buffers_[task.index].get(), i);
      if (written == 0) break;  // failed: task.Fail said why
      task.latency->Record(static_cast<uint64_t>(MonotonicNs() - t0));
      if (first) task.FirstOpReturned();
      first = false;
      bytes += written;
      ++files;
      task.counters->bytes.store(bytes, std::memory_order_relaxed);
      task.counters->ops.store(files, std::memory_order_relaxed);
    }
    SetWholeSpanTimers(start, RealtimeNs(), r);
    r->set_bytes(bytes);
    r->set_ops(files);
    r->set_files(files);
  }

  absl::StatusOr<uint32_t> RemoveFiles(const BeneathDir& held) const override {
    const std::string& dir = held.path();
    uint32_t removed = 0;
    for (uint32_t t = 0; t < spec_.tasks(); ++t) {
      for (uint64_t i = spec_.first_rank() + t; i < spec_.num_files(); i += spec_.total_tasks()) {
        const std::string path = DatasetFilePath(dir, spec_, i);
        if (held.Unlink(path) == 0) {
          ++removed;
        } else if (errno != ENOENT) {
          return absl::InternalError(
              absl::StrFormat("cannot remove %s: %s", path, BeneathErrorText(errno)));
        }
      }
    }
    held.Rmdir(DatasetTrainDir(dir));  // the last agent's removal empties it
    return removed;
  }

  bool CreatesFiles() const override { return true; }
  bool CreatesMissingDir() const override { return true; }

  uint64_t AgentWriteBytes() const override {
    uint64_t sum = 0;
    for (uint32_t t = 0; t < spec_.tasks(); ++t) {
      const uint64_t rank = spec_.first_rank() + t;
      if (rank >= spec_.num_files()) continue;
      if (spec_.record_stdev_bytes() == 0) {  // every file alike
        const uint64_t files = (spec_.num_files() - 1 - rank) / spec_.total_tasks() + 1;
        sum = SaturatingAdd(sum, SaturatingMul(files, DatasetFileLayoutOf(spec_, rank).file_bytes));
        continue;
      }
      for (uint64_t i = rank; i < spec_.num_files(); i += spec_.total_tasks()) {
        sum = SaturatingAdd(sum, DatasetFileLayoutOf(spec_, i).file_bytes);
      }
    }
    return sum;
  }
  // Per task one chunk (AiChunkBytes), and for NPZ the tail NpzTail builds
  // whole: y's 8 zero bytes a sample, up to 3 copies of them while its
  // string is assembled: tasks x (chunk + 24 x samples_per_file).
  uint64_t AgentBufferBytes() const override {
    const bool npz = spec_.dataset_format() == v1::DATASET_FORMAT_NPZ;
    const uint64_t tail = npz ? SaturatingMul(24, spec_.samples_per_file()) : 0;
    return SaturatingMul(spec_.tasks(), SaturatingAdd(AiChunkBytes(spec_), tail));
  }
  std::string AgentBufferKeys() const override {
    return "tasks_per_agent, transfer_size or samples_per_file";
  }

 private:
  // Writes dataset file `index`; its size, or 0 after task.Fail.
  uint64_t WriteFile(const TaskContext& task, const char* chunk, uint64_t index) const {
    const std::string path = DatasetFilePath(dir_->path(), spec_, index);
    const DatasetFileLayout l = DatasetFileLayoutOf(spec_, index);
    const bool npz = spec_.dataset_format() == v1::DATASET_FORMAT_NPZ;
    auto fail = [&](const char* what, int err, uint64_t offset) -> uint64_t {
      task.Fail({.what = what, .path = path, .err = err, .offset = offset});
      return 0;
    };
    const int fd = dir_->OpenFile(path, O_CREAT | O_WRONLY | O_TRUNC, 0664);
    if (fd < 0) return fail("cannot create", errno, 0);
    uint64_t offset = 0;
    int err = 0;
    uLong crc = npz ? NpzDataCrcSeed(l) : 0;
    if (npz) {
      const std::string head = NpzHead(l, 0);
      err = WriteAll(fd, head.data(), head.size());
      offset = head.size();
    }
    for (uint64_t left = l.data_bytes; err == 0 && left > 0;) {
      const uint64_t n = std::min<uint64_t>(left, chunk_bytes_);
      err = WriteAll(fd, chunk, n);
      if (npz) crc = crc32(crc, reinterpret_cast<const Bytef*>(chunk), static_cast<uInt>(n));
      offset += err == 0 ? n : 0;
      left -= n;
      task.counters->op_offset.store(offset, std::memory_order_relaxed);
    }
    if (err == 0 && npz) {
      const std::string tail = NpzTail(l, static_cast<uint32_t>(crc));
      err = WriteAll(fd, tail.data(), tail.size());
      // The head again, with x's CRC, as zipfile rewrites it on close.
      const std::string head = NpzHead(l, static_cast<uint32_t>(crc));
      size_t done = 0;
      if (err == 0) err = PwriteFull(fd, head.data(), head.size(), 0, &done);
    }
    if (err == 0 && spec_.fsync_at_end() && ::fsync(fd) != 0) err = errno;
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) return fail("cannot write", err, offset);
    return l.file_bytes;
  }

  const v1::PhaseSpec spec_;
  const BeneathDir* dir_ = nullptr;  // from Prepare
  uint64_t chunk_bytes_ = kDefaultAiChunkBytes;
  std::vector<AlignedBuffer> buffers_;  // one chunk per task
};

}  // namespace

std::unique_ptr<Workload> MakeDatagenWorkload(const v1::PhaseSpec& spec,
                                              const WorkloadOptions& /*options*/) {
  return std::make_unique<DatagenWorkload>(spec);
}

}  // namespace lockstep
