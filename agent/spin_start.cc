#include "agent/spin_start.h"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/clock.h"
#include "common/files.h"

namespace lockstep {
namespace {

constexpr int kTaskPriority = 1;

// QUOTA / PERIOD, or 0 for no quota ("max", -1, unreadable).
double QuotaOf(absl::string_view quota_text, absl::string_view period_text) {
  double quota = 0, period = 0;
  if (!absl::SimpleAtod(absl::StripAsciiWhitespace(quota_text), &quota) ||
      !absl::SimpleAtod(absl::StripAsciiWhitespace(period_text), &period) || quota <= 0 ||
      period <= 0) {
    return 0;
  }
  return quota / period;
}

// This process's cgroup CPU quota in cores: cgroup v2's cpu.max ("max 100000"
// or "QUOTA PERIOD"), else v1's cpu.cfs_quota_us / cpu.cfs_period_us.
double CgroupQuotaCores() {
  auto self = ReadFileToString("/proc/self/cgroup");
  if (!self.ok()) return 0;
  double cores = 0;
  for (absl::string_view line : absl::StrSplit(*self, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> f = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (f.size() != 3) continue;
    double q = 0;
    if (f[0] == "0" && f[1].empty()) {
      auto max = ReadFileToString(absl::StrFormat("/sys/fs/cgroup%s/cpu.max", f[2]));
      std::vector<absl::string_view> w;
      if (max.ok()) w = absl::StrSplit(absl::StripAsciiWhitespace(*max), ' ', absl::SkipEmpty());
      if (w.size() == 2) q = QuotaOf(w[0], w[1]);
    } else if (absl::StrContains(absl::StrCat(",", f[1], ","), ",cpu,")) {
      const std::string dir = absl::StrFormat("/sys/fs/cgroup/%s%s", f[1], f[2]);
      auto quota = ReadFileToString(dir + "/cpu.cfs_quota_us");
      auto period = ReadFileToString(dir + "/cpu.cfs_period_us");
      if (quota.ok() && period.ok()) q = QuotaOf(*quota, *period);
    }
    if (q > 0) cores = cores > 0 ? std::min(cores, q) : q;
  }
  return cores;
}

}  // namespace

uint32_t StartHost::usable_cores() const {
  uint32_t c = std::min(online_cores, allowed_cores);
  if (quota_cores > 0) c = std::min<uint32_t>(c, static_cast<uint32_t>(std::floor(quota_cores)));
  return std::max<uint32_t>(c, 1);
}

StartHost ReadStartHost() {
  StartHost h;
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  h.online_cores = static_cast<uint32_t>(std::max(online, 1L));
  cpu_set_t set;
  CPU_ZERO(&set);
  h.allowed_cores = sched_getaffinity(0, sizeof(set), &set) == 0
                        ? static_cast<uint32_t>(std::max(CPU_COUNT(&set), 1))
                        : h.online_cores;
  h.quota_cores = CgroupQuotaCores();
  if (auto load = ReadFileToString("/proc/loadavg"); load.ok()) {
    std::vector<absl::string_view> f = absl::StrSplit(*load, ' ');
    if (!f.empty()) (void)absl::SimpleAtod(f[0], &h.load1);
  }
  return h;
}

SpinStart::SpinStart(uint32_t tasks, int64_t spin_duration_ns, bool allow_realtime,
                     int64_t first_transfer_after_ns)
    : tasks_(tasks),
      spin_duration_ns_(spin_duration_ns),
      allow_realtime_(allow_realtime),
      raised_(new std::atomic<bool>[tasks]),
      after_ns_(std::max<int64_t>(first_transfer_after_ns, 0)) {
  for (uint32_t i = 0; i < tasks; ++i) raised_[i].store(false);
}

void SpinStart::RaiseParked(const std::vector<pthread_t>& threads) {
  if (!allow_realtime_) return;
  struct sched_param rt = {};
  rt.sched_priority = kTaskPriority;
  for (uint32_t i = 0; i < tasks_ && i < threads.size(); ++i) {
    const int err = pthread_setschedparam(threads[i], SCHED_FIFO, &rt);
    if (err != 0) {
      refused_errno_.store(err);
      return;  // the tasks try themselves (and record it)
    }
    raised_[i].store(true);
    raised_count_.fetch_add(1);
  }
}

bool SpinStart::Wait(uint32_t index, int64_t at_unix_ns, const std::atomic<bool>* abort) {
  // Wake within ~1 µs of the spin's start instead of the default 50 µs slack.
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  if (allow_realtime_ && !raised_[index].load()) {
    struct sched_param rt = {};
    rt.sched_priority = kTaskPriority;
    const int err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt);
    if (err == 0) {
      raised_[index].store(true);
      raised_count_.fetch_add(1);
    } else {
      refused_errno_.store(err);
    }
  }
  return WaitUntilRealtime(at_unix_ns, spin_duration_ns_, abort);
}

void SpinStart::Lower(uint32_t index) {
  if (!raised_[index].exchange(false)) return;
  struct sched_param normal = {};
  pthread_setschedparam(pthread_self(), SCHED_OTHER, &normal);
}

void SpinStart::AlignFirstTransfer(int64_t at_unix_ns, const std::atomic<bool>* abort) {
  if (after_ns_ <= 0) return;
  const int64_t go_unix_ns = at_unix_ns + after_ns_;
  if (RealtimeNs() >= go_unix_ns) {
    late_.fetch_add(1);
    return;
  }
  aligned_.fetch_add(1);
  // Sleeps until at_unix_ns, which is past: spins to go_unix_ns.
  WaitUntilRealtime(go_unix_ns, after_ns_, abort);
}

std::string SpinStart::note() const {
  std::string aligned;
  if (after_ns_ > 0) {
    aligned = absl::StrFormat(
        "; first transfers at the instant + %.1f us (%u tasks had opened by then, %u not)",
        static_cast<double>(after_ns_) / 1e3, aligned_.load(), late_.load());
  }
  return Note() + aligned;
}

std::string SpinStart::Note() const {
  const double spin_us = static_cast<double>(spin_duration_ns_) / 1e3;
  const uint32_t raised = raised_count_.load();
  if (!allow_realtime_) {
    return absl::StrFormat("%u tasks spun %.0f us at normal priority (real-time not asked for)",
                           tasks_, spin_us);
  }
  if (raised == tasks_) {
    return absl::StrFormat(
        "%u tasks spun %.0f us at SCHED_FIFO %d, held to their first transfer", tasks_, spin_us,
        kTaskPriority);
  }
  const int err = refused_errno_.load();
  return absl::StrFormat(
      "%u of %u tasks at SCHED_FIFO: refused (%s; needs root or CAP_SYS_NICE), the rest spun "
      "%.0f us at normal priority: a thread woken on their core in the spin may run first",
      raised, tasks_, err != 0 ? std::strerror(err) : "unknown", spin_us);
}

}  // namespace lockstep
