// The receiving side of a NET phase (agent/workloads/net.h): one acceptor
// that all of an agent's receiving tasks share, so that no task is ever held
// by a connection that has not proven itself.
//
// A connection the listener accepts is pending until its hello
// (kNetHelloBytes) has fully arrived. Its bytes are read without blocking as
// they come, in as many pieces as they come, and nothing past the hello is
// read. A pending connection is closed when
//   - its hello does not pass the check (HelloCheck: magic, version, proof),
//   - its hello names a rank that an earlier connection already proved,
//   - the other end closes it or it fails before its hello is complete,
//   - its hello is not complete `hello_window_ns` after its accept, or
//   - `max_pending` connections are pending and a newer one is accepted
//     (the oldest goes): a flood of connections holds at most that many
//     descriptors, and the newest, most likely a real stream that is
//     sending its hello now, stays.
// A connection whose hello passed waits, its hello read and nothing more, for
// a task's Take.
//
// Take's callers share the work: whichever waiting caller finds that no other
// is at it polls the listener and every pending connection at once (the
// leader) for at most kNetAcceptPollMs, accepts and reads what came, then
// hands over; the others wait for a verified connection or their turn. No
// caller ever waits on one connection, so a silent or slow stranger costs a
// pending slot, never a task's time.
//
// Thread-safe: Take from any number of threads at once. The destructor closes
// the listener and every connection not taken; no Take may be running then.
#ifndef LOCKSTEP_AGENT_WORKLOADS_NET_ACCEPTOR_H_
#define LOCKSTEP_AGENT_WORKLOADS_NET_ACCEPTOR_H_

#include <poll.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "agent/workloads/net_streams.h"
#include "agent/workloads/workload.h"
#include "common/unique_fd.h"

namespace lockstep {

// How long an accepted connection may take to send its whole hello: a
// 44-byte hello arrives in one round trip, and this leaves room for four
// consecutive losses of it (TCP's retransmission timeout, 200 ms at least,
// doubling each time: 0.2 + 0.4 + 0.8 + 1.6 s). Waiting for a hello holds a
// pending slot only, never a receiving task.
inline constexpr int64_t kNetHelloWindowNs = 5'000'000'000;
// How many connections without a complete hello may be pending beyond the
// phase's own receiving streams (which can all be pending at once when their
// senders connect at the same instant).
inline constexpr size_t kNetPendingSpare = 64;
// How often a task waiting in Take looks at its abort flag and its deadline.
inline constexpr int kNetAcceptPollMs = 200;

// What became of the connections accepted so far (for tests and logs).
struct NetAcceptCounts {
  uint64_t accepted = 0;
  uint64_t verified = 0;  // passed the check with a rank not seen before
  uint64_t refused = 0;   // a hello that failed the check, or a rank seen before
  uint64_t closed = 0;    // closed or failed by the other end before its hello was complete
  uint64_t expired = 0;   // hello not complete within the hello window
  uint64_t evicted = 0;   // the oldest pending one, closed to make room
};

// A connection whose hello passed, and its peer's "host:port" (NetEndpoint).
struct NetStream {
  UniqueFd fd;
  std::string from;
};

class NetAcceptor {
 public:
  // The rank a complete hello (kNetHelloBytes) names when it proves the
  // phase's token; nullopt when it does not. Called under the acceptor's lock.
  using HelloCheck = std::function<std::optional<uint32_t>(const unsigned char* hello)>;

  // Takes `listener` (listening, non-blocking). `max_pending` >= 1.
  NetAcceptor(UniqueFd listener, HelloCheck check, size_t max_pending,
              int64_t hello_window_ns = kNetHelloWindowNs);
  NetAcceptor(const NetAcceptor&) = delete;
  NetAcceptor& operator=(const NetAcceptor&) = delete;
  ~NetAcceptor() = default;

  // Waits for a connection whose hello passed and takes it: its descriptor
  // blocking with timeouts (BlockWithTimeouts) and positioned right after
  // its hello, and its peer's address. Cancelled once `task` is aborted
  // (task may be null), DeadlineExceeded past `deadline_mono_ns`.
  absl::StatusOr<NetStream> Take(const TaskContext* task, int64_t deadline_mono_ns)
      ABSL_LOCKS_EXCLUDED(mu_);

  NetAcceptCounts Counts() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Pending {
    UniqueFd fd;
    std::string from;
    int64_t accepted_mono_ns = 0;
    size_t got = 0;  // bytes of the hello read so far
    unsigned char hello[kNetHelloBytes] = {};
  };
  // The leader's poll set: the listener first, then each pending connection
  // in pending_'s order; *wake_mono_ns lowered to the earliest hello window's end.
  std::vector<pollfd> PollSet(int64_t* wake_mono_ns) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After the leader's poll: reads the pending connections that are ready,
  // closes those past their window, accepts what the listener holds.
  void Serve(const std::vector<pollfd>& polled) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AcceptWaiting(int64_t now_mono_ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads what has arrived of p's hello without blocking; true when p is
  // done with: closed (its fd reset) or verified (moved to verified_).
  bool ReadHello(Pending& p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool TakeableOrLeaderless() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !verified_.empty() || !leading_;
  }

  const UniqueFd listener_;
  const HelloCheck check_;
  const size_t max_pending_;
  const int64_t hello_window_ns_;
  mutable absl::Mutex mu_;
  bool leading_ ABSL_GUARDED_BY(mu_) = false;  // a Take is polling (the leader)
  // Oldest first. Only the leader reads or changes it; it polls their
  // descriptors with mu_ released, while leading_ keeps every other Take out.
  std::vector<Pending> pending_ ABSL_GUARDED_BY(mu_);
  std::vector<NetStream> verified_ ABSL_GUARDED_BY(mu_);  // oldest first
  std::set<uint32_t> ranks_seen_ ABSL_GUARDED_BY(mu_);  // a repeated hello is refused
  NetAcceptCounts counts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_NET_ACCEPTOR_H_
