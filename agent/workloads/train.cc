#include "agent/workloads/train.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "common/dataset.h"
#include "agent/workloads/file_io.h"
#include "common/checked_math.h"
#include "common/clock.h"
#include "common/histogram.h"
#include "common/limits.h"
#include "common/mix.h"

namespace lockstep {
namespace {

// How often a waiting accelerator or reader looks at the phase's abort flag.
constexpr absl::Duration kAbortPoll = absl::Milliseconds(20);

// Sleeps or spins until the monotonic instant `until_ns`.
void ComputeUntil(int64_t until_ns, bool spin) {
  if (spin) {
    while (MonotonicNs() < until_ns) {
    }
    return;
  }
  const timespec ts{.tv_sec = until_ns / 1'000'000'000, .tv_nsec = until_ns % 1'000'000'000};
  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

// One reader thread's state: its chunk buffer, the file it read last (NPZ)
// or holds open (RECORDS), its latency samples.
struct ReaderState {
  AlignedBuffer chunk;
  uint64_t file = UINT64_MAX;
  int fd = -1;
  LatencyHistogram latency;
  ~ReaderState() {
    if (fd >= 0) ::close(fd);
  }
};

// What the accelerator and its readers share over one epoch.
struct EpochQueue {
  absl::Mutex mu;
  uint64_t next_claim ABSL_GUARDED_BY(mu) = 0;  // the next batch a reader takes
  uint64_t consumed ABSL_GUARDED_BY(mu) = 0;    // batches the accelerator took
  std::vector<char> ready ABSL_GUARDED_BY(mu);  // per batch
  bool failed ABSL_GUARDED_BY(mu) = false;      // a reader failed: stop
  uint64_t batches = 0;                          // of the epoch; set before the readers start
  uint32_t window = 1;                           // prefetch_batches
  uint64_t awaited ABSL_GUARDED_BY(mu) = 0;     // the batch the accelerator waits for

  bool AwaitedReady() const ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return failed || ready[awaited] != 0;
  }
  bool CanClaim() const ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return failed || next_claim >= batches || next_claim < consumed + window;
  }
};

class TrainWorkload : public Workload {
 public:
  explicit TrainWorkload(const v1::PhaseSpec& spec) : spec_(spec) {}

  absl::Status Validate() const override {
    const v1::PhaseSpec& s = spec_;
    if (absl::Status st = CheckDatasetSpec(s); !st.ok()) return st;
    if (s.batch_size() == 0) return SpecError(s, "batch_size is 0");
    if (s.epochs() == 0) return SpecError(s, "epochs is 0");
    if (s.read_threads() == 0 || s.read_threads() > kMaxReadThreads) {
      return SpecError(s, absl::StrFormat("read_threads %u is not in 1..%u", s.read_threads(),
                                          kMaxReadThreads));
    }
    if (s.prefetch_batches() == 0 || s.prefetch_batches() > kMaxPrefetchBatches) {
      return SpecError(s, absl::StrFormat("prefetch_batches %u is not in 1..%u",
                                          s.prefetch_batches(), kMaxPrefetchBatches));
    }
    if (s.computation_time_ns() < 0 || s.computation_time_ns() > kMaxComputationTimeNs ||
        s.computation_stdev_ns() < 0) {
      return SpecError(s, absl::StrFormat("computation time %d ns (stdev %d) is not in 0..%d",
                                          s.computation_time_ns(), s.computation_stdev_ns(),
                                          kMaxComputationTimeNs));
    }
    if (StepsPerEpoch(s) == 0) {
      return SpecError(s, absl::StrFormat(
                              "%u files of %u samples make no batch of %u for each of %u "
                              "accelerators; give more files or a smaller batch_size",
                              s.num_files(), s.samples_per_file(), s.batch_size(),
                              s.total_tasks()));
    }
    return absl::OkStatus();
  }

  std::string TaskPath(const std::string& dir, uint32_t) const override {
    return DatasetTrainDir(dir);
  }

  // Every file of the dataset exists and is as long as its layout says
  // (any rank may read any file once the files are shuffled); one chunk per
  // reader.
  absl::Status Prepare(const BeneathDir& held, std::span<v1::TaskResult* const>) override {
    held_ = &held;
    const std::string& dir = held.path();
    dir_ = dir;
    for (uint64_t i = 0; i < spec_.num_files(); ++i) {
      const std::string path = DatasetFilePath(dir, spec_, i);
      struct stat st;
      if (held.Stat(path, &st) != 0) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "phase %s: dataset file %s: %s; write the dataset first (a datagen phase with the "
            "same dir, format, num_files, samples_per_file and record_size)",
            spec_.phase_id(), path, BeneathErrorText(errno)));
      }
      const uint64_t want = DatasetFileLayoutOf(spec_, i).file_bytes;
      if (static_cast<uint64_t>(st.st_size) < want) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "phase %s: dataset file %s has %d bytes, the dataset's layout needs %u; was it "
            "written with other record_size or samples_per_file? run the datagen phase again",
            spec_.phase_id(), path, st.st_size, want));
      }
    }
    chunk_bytes_ = AiChunkBytes(spec_);
    readers_.clear();
    for (size_t k = 0; k < size_t{spec_.tasks()} * spec_.read_threads(); ++k) {
      auto buf = AllocateAligned(chunk_bytes_);
      if (!buf.ok()) return buf.status();
      readers_.push_back(std::make_unique<ReaderState>());
      readers_.back()->chunk = std::move(*buf);
    }
    return absl::OkStatus();
  }

  void RunTask(const TaskContext& task) override;

  absl::StatusOr<uint32_t> RemoveFiles(const BeneathDir&) const override { return 0u; }
  bool CreatesFiles() const override { return false; }
  // Per task a chunk per reader thread, and its epoch's file order and
  // sample list (8 bytes each): tasks x (read_threads x chunk + 8 x
  // (num_files + ceil(num_files x samples_per_file / total_tasks))).
  uint64_t AgentBufferBytes() const override;
  std::string AgentBufferKeys() const override {
    return "tasks_per_agent, read_threads, transfer_size, num_files or samples_per_file";
  }

 private:
  class Accelerator;

  const v1::PhaseSpec spec_;
  const BeneathDir* held_ = nullptr;  // from Prepare
  std::string dir_;                  // its path
  uint64_t chunk_bytes_ = kDefaultAiChunkBytes;
  std::vector<std::unique_ptr<ReaderState>> readers_;  // read_threads per task, task-major
};

// One task's epochs: the accelerator loop on the task's thread, readers on
// threads of their own.
class TrainWorkload::Accelerator {
 public:
  Accelerator(TrainWorkload& w, const TaskContext& task)
      : w_(w), s_(w.spec_), task_(task), steps_(StepsPerEpoch(w.spec_)) {}

  void Run() {
    v1::TaskResult* r = task_.result;
    v1::TrainResult* train = r->mutable_train();
    const int64_t start = RealtimeNs();
    r->set_first_io_unix_ns(start);
    task_.FirstOpIssuing();
    task_.FirstOpReturned();
    for (uint32_t e = 1; e <= s_.epochs() && !Stopped(); ++e) RunEpoch(e, train->add_epochs());
    int64_t compute = 0, wall = 0;
    uint64_t samples = 0, batches = 0, bytes = 0;
    for (const v1::TrainEpoch& ep : train->epochs()) {
      compute += ep.compute_ns();
      wall += ep.wall_ns();
      samples += ep.samples();
      batches += ep.batches();
      bytes += ep.bytes();
    }
    train->set_compute_ns(compute);
    train->set_wall_ns(wall);
    train->set_au(AcceleratorUtilization(compute, wall));
    train->set_samples(samples);
    train->set_batches(batches);
    train->set_bytes(bytes);
    batch_wait_.ToProto(train->mutable_batch_wait());
    SetWholeSpanTimers(start, RealtimeNs(), r);
    r->set_bytes(bytes);
    r->set_ops(samples);
  }

 private:
  bool Stopped() const {
    if (task_.Aborted()) return true;
    absl::MutexLock lock(&q_.mu);
    return q_.failed;
  }

  void RunEpoch(uint32_t epoch, v1::TrainEpoch* out) {
    samples_ = EpochRankSamples(s_, task_.rank, epoch);
    order_ = EpochFileOrder(s_, epoch);
    batches_ = std::min<uint64_t>(steps_, samples_.size() / s_.batch_size());
    {
      absl::MutexLock lock(&q_.mu);
      q_.next_claim = 0;
      q_.consumed = 0;
      q_.awaited = 0;
      q_.ready.assign(batches_, 0);
      q_.batches = batches_;
      q_.window = s_.prefetch_batches();
    }
    epoch_bytes_.store(0, std::memory_order_relaxed);
    for (uint32_t k = 0; k < s_.read_threads(); ++k) {  // each epoch's loader starts afresh
      ReaderState& reader = ReaderOf(k);
      if (reader.fd >= 0) ::close(reader.fd);
      reader.fd = -1;
      reader.file = UINT64_MAX;
    }
    out->set_epoch(epoch);
    out->set_start_unix_ns(RealtimeNs());
    const int64_t t0 = MonotonicNs();
    std::vector<std::thread> threads;
    for (uint32_t k = 0; k < s_.read_threads(); ++k) {
      threads.emplace_back([this, k] { ReadLoop(k); });
    }
    int64_t compute = 0;
    uint64_t done = 0;
    for (uint64_t b = 0; b < batches_; ++b) {
      const int64_t asked = MonotonicNs();
      if (!AwaitBatch(b)) break;
      const int64_t got = MonotonicNs();
      batch_wait_.Record(static_cast<uint64_t>(got - asked));
      ComputeUntil(got + BatchComputeNs(s_, task_.rank, epoch, b), s_.compute_spin());
      compute += MonotonicNs() - got;
      ++done;
    }
    const int64_t wall = MonotonicNs() - t0;
    {
      absl::MutexLock lock(&q_.mu);
      q_.consumed = batches_;  // lets every reader see there is nothing left
      q_.next_claim = batches_;
    }
    for (std::thread& t : threads) t.join();
    for (uint32_t k = 0; k < s_.read_threads(); ++k) {
      task_.latency->Merge(ReaderOf(k).latency);
      ReaderOf(k).latency.Clear();
    }
    out->set_stop_unix_ns(RealtimeNs());
    out->set_batches(done);
    out->set_samples(done * s_.batch_size());
    out->set_bytes(epoch_bytes_.load(std::memory_order_relaxed));
    out->set_compute_ns(compute);
    out->set_wall_ns(wall);
    out->set_au(AcceleratorUtilization(compute, wall));
  }

  // Waits for batch b; takes it (frees its prefetch slot). False when the
  // phase stopped.
  bool AwaitBatch(uint64_t b) {
    absl::MutexLock lock(&q_.mu);
    q_.awaited = b;
    while (!q_.mu.AwaitWithTimeout(absl::Condition(&q_, &EpochQueue::AwaitedReady), kAbortPoll)) {
      if (task_.Aborted()) return false;
    }
    if (q_.failed || task_.Aborted()) return false;
    q_.consumed = b + 1;
    return true;
  }

  ReaderState& ReaderOf(uint32_t k) const {
    return *w_.readers_[size_t{task_.index} * s_.read_threads() + k];
  }

  // Claims the next batch within the prefetch window; false when none is
  // left or the phase stopped.
  bool Claim(uint64_t* b) {
    absl::MutexLock lock(&q_.mu);
    while (!q_.mu.AwaitWithTimeout(absl::Condition(&q_, &EpochQueue::CanClaim), kAbortPoll)) {
      if (task_.Aborted()) return false;
    }
    if (q_.failed || q_.next_claim >= batches_ || task_.Aborted()) return false;
    *b = q_.next_claim++;
    return true;
  }

  void ReadLoop(uint32_t k) {
    ReaderState& reader = ReaderOf(k);
    uint64_t b = 0;
    while (Claim(&b)) {
      for (uint64_t i = b * s_.batch_size(); i < (b + 1) * s_.batch_size(); ++i) {
        if (!ReadSample(reader, samples_[i])) {
          absl::MutexLock lock(&q_.mu);
          q_.failed = true;
          return;
        }
      }
      absl::MutexLock lock(&q_.mu);
      q_.ready[b] = 1;
    }
  }

  // Reads global sample g (dataset.h's order); false after task_.Fail.
  bool ReadSample(ReaderState& reader, uint64_t g) {
    const uint64_t file = order_[g / s_.samples_per_file()];
    const uint64_t sample = g % s_.samples_per_file();
    const bool npz = s_.dataset_format() == v1::DATASET_FORMAT_NPZ;
    if (npz && file == reader.file) return true;  // x is in memory already
    const int64_t t0 = MonotonicNs();
    if (file != reader.file) {
      if (reader.fd >= 0) ::close(reader.fd);
      reader.file = file;
      reader.fd = w_.held_->OpenFile(DatasetFilePath(w_.dir_, s_, file), O_RDONLY);
      if (reader.fd < 0) return Fail(reader, "cannot open", errno, 0);
    }
    const DatasetFileLayout l = DatasetFileLayoutOf(s_, file);
    const uint64_t begin = npz ? 0 : sample * l.sample_bytes;
    const uint64_t len = npz ? l.file_bytes : l.sample_bytes;
    for (uint64_t off = begin; off < begin + len;) {
      const size_t n = std::min<uint64_t>(begin + len - off, w_.chunk_bytes_);
      size_t got = 0;
      const int err = PreadFull(reader.fd, reader.chunk.get(), n, off, &got);
      if (err != 0) return Fail(reader, "read from", err, off + got);
      if (got != n) return Fail(reader, "short read (end of file) from", 0, off + got);
      off += n;
      task_.counters->bytes.fetch_add(n, std::memory_order_relaxed);
      epoch_bytes_.fetch_add(n, std::memory_order_relaxed);
    }
    if (npz) {  // np.load reads the whole file, then closes it
      ::close(reader.fd);
      reader.fd = -1;
    }
    reader.latency.Record(static_cast<uint64_t>(MonotonicNs() - t0));
    task_.counters->ops.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  bool Fail(ReaderState& reader, const char* what, int err, uint64_t offset) {
    task_.Fail({.what = what, .path = DatasetFilePath(w_.dir_, s_, reader.file), .err = err,
                .offset = offset});
    return false;
  }

  TrainWorkload& w_;
  const v1::PhaseSpec& s_;
  const TaskContext& task_;
  const uint64_t steps_;
  // The epoch's order, set before its readers start and read-only while they run.
  std::vector<uint64_t> samples_;
  std::vector<uint64_t> order_;
  uint64_t batches_ = 0;
  std::atomic<uint64_t> epoch_bytes_{0};
  mutable EpochQueue q_;
  LatencyHistogram batch_wait_;
};

uint64_t TrainWorkload::AgentBufferBytes() const {
  const uint64_t samples = SaturatingMul(spec_.num_files(), spec_.samples_per_file());
  const uint64_t ranks = std::max<uint32_t>(spec_.total_tasks(), 1);
  const uint64_t rank_samples = samples / ranks + (samples % ranks != 0 ? 1 : 0);
  const uint64_t indexes = SaturatingMul(8, SaturatingAdd(spec_.num_files(), rank_samples));
  const uint64_t chunks = SaturatingMul(spec_.read_threads(), AiChunkBytes(spec_));
  return SaturatingMul(spec_.tasks(), SaturatingAdd(chunks, indexes));
}

void TrainWorkload::RunTask(const TaskContext& task) {
  auto accelerator = std::make_unique<Accelerator>(*this, task);  // its histogram is large
  accelerator->Run();
}

}  // namespace

int64_t BatchComputeNs(const v1::PhaseSpec& spec, uint32_t rank, uint32_t epoch, uint64_t batch) {
  const int64_t mean = spec.computation_time_ns();
  if (spec.computation_stdev_ns() <= 0) return mean;
  const uint64_t key = Mix64(spec.shuffle_seed() ^ Mix64((uint64_t{rank} << 40) ^
                                                         (uint64_t{epoch} << 32) ^ batch));
  const double u1 = (static_cast<double>(key >> 11) + 1.0) / 9007199254740993.0;
  const double u2 = static_cast<double>(Mix64(key) >> 11) / 9007199254740992.0;
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  const double v = static_cast<double>(mean) + z * static_cast<double>(spec.computation_stdev_ns());
  return v <= 0 ? 0 : static_cast<int64_t>(v);
}

double AcceleratorUtilization(int64_t compute_ns, int64_t wall_ns) {
  if (wall_ns <= 0) return 0.0;
  return std::min(1.0, static_cast<double>(compute_ns) / static_cast<double>(wall_ns));
}

std::unique_ptr<Workload> MakeTrainWorkload(const v1::PhaseSpec& spec,
                                            const WorkloadOptions& /*options*/) {
  return std::make_unique<TrainWorkload>(spec);
}

}  // namespace lockstep
