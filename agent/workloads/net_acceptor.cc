// The NET phase's shared acceptor (agent/workloads/net_acceptor.h).
#include "agent/workloads/net_acceptor.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace lockstep {

NetAcceptor::NetAcceptor(UniqueFd listener, HelloCheck check, size_t max_pending,
                         int64_t hello_window_ns)
    : listener_(std::move(listener)),
      check_(std::move(check)),
      max_pending_(std::max<size_t>(max_pending, 1)),
      hello_window_ns_(hello_window_ns) {}

absl::StatusOr<NetStream> NetAcceptor::Take(const TaskContext* task, int64_t deadline_mono_ns) {
  absl::MutexLock lock(&mu_);
  while (true) {
    if (!verified_.empty()) {
      NetStream stream = std::move(verified_.front());
      verified_.erase(verified_.begin());
      BlockWithTimeouts(stream.fd.get());
      return stream;
    }
    if (task != nullptr && task->Aborted()) return absl::CancelledError("the phase stopped");
    const int64_t now = MonotonicNs();
    if (now >= deadline_mono_ns) return absl::DeadlineExceededError("no stream proved itself");
    const int64_t turn_ns =
        std::min<int64_t>(int64_t{kNetAcceptPollMs} * 1'000'000, deadline_mono_ns - now);
    if (leading_) {  // another Take polls: wait for what it hands over, or for its place
      mu_.AwaitWithTimeout(absl::Condition(this, &NetAcceptor::TakeableOrLeaderless),
                           absl::Nanoseconds(turn_ns));
      continue;
    }
    leading_ = true;
    int64_t wake_mono_ns = now + turn_ns;
    std::vector<pollfd> polled = PollSet(&wake_mono_ns);
    const int wait_ms =
        static_cast<int>(std::max<int64_t>(0, (wake_mono_ns - now + 999'999) / 1'000'000));
    // Unlocked while it waits, so that Counts and the other Takes are not
    // held; pending_ stays as it is, as only the leader changes it.
    mu_.Unlock();
    const int ready = ::poll(polled.data(), polled.size(), wait_ms);
    mu_.Lock();
    if (ready <= 0) {  // nothing came (or EINTR): only the windows to look at
      for (pollfd& p : polled) p.revents = 0;
    }
    Serve(polled);
    leading_ = false;
  }
}

NetAcceptCounts NetAcceptor::Counts() const {
  absl::MutexLock lock(&mu_);
  return counts_;
}

std::vector<pollfd> NetAcceptor::PollSet(int64_t* wake_mono_ns) const {
  std::vector<pollfd> set;
  set.reserve(pending_.size() + 1);
  set.push_back({listener_.get(), POLLIN, 0});
  for (const Pending& p : pending_) {
    set.push_back({p.fd.get(), POLLIN, 0});
    *wake_mono_ns = std::min(*wake_mono_ns, p.accepted_mono_ns + hello_window_ns_);
  }
  return set;
}

void NetAcceptor::Serve(const std::vector<pollfd>& polled) {
  const int64_t now = MonotonicNs();
  // polled[i + 1] is pending_[i]: nobody else changed pending_ during the poll.
  for (size_t i = 0; i + 1 < polled.size() && i < pending_.size(); ++i) {
    Pending& p = pending_[i];
    if (polled[i + 1].revents != 0 && ReadHello(p)) continue;
    if (now - p.accepted_mono_ns >= hello_window_ns_) {
      p.fd.Reset();
      ++counts_.expired;
    }
  }
  std::erase_if(pending_, [](const Pending& p) { return p.fd.get() < 0; });
  if (polled[0].revents != 0) AcceptWaiting(now);
}

void NetAcceptor::AcceptWaiting(int64_t now_mono_ns) {
  // At most max_pending_ a round: a flood cannot keep the leader here, and
  // the pending connections are read again between rounds.
  for (size_t i = 0; i < max_pending_; ++i) {
    sockaddr_storage peer{};
    socklen_t len = sizeof(peer);
    UniqueFd fd(::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&peer), &len,
                          SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (fd.get() < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if ((errno == EMFILE || errno == ENFILE) && !pending_.empty()) {
        pending_.erase(pending_.begin());  // a descriptor for the newcomer
        ++counts_.evicted;
        continue;
      }
      return;  // EAGAIN: no more waiting; another error: the next round tries again
    }
    ++counts_.accepted;
    Pending p{.fd = std::move(fd), .from = NetEndpoint(peer), .accepted_mono_ns = now_mono_ns};
    if (ReadHello(p)) continue;  // its hello was there already, or it is gone
    if (pending_.size() >= max_pending_) {
      pending_.erase(pending_.begin());
      ++counts_.evicted;
    }
    pending_.push_back(std::move(p));
  }
}

bool NetAcceptor::ReadHello(Pending& p) {
  while (p.got < kNetHelloBytes) {
    // Never more than the hello: the stream's frames stay for the task.
    const ssize_t n = ::recv(p.fd.get(), p.hello + p.got, kNetHelloBytes - p.got, MSG_DONTWAIT);
    if (n > 0) {
      p.got += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;  // more to come
    p.fd.Reset();  // closed by the other end (0), or failed
    ++counts_.closed;
    return true;
  }
  const std::optional<uint32_t> rank = check_(p.hello);
  if (!rank.has_value() || !ranks_seen_.insert(*rank).second) {
    p.fd.Reset();  // not one of the phase's streams, or a replayed one: closed unread
    ++counts_.refused;
    return true;
  }
  ++counts_.verified;
  verified_.push_back({std::move(p.fd), std::move(p.from)});
  return true;
}

}  // namespace lockstep
