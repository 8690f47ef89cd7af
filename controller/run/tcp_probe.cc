#include "controller/run/tcp_probe.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <optional>

#include "absl/strings/str_format.h"
#include "common/net.h"
#include "common/unique_fd.h"
#include "controller/run/bounded_parallel.h"

namespace lockstep {
namespace {

using Clock = std::chrono::steady_clock;

struct Endpoint {
  int family = 0;
  int socktype = 0;
  int protocol = 0;
  sockaddr_storage addr{};
  socklen_t len = 0;
};

// One address being probed.
struct Target {
  std::vector<Endpoint> endpoints;
  size_t next = 0;          // the endpoint to try next
  std::string why;          // the last failure; empty once accepted
  bool done = false;
  std::optional<Clock::time_point> deadline;  // set when its first try is in flight
};

// A connection in flight, closed when its slot goes.
struct Slot {
  UniqueFd fd;
  size_t target;
};

// Its endpoints, or why there are none.
void Resolve(const std::string& address, Target* t) {
  auto hp = SplitHostPort(address);
  if (!hp.ok()) {
    t->why = std::string(hp.status().message());
    t->done = true;
    return;
  }
  struct addrinfo hints = {};
  hints.ai_socktype = SOCK_STREAM;
  struct addrinfo* res = nullptr;
  const int rc =
      ::getaddrinfo(hp->first.c_str(), std::to_string(hp->second).c_str(), &hints, &res);
  if (rc != 0) {
    t->why = absl::StrFormat("cannot resolve %s: %s", hp->first, ::gai_strerror(rc));
    t->done = true;
    return;
  }
  for (struct addrinfo* a = res; a != nullptr; a = a->ai_next) {
    if (a->ai_addrlen > sizeof(sockaddr_storage)) continue;
    Endpoint e{.family = a->ai_family, .socktype = a->ai_socktype, .protocol = a->ai_protocol};
    std::memcpy(&e.addr, a->ai_addr, a->ai_addrlen);
    e.len = a->ai_addrlen;
    t->endpoints.push_back(e);
  }
  ::freeaddrinfo(res);
  t->why = "no address";
  t->done = t->endpoints.empty();
}

class Prober {
 public:
  Prober(std::vector<Target>* targets, absl::Duration timeout,
         const std::atomic<bool>* interrupted)
      : targets_(*targets), timeout_(absl::ToChronoNanoseconds(timeout)),
        interrupted_(interrupted) {
    for (size_t i = 0; i < targets_.size(); ++i) {
      if (!targets_[i].done) queue_.push_back(i);
    }
  }

  void Run() {
    while (!Interrupted() && (Fill(), !active_.empty())) Wait();
    active_.clear();  // closes what is still in flight
    for (Target& t : targets_) {
      if (!t.done) Finish(t, "interrupted");
    }
  }

 private:
  // Starts tries until kMaxTcpProbesAtOnce are in flight, the queue is
  // empty or no descriptor is left.
  void Fill() {
    while (active_.size() < kMaxTcpProbesAtOnce && !queue_.empty()) {
      const size_t i = queue_.front();
      queue_.pop_front();
      if (!Start(i)) {
        queue_.push_front(i);  // out of descriptors: after some finish
        return;
      }
    }
  }

  // Tries target i's next endpoints until one is in flight or it is done;
  // false when no socket could be opened while others are in flight.
  bool Start(size_t i) {
    Target& t = targets_[i];
    for (; t.next < t.endpoints.size(); ++t.next) {
      const Endpoint& e = t.endpoints[t.next];
      UniqueFd fd(::socket(e.family, e.socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, e.protocol));
      if (fd.get() < 0) {
        if ((errno == EMFILE || errno == ENFILE) && !active_.empty()) return false;
        t.why = absl::StrFormat("cannot open a socket: %s", std::strerror(errno));
        continue;
      }
      if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&e.addr), e.len) == 0) {
        Finish(t, "");
        return true;
      }
      if (errno == EINPROGRESS) {
        // Its time runs from its first connection in flight, not while it
        // waited for a descriptor.
        if (!t.deadline) t.deadline = Clock::now() + timeout_;
        active_.push_back({std::move(fd), i});
        return true;
      }
      t.why = std::strerror(errno);
    }
    t.done = true;
    return true;
  }

  bool Interrupted() const { return interrupted_ != nullptr && interrupted_->load(); }

  static void Finish(Target& t, std::string why) {
    t.why = std::move(why);
    t.done = true;
  }

  // One poll over the sockets in flight, until one answers or the earliest
  // deadline; then settles what answered and what ran out of time.
  void Wait() {
    Clock::time_point earliest = Clock::time_point::max();
    std::vector<struct pollfd> fds;
    fds.reserve(active_.size());
    for (const Slot& s : active_) {
      earliest = std::min(earliest, *targets_[s.target].deadline);
      fds.push_back({s.fd.get(), POLLOUT, 0});
    }
    auto left = std::chrono::ceil<std::chrono::milliseconds>(earliest - Clock::now());
    if (interrupted_ != nullptr) left = std::min(left, std::chrono::milliseconds(50));
    ::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(left.count(), 0)));
    const Clock::time_point now = Clock::now();
    std::vector<Slot> still;
    for (size_t k = 0; k < active_.size(); ++k) {
      Slot& s = active_[k];
      Target& t = targets_[s.target];
      if (fds[k].revents != 0) {
        int err = 0;
        socklen_t len = sizeof(err);
        ::getsockopt(s.fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        if (err == 0) {
          Finish(t, "");
        } else {
          t.why = std::strerror(err);
          ++t.next;  // its next endpoint, within the same deadline
          if (now < *t.deadline && t.next < t.endpoints.size()) {
            queue_.push_front(s.target);
          } else {
            t.done = true;
          }
        }
      } else if (now >= *t.deadline) {
        Finish(t, std::strerror(ETIMEDOUT));
      } else {
        still.push_back(std::move(s));
      }
    }
    active_ = std::move(still);
  }

  std::vector<Target>& targets_;
  const Clock::duration timeout_;
  const std::atomic<bool>* interrupted_;
  std::deque<size_t> queue_;
  std::vector<Slot> active_;
};

}  // namespace

std::vector<std::string> TcpProbe(const std::vector<std::string>& addresses,
                                  absl::Duration timeout, const std::atomic<bool>* interrupted) {
  std::vector<Target> targets(addresses.size());
  BoundedParallelFor(addresses.size(), kMaxAgentWorkThreads,
                     [&](size_t i) { Resolve(addresses[i], &targets[i]); });
  Prober(&targets, timeout, interrupted).Run();
  std::vector<std::string> why(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) why[i] = std::move(targets[i].why);
  return why;
}

}  // namespace lockstep
