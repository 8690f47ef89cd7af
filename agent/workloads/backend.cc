#include "agent/workloads/backend.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/fs/ceph_daemons.h"
#include "agent/fs/obdfilter.h"
#include "agent/workloads/file_io.h"
#include "common/checked_math.h"
#include "common/clock.h"
#include "common/net.h"
#include "common/limits.h"
#include "common/sizes.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {



class BackendWorkload : public Workload {
 public:
  BackendWorkload(const v1::PhaseSpec& spec, const WorkloadOptions& options)
      : spec_(spec),
        backend_(spec.backend()),
        options_(options),
        osd_bench_(backend_.method() == "osd_bench"),
        obdfilter_(backend_.method() == "obdfilter"),
        per_target_(osd_bench_ || obdfilter_) {}

  absl::Status Validate() const override {
    if (backend_.method() != "file" && !per_target_) {
      return SpecError(spec_, absl::StrFormat(
                                  "backend method \"%s\" is not \"file\", \"osd_bench\" or "
                                  "\"obdfilter\"",
                                  backend_.method()));
    }
    const uint64_t block = backend_.block_bytes();
    if (block == 0 || block > kMaxBackendBlockBytes || block % kDirectIoAlignBytes != 0) {
      return SpecError(spec_, absl::StrFormat("block_bytes %u must be a multiple of %u up to %s",
                                              block, kDirectIoAlignBytes,
                                              HumanBytes(kMaxBackendBlockBytes)));
    }
    if (backend_.bytes() == 0 || backend_.bytes() % block != 0) {
      return SpecError(spec_, absl::StrFormat("bytes %u must be a non-zero multiple of block_bytes %u",
                                              backend_.bytes(), block));
    }
    return absl::OkStatus();
  }

  std::string TaskPath(const std::string& dir, uint32_t rank) const override {
    if (per_target_) return "";
    return absl::StrFormat("%s/%s.%08u", dir, spec_.file_name(), rank);
  }

  absl::Status Prepare(const BeneathDir& dir, std::span<v1::TaskResult* const> results) override;
  void DescribePrepared(v1::PrepareReply* reply) const override {
    for (const std::string& target : targets_) reply->add_backend_targets(target);
  }
  void RunTask(const TaskContext& task) override {
    task.result->mutable_backend()->set_method(backend_.method());
    task.result->mutable_backend()->set_block_bytes(backend_.block_bytes());
    if (osd_bench_) {
      BenchOsd(task);
      return;
    }
    if (obdfilter_) {
      SurveyOst(task);
      return;
    }
    const std::string path = TaskPath(dir_->path(), task.rank);
    WriteThenRead(task, path);
    dir_->Unlink(path);  // on every path: the scratch file never outlives its task
  }
  void Finish() override {
    if (!per_target_) RemoveFiles(*dir_).IgnoreError();
  }
  absl::StatusOr<uint32_t> RemoveFiles(const BeneathDir& dir) const override {
    if (per_target_) return 0u;
    uint32_t removed = 0;
    for (uint32_t i = 0; i < spec_.tasks(); ++i) {
      if (dir.Unlink(TaskPath(dir.path(), spec_.first_rank() + i)) == 0) ++removed;
    }
    return removed;
  }
  bool CreatesFiles() const override { return !per_target_; }
  bool UsesDir() const override { return !per_target_; }
  uint64_t AgentWriteBytes() const override {
    // Saturated: a product that wrapped would pass the byte limit as 0.
    return per_target_ ? 0 : SaturatingMul(backend_.bytes(), spec_.tasks());
  }
  // file: one block buffer per task, tasks x block_bytes; osd_bench and
  // obdfilter: none here (the OSD, lctl's echo client hold theirs).
  uint64_t AgentBufferBytes() const override {
    return per_target_ ? 0 : SaturatingMul(spec_.tasks(), backend_.block_bytes());
  }
  std::string AgentBufferKeys() const override { return "tasks_per_agent or transfer_size"; }

 private:
  void WriteThenRead(const TaskContext& task, const std::string& path);
  void BenchOsd(const TaskContext& task);
  void SurveyOst(const TaskContext& task);
  absl::Status PrepareTargets(std::vector<std::string> targets, const char* what,
                              const char* fix);

  const v1::PhaseSpec spec_;
  const v1::BackendSpec backend_;
  const WorkloadOptions options_;
  const bool osd_bench_;
  const bool obdfilter_;
  const bool per_target_;  // osd_bench or obdfilter: one task per OSD or OST, no file
  const BeneathDir* dir_ = nullptr;
  std::vector<AlignedBuffer> buffers_;  // file: one per task
  std::vector<std::string> targets_;    // task i benches targets_[i]: "osd.3", "fs-OST0002"
};

absl::Status BackendWorkload::Prepare(const BeneathDir& dir,
                                      std::span<v1::TaskResult* const> /*results*/) {
  dir_ = &dir;
  if (osd_bench_) {
    CephDaemons* ceph = options_.ceph_daemons;
    RETURN_IF_ERROR(PrepareTargets(ceph != nullptr ? ceph->Osds() : std::vector<std::string>{},
                                   "OSD (its agent config's [ceph] daemons lists none)",
                                   "list them there"));
    for (const std::string& osd : targets_) {
      if (absl::Status s = ceph->Answers(osd); !s.ok()) {
        return absl::FailedPreconditionError(
            absl::StrFormat("phase %s on host %s: %s", spec_.phase_id(), LocalHostName(), s.message()));
      }
    }
    return absl::OkStatus();
  }
  if (obdfilter_) {
    if (options_.lustre == nullptr) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "phase %s: the agent on host %s may not use Lustre's tools; start it with "
          "--allow_lustre (or lustre = true under [permissions] in its config) to survey its OSTs",
          spec_.phase_id(), LocalHostName()));
    }
    ASSIGN_OR_RETURN(std::vector<std::string> osts, LocalOsts(*options_.lustre));
    return PrepareTargets(std::move(osts), "OST (`lctl dl` lists no obdfilter device UP)",
                          "run the phase on the OSS agents only");
  }
  RemoveFiles(dir).IgnoreError();  // stale files of an earlier attempt
  buffers_.clear();
  for (uint32_t i = 0; i < spec_.tasks(); ++i) {
    auto buffer = AllocateAligned(backend_.block_bytes());
    if (!buffer.ok()) return buffer.status();
    // Not zeros: a device or file system that compresses or dedups zeros
    // would flatter itself.
    char* p = buffer->get();
    uint64_t x = 0x9e3779b97f4a7c15ull * (spec_.first_rank() + i + 1);
    for (uint64_t b = 0; b < backend_.block_bytes(); b += 8) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      std::memcpy(p + b, &x, 8);
    }
    buffers_.push_back(std::move(*buffer));
  }
  return absl::OkStatus();
}

void BackendWorkload::WriteThenRead(const TaskContext& task, const std::string& path) {
  v1::TaskResult* r = task.result;
  v1::BackendResult* b = r->mutable_backend();
  b->set_target(path);
  char* buffer = buffers_[task.index].get();
  const uint64_t block = backend_.block_bytes();
  auto fail = [&](const char* what, int err, uint64_t offset) {
    if (err == EINVAL) {
      task.Fail({.message = absl::StrFormat(
                     "%s %s: the file system of %s does not take O_DIRECT (errno EINVAL); measure "
                     "a directory on the server's device",
                     what, path, dir_->path())});
      return;
    }
    task.Fail({.what = what, .path = path, .err = err, .offset = offset});
  };
  r->set_open_start_unix_ns(RealtimeNs());
  int fd = dir_->OpenFile(path, O_CREAT | O_WRONLY | O_TRUNC | O_DIRECT | O_CLOEXEC, 0600);
  if (fd < 0) return fail("cannot create", errno, 0);
  r->set_open_stop_unix_ns(RealtimeNs());
  const int64_t write_start = MonotonicNs();
  r->set_rdwr_start_unix_ns(RealtimeNs());
  r->set_first_io_unix_ns(r->rdwr_start_unix_ns());
  uint64_t offset = 0;
  for (; offset < backend_.bytes() && !task.Aborted(); offset += block) {
    size_t done = 0;
    if (offset == 0) task.FirstOpIssuing();
    const int64_t op = BeginTransferOp(task.counters, options_, offset);
    if (int err = PwriteFull(fd, buffer, block, offset, &done); err != 0) {
      ::close(fd);
      return fail("write to", err, offset + done);
    }
    EndTransferOp(task.counters, op, task.latency);
    if (offset == 0) task.FirstOpReturned();
    task.counters->bytes.fetch_add(block, std::memory_order_relaxed);
    task.counters->ops.fetch_add(1, std::memory_order_relaxed);
  }
  if (::fdatasync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    return fail("fdatasync of", err, offset);
  }
  r->set_rdwr_stop_unix_ns(RealtimeNs());
  b->set_write_ns(MonotonicNs() - write_start);
  b->set_write_bytes(offset);
  r->set_bytes(offset);
  r->set_ops(offset / block);
  if (b->write_ns() > 0) b->set_write_iops(static_cast<double>(offset / block) * 1e9 / b->write_ns());
  r->set_close_start_unix_ns(RealtimeNs());
  ::close(fd);
  r->set_close_stop_unix_ns(RealtimeNs());
  if (task.Aborted()) return;
  // The read, from the device: O_DIRECT passes by the page cache.
  fd = dir_->OpenFile(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) return fail("cannot open", errno, 0);
  const int64_t read_start = MonotonicNs();
  r->set_readback_start_unix_ns(RealtimeNs());
  uint64_t read = 0;
  for (; read < offset && !task.Aborted(); read += block) {
    size_t got = 0;
    if (int err = PreadFull(fd, buffer, block, read, &got); err != 0 || got != block) {
      ::close(fd);
      return fail("read from", err, read + got);
    }
    task.counters->bytes.fetch_add(block, std::memory_order_relaxed);
  }
  r->set_readback_stop_unix_ns(RealtimeNs());
  b->set_read_ns(MonotonicNs() - read_start);
  b->set_read_bytes(read);
  r->set_readback_bytes(read);
  ::close(fd);
}

absl::Status BackendWorkload::PrepareTargets(std::vector<std::string> targets, const char* what,
                                             const char* fix) {
  targets_ = std::move(targets);
  if (targets_.empty()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "phase %s: host %s serves no %s; %s, or measure this server with method = \"file\"",
        spec_.phase_id(), LocalHostName(), what, fix));
  }
  if (targets_.size() != spec_.tasks()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "phase %s: %u tasks for the %u targets of host %s (%s); the controller sets one per "
        "target",
        spec_.phase_id(), spec_.tasks(), targets_.size(), LocalHostName(),
        absl::StrJoin(targets_, ", ")));
  }
  return absl::OkStatus();
}

void BackendWorkload::SurveyOst(const TaskContext& task) {
  v1::TaskResult* r = task.result;
  const std::string& ost = targets_.at(task.index);
  v1::BackendResult* b = r->mutable_backend();
  b->set_target(ost);
  r->set_rdwr_start_unix_ns(RealtimeNs());
  r->set_first_io_unix_ns(r->rdwr_start_unix_ns());
  auto survey = BenchOst(*options_.lustre, ost, backend_.bytes(), backend_.block_bytes());
  if (!survey.ok()) {
    r->set_rdwr_stop_unix_ns(RealtimeNs());
    task.Fail({.message = std::string(survey.status().message())});
    return;
  }
  // The write's span, then the read's, as lctl's runs took them.
  r->set_rdwr_stop_unix_ns(r->rdwr_start_unix_ns() + survey->write_ns);
  r->set_readback_start_unix_ns(r->rdwr_stop_unix_ns());
  r->set_readback_stop_unix_ns(r->readback_start_unix_ns() + survey->read_ns);
  b->set_write_bytes(survey->bytes);
  b->set_write_ns(survey->write_ns);
  b->set_read_bytes(survey->bytes);
  b->set_read_ns(survey->read_ns);
  const double blocks = static_cast<double>(survey->bytes / survey->block_bytes);
  if (survey->write_ns > 0) b->set_write_iops(blocks * 1e9 / survey->write_ns);
  r->set_bytes(survey->bytes);
  r->set_readback_bytes(survey->bytes);
  r->set_ops(survey->bytes / survey->block_bytes);
  task.counters->bytes.store(2 * survey->bytes, std::memory_order_relaxed);
}

void BackendWorkload::BenchOsd(const TaskContext& task) {
  v1::TaskResult* r = task.result;
  const std::string& osd = targets_.at(task.index);
  v1::BackendResult* b = r->mutable_backend();
  b->set_target(osd);
  // The OSD caps its bench at osd_bench_duration (30 s by default); a slow
  // one is given ten times that at 1 MB/s before it counts as hung.
  const absl::Duration timeout =
      absl::Seconds(std::max<uint64_t>(300, backend_.bytes() / 1'000'000));
  r->set_rdwr_start_unix_ns(RealtimeNs());
  r->set_first_io_unix_ns(r->rdwr_start_unix_ns());
  auto bench = options_.ceph_daemons->BenchOsd(osd, backend_.bytes(), backend_.block_bytes(), timeout);
  r->set_rdwr_stop_unix_ns(RealtimeNs());
  if (!bench.ok()) {
    task.Fail({.message = std::string(bench.status().message())});
    return;
  }
  b->set_block_bytes(bench->block_bytes);
  b->set_write_bytes(bench->bytes);
  b->set_write_ns(static_cast<int64_t>(bench->seconds * 1e9));
  b->set_write_iops(bench->iops);
  r->set_bytes(bench->bytes);
  r->set_ops(bench->block_bytes > 0 ? bench->bytes / bench->block_bytes : 0);
  task.counters->bytes.store(bench->bytes, std::memory_order_relaxed);
}

}  // namespace

std::unique_ptr<Workload> MakeBackendWorkload(const v1::PhaseSpec& spec,
                                              const WorkloadOptions& options) {
  return std::make_unique<BackendWorkload>(spec, options);
}

}  // namespace lockstep
