// Clocks. Wall clock (CLOCK_REALTIME) for instants that cross hosts; the
// monotonic clock for every duration and deadline on one host.
#ifndef LOCKSTEP_COMMON_CLOCK_H_
#define LOCKSTEP_COMMON_CLOCK_H_

#include <atomic>
#include <cstdint>
#include <string>

namespace lockstep {

// Unix time in ns (CLOCK_REALTIME).
int64_t RealtimeNs();
// CLOCK_MONOTONIC in ns: durations and deadlines only.
int64_t MonotonicNs();

// Blocks until CLOCK_REALTIME reaches `unix_ns`. When `spin_duration_ns` > 0 it sleeps
// until `unix_ns - spin_duration_ns` and spins (with a CPU pause) for the rest, which
// gives µs-level release when the thread owns a core. Returns at once when
// the instant has passed. `abort` (if given) is polled while spinning and
// between sleeps of at most 50 ms; returns false if it became true.
bool WaitUntilRealtime(int64_t unix_ns, int64_t spin_duration_ns,
                       const std::atomic<bool>* abort = nullptr);

// RFC 3339 UTC with microseconds, e.g. "2026-11-29T20:15:03.123456Z".

std::string FormatRfc3339(int64_t unix_ns);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_CLOCK_H_
