// Runs fn(0) … fn(n−1) on at most `max_threads` threads (fewer when n is
// small; on the calling thread for one item or one thread) and returns when
// all are done: per-agent blocking work (a channel's
// connection, eight clock exchanges) without one thread per agent.
// Thread: any; `fn` runs on the worker threads, each index once.
#ifndef LOCKSTEP_CONTROLLER_RUN_BOUNDED_PARALLEL_H_
#define LOCKSTEP_CONTROLLER_RUN_BOUNDED_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace lockstep {

// Threads for blocking per-agent work in the controller.
inline constexpr size_t kMaxAgentWorkThreads = 32;

template <typename Fn>
void BoundedParallelFor(size_t n, size_t max_threads, Fn fn) {
  if (n == 1 || max_threads <= 1) {  // no thread to start for one item
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  const size_t count = std::min(n, std::max<size_t>(max_threads, 1));
  for (size_t t = 0; t < count; ++t) {
    threads.emplace_back([&] {
      for (size_t i = next++; i < n; i = next++) fn(i);
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_BOUNDED_PARALLEL_H_
