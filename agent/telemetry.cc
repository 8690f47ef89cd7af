// The telemetry sampler (agent/telemetry.h): its background loop, its open
// windows and the order of their samples. A sample is read by
// agent/telemetry_sources.h and accumulated into each window, and
// summarised, by agent/telemetry_window.h.
#include "agent/telemetry.h"

#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/procfs.h"
#include "agent/telemetry_sources.h"
#include "agent/telemetry_window.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/log.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

std::string DeviceName(const std::string& name) {
  return std::string(absl::StripPrefix(name, "/dev/"));
}

}  // namespace

class TelemetrySampler::Impl {
 public:
  explicit Impl(TelemetryOptions options) : options_(std::move(options)), reader_(&options_) {
    for (std::string& d : options_.devices) d = DeviceName(d);
  }

  ~Impl() { Stop(); }

  absl::Status Start() {
    absl::MutexLock run(&run_mu_);
    if (thread_.joinable()) {
      return absl::FailedPreconditionError("telemetry sampler: Start() while already running");
    }
    {
      absl::MutexLock l(&mu_);
      stop_ = false;
    }
    thread_ = std::thread([this] { Loop(); });
    return absl::OkStatus();
  }

  void Stop() {
    absl::MutexLock run(&run_mu_);
    if (!thread_.joinable()) return;
    {
      absl::MutexLock l(&mu_);
      stop_ = true;
      wake_.SignalAll();
    }
    thread_.join();
  }

  absl::Status Sample() {
    absl::MutexLock order(&sample_mu_);
    return SampleLocked();
  }

  void Prime() {
    absl::MutexLock order(&sample_mu_);
    absl::StatusOr<HostSample> s = reader_.Read();
    absl::MutexLock l(&mu_);
    primed_.reset();
    if (s.ok()) primed_ = std::move(*s);  // a failed one: the next window samples itself
  }

  uint64_t BeginWindow(absl::Duration primed_max_age) {
    absl::MutexLock order(&sample_mu_);
    if (primed_max_age > absl::ZeroDuration()) {
      absl::MutexLock l(&mu_);
      if (primed_ && MonotonicNs() - primed_->mono_ns <= absl::ToInt64Nanoseconds(primed_max_age)) {
        // Only this window starts at the primed sample: the open ones have
        // newer samples already.
        uint64_t id = next_id_++;
        FeedTelemetryWindow(*primed_, &windows_[id]);
        primed_.reset();  // one window's
        wake_.SignalAll();
        return id;
      }
    }
    uint64_t id = 0;
    absl::Status s = SampleLocked(&id);
    if (!s.ok()) {
      // No baseline: the window's first good sample becomes it.
      absl::MutexLock l(&mu_);
      windows_[id].Warn(std::string(s.message()));
    }
    return id;
  }

  absl::StatusOr<v1::TelemetrySummary> EndWindow(uint64_t id) {
    absl::MutexLock order(&sample_mu_);
    {
      absl::MutexLock l(&mu_);
      if (!windows_.contains(id)) {
        return absl::NotFoundError(absl::StrFormat(
            "telemetry window %d is not open (never begun, or already ended)", id));
      }
    }
    absl::Status s = SampleLocked();
    TelemetryWindow w;
    {
      absl::MutexLock l(&mu_);
      auto node = windows_.extract(id);
      w = std::move(node.mapped());
    }
    if (!s.ok()) w.Warn(std::string(s.message()));
    return SummarizeTelemetryWindow(w, options_.interval_ms);
  }

  uint64_t SampleCount() const {
    absl::MutexLock l(&mu_);
    return sample_count_;
  }

  bool AwaitSampleCount(uint64_t count, int64_t timeout_ms) const {
    auto reached = [this, count]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return sample_count_ >= count;
    };
    absl::MutexLock l(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Milliseconds(timeout_ms));
  }

  const TelemetryOptions& options() const { return options_; }

 private:
  // Collects one sample and feeds every open window. Serialised by
  // sample_mu_, so windows see samples in time order.
  // With `open_window`, also opens a window (even when the sample fails) and
  // makes this sample its first.
  absl::Status SampleLocked(uint64_t* open_window = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(sample_mu_) {
    absl::StatusOr<HostSample> s = reader_.Read();
    absl::MutexLock l(&mu_);
    if (open_window != nullptr) {
      *open_window = next_id_++;
      windows_[*open_window];
      wake_.SignalAll();  // the background loop waits while no window is open
    }
    if (!s.ok()) return s.status();
    for (auto& [id, w] : windows_) FeedTelemetryWindow(*s, &w);
    ++sample_count_;
    return absl::OkStatus();
  }

  void Loop() {
    const int64_t interval_ns = static_cast<int64_t>(options_.interval_ms) * 1000000;
    int64_t next_ns = MonotonicNs() + interval_ns;
    std::string last_error;
    for (;;) {
      {
        absl::MutexLock l(&mu_);
        for (;;) {
          if (stop_) return;
          if (windows_.empty()) {
            // Nothing to feed: an idle agent reads nothing (a host of many
            // agents, each scanning every process every second, would spend
            // its cores on /proc). The next window's own first sample is
            // its baseline; the period restarts from there.
            wake_.Wait(&mu_);
            next_ns = MonotonicNs() + interval_ns;
            continue;
          }
          int64_t now = MonotonicNs();
          if (now >= next_ns) break;
          wake_.WaitWithTimeout(&mu_, absl::Nanoseconds(next_ns - now));
        }
      }
      absl::Status s = Sample();
      if (!s.ok() && std::string(s.message()) != last_error) {
        last_error = std::string(s.message());
        LogWarning("telemetry sample failed: %s", last_error);
      }
      next_ns += interval_ns;
      int64_t now = MonotonicNs();
      if (next_ns <= now) next_ns = now + interval_ns;  // fell behind: skip, don't burst
    }
  }

  TelemetryOptions options_;

  absl::Mutex run_mu_;  // Start/Stop
  std::thread thread_ ABSL_GUARDED_BY(run_mu_);

  absl::Mutex sample_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // one sample at a time, in order
  HostSampleReader reader_ ABSL_GUARDED_BY(sample_mu_);  // reads options_

  mutable absl::Mutex mu_;
  absl::CondVar wake_;
  uint64_t sample_count_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, TelemetryWindow> windows_ ABSL_GUARDED_BY(mu_);
  std::optional<HostSample> primed_ ABSL_GUARDED_BY(mu_);  // Prime()'s, for one BeginWindow
};

absl::StatusOr<std::unique_ptr<TelemetrySampler>> TelemetrySampler::Create(
    TelemetryOptions options) {
  if (options.interval_ms < kMinIntervalMs) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "telemetry interval_ms %d is below the minimum of %d ms; use %d or more",
        options.interval_ms, kMinIntervalMs, kMinIntervalMs));
  }
  std::string stat_path = options.proc_root + "/stat";
  absl::StatusOr<std::string> text = ReadFileToString(stat_path);
  if (!text.ok()) {
    return Annotate(text.status(),
                    absl::StrFormat("telemetry proc_root \"%s\" unusable (set proc_root to a "
                                    "mounted procfs)",
                                    options.proc_root));
  }
  absl::StatusOr<ProcStat> stat = ParseProcStat(*text);
  if (!stat.ok()) return Annotate(stat.status(), stat_path);
  return std::unique_ptr<TelemetrySampler>(
      new TelemetrySampler(std::make_unique<Impl>(std::move(options))));
}

TelemetrySampler::TelemetrySampler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TelemetrySampler::~TelemetrySampler() = default;
absl::Status TelemetrySampler::Start() { return impl_->Start(); }
void TelemetrySampler::Stop() { impl_->Stop(); }
absl::Status TelemetrySampler::Sample() { return impl_->Sample(); }
void TelemetrySampler::Prime() { impl_->Prime(); }
uint64_t TelemetrySampler::BeginWindow(absl::Duration primed_max_age) {
  return impl_->BeginWindow(primed_max_age);
}
absl::StatusOr<v1::TelemetrySummary> TelemetrySampler::EndWindow(uint64_t window_id) {
  return impl_->EndWindow(window_id);
}
uint64_t TelemetrySampler::SampleCount() const { return impl_->SampleCount(); }
bool TelemetrySampler::AwaitSampleCount(uint64_t count, int64_t timeout_ms) const {
  return impl_->AwaitSampleCount(count, timeout_ms);
}
const TelemetryOptions& TelemetrySampler::options() const { return impl_->options(); }

}  // namespace lockstep
