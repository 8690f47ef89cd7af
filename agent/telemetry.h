// Host telemetry for a phase: a background sampler of /proc, /sys and the
// file systems' own stats files (agent/fs/fs_stats.h: Lustre's), summarised
// per window (one window = one phase).
//
//   ASSIGN_OR_RETURN(auto sampler, TelemetrySampler::Create(options));
//   RETURN_IF_ERROR(sampler->Start());          // optional: periodic samples
//   uint64_t w = sampler->BeginWindow();        // takes a sample now
//   ... phase runs ...
//   ASSIGN_OR_RETURN(v1::TelemetrySummary s, sampler->EndWindow(w));  // and now
//   sampler->Stop();                            // also done by the destructor
//
// Windows may overlap. Without Start() a window still has its two end
// samples. Everything is thread-safe. Whatever cannot be measured (a device
// not in /proc/diskstats, an unreadable stats file) becomes a warning
// in the summaries of the windows open at the time, never a silent skip.
#ifndef LOCKSTEP_AGENT_TELEMETRY_H_
#define LOCKSTEP_AGENT_TELEMETRY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/fs/fs_stats.h"
#include "lockstep/v1/telemetry.pb.h"

namespace lockstep {

struct TelemetryOptions {
  std::string proc_root = "/proc";
  std::string sys_root = "/sys";
  // The file systems' own stats files sampled (agent/fs/fs_stats.h):
  // Lustre's by default.
  std::vector<FsStatsSource> fs_stats = DefaultFsStatsSources();
  uint32_t interval_ms = 1000;  // background sampling period, >= kMinIntervalMs
  // Block devices by name ("sda", "nvme0n1"; a "/dev/" prefix is dropped).
  // Empty = every whole disk in <sys_root>/block except loop, ram and zram.
  std::vector<std::string> devices;
  // Network interfaces; empty = all except "lo".
  std::vector<std::string> ifaces;
  // Per-process CPU (TelemetrySummary.top_processes): every sample, the
  // periodic ones too (so that a process born mid-window is seen), reads
  // <proc_root>/PID/stat of every process (agent/process_cpu.h).
  bool process_cpu = true;
};

class TelemetrySampler {
 public:
  static constexpr uint32_t kMinIntervalMs = 50;

  // Checks the options (interval, <proc_root>/stat readable) and takes no
  // sample yet. InvalidArgument / NotFound name the value and the fix.
  static absl::StatusOr<std::unique_ptr<TelemetrySampler>> Create(TelemetryOptions options);

  ~TelemetrySampler();  // Stop()s
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  // Starts the background thread: one sample every interval_ms on the
  // monotonic clock while at least one window is open, none while none is
  // (the period restarts at the next BeginWindow). FailedPrecondition if
  // already running.
  absl::Status Start();
  // Stops and joins the thread; open windows stay open. Idempotent.
  void Stop();

  // Takes one sample now and feeds it to every open window. Errors only when
  // /proc/stat is unreadable; anything else becomes a window warning.
  absl::Status Sample();

  // Takes a sample now and keeps it for BeginWindow(primed_max_age), in
  // place of the sample that call would take. For a window that must open
  // on a latency-critical path (an agent's Start, between the Start's
  // arrival and the instant): one sample reads every process's stat and
  // every file system's stats file, milliseconds on a host of a thousand processes
  // or OSCs; Prime() takes it at the end of Prepare and the cache barrier
  // instead. Feeds no window and does not count in SampleCount(); a failed
  // sample keeps nothing.
  void Prime();

  // Opens a window and returns its id. Its first sample is the primed one
  // when Prime() took one no longer than `primed_max_age` ago (so the window
  // also covers the time since then: for an agent's phase, the rest of the
  // Prepare round, the cache barrier and the start lead), which no other
  // window will use; otherwise, and with the default of zero, a sample
  // taken now.
  uint64_t BeginWindow(absl::Duration primed_max_age = absl::ZeroDuration());
  // Takes a last sample, closes the window and summarises it. NotFound for
  // an unknown or already ended id.
  absl::StatusOr<v1::TelemetrySummary> EndWindow(uint64_t window_id);

  // Samples collected so far (all windows, background or explicit).
  uint64_t SampleCount() const;
  // Blocks until SampleCount() >= count or timeout_ms passes; returns whether
  // the count was reached. For tests and for "at least one sample" checks.
  bool AwaitSampleCount(uint64_t count, int64_t timeout_ms) const;

  const TelemetryOptions& options() const;

 private:
  class Impl;
  explicit TelemetrySampler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_TELEMETRY_H_
