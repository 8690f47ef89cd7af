#include "common/clock.h"

#include <time.h>

#include <algorithm>
#include <cerrno>

#include "absl/time/time.h"

namespace lockstep {
namespace {

int64_t Now(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

int64_t RealtimeNs() { return Now(CLOCK_REALTIME); }
int64_t MonotonicNs() { return Now(CLOCK_MONOTONIC); }

bool WaitUntilRealtime(int64_t unix_ns, int64_t spin_duration_ns, const std::atomic<bool>* abort) {
  constexpr int64_t kSliceNs = 50'000'000;
  const int64_t sleep_until = unix_ns - std::max<int64_t>(spin_duration_ns, 0);
  for (;;) {
    if (abort != nullptr && abort->load(std::memory_order_relaxed)) return false;
    int64_t now = RealtimeNs();
    if (now >= sleep_until) break;
    int64_t target = std::min(sleep_until, now + kSliceNs);
    struct timespec ts;
    ts.tv_sec = target / 1'000'000'000;
    ts.tv_nsec = target % 1'000'000'000;
    // TIMER_ABSTIME on CLOCK_REALTIME: a clock step wakes us correctly.
    clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr);
  }
  while (RealtimeNs() < unix_ns) {
    if (abort != nullptr && abort->load(std::memory_order_relaxed)) return false;
    CpuRelax();
  }
  return true;
}

std::string FormatRfc3339(int64_t unix_ns) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", absl::FromUnixNanos(unix_ns),
                          absl::UTCTimeZone());
}

}  // namespace lockstep
