// latency_relay: a test-only TCP relay on loopback that delays each direction.
//
//   latency_relay --target 127.0.0.1:PORT [--listen 127.0.0.1:0]
//                 [--delay_ms 5] [--jitter_ms 1] [--seed N]
//                 [--max_connections N] [--lifetime_s 3600]
//
// Prints "listening on HOST:PORT" (one line, flushed) once it accepts. Every
// accepted connection gets its own connection to --target; each direction is
// delayed independently by delay ± jitter (uniform). Byte order per direction
// is preserved: a chunk read at time a is released at
//   max(release of the previous chunk, a + delay + jitter).
// Bounded: at most kMaxQueuedBytes wait per direction (the reader stops
// reading when full, so TCP flow control pushes back), at most
// --max_connections connections (0 = unlimited) and --lifetime_s seconds.
// Stops by itself on SIGINT/SIGTERM/SIGHUP, when its parent dies, after
// --max_connections connections have ended, or at --lifetime_s.
// Loopback only: both --listen and --target must be loopback addresses.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kChunkBytes = 64 * 1024;
constexpr size_t kMaxQueuedBytes = 8 * 1024 * 1024;

struct Options {
  std::string listen = "127.0.0.1:0";
  std::string target;
  double delay_ms = 5;
  double jitter_ms = 1;
  uint64_t seed = 0;
  int max_connections = 0;
  int lifetime_s = 3600;
};

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "latency_relay: %s\n", msg.c_str());
  std::exit(2);
}

// "HOST:PORT" with a loopback IPv4 host (127.0.0.0/8 or "localhost").
sockaddr_in ParseLoopback(const std::string& text, const char* what) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos) Die(std::string(what) + " \"" + text + "\" is not HOST:PORT");
  std::string host = text.substr(0, colon);
  if (host == "localhost") host = "127.0.0.1";
  char* end = nullptr;
  long port = std::strtol(text.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || port < 0 || port > 65535) {
    Die(std::string(what) + " \"" + text + "\": bad port");
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) {
    Die(std::string(what) + " \"" + text + "\": host must be an IPv4 loopback address");
  }
  if ((ntohl(a.sin_addr.s_addr) >> 24) != 127) {
    Die(std::string(what) + " \"" + text + "\" is not a loopback address (127.0.0.0/8 only)");
  }
  return a;
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      Die(arg + " needs a value");
    }
    auto number = [&](double lo, double hi) {
      char* end = nullptr;
      double v = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || v < lo || v > hi) {
        Die(arg + " \"" + value + "\": want a number in [" + std::to_string(lo) + ", " +
            std::to_string(hi) + "]");
      }
      return v;
    };
    if (arg == "--listen") {
      o.listen = value;
    } else if (arg == "--target") {
      o.target = value;
    } else if (arg == "--delay_ms") {
      o.delay_ms = number(0, 10000);
    } else if (arg == "--jitter_ms") {
      o.jitter_ms = number(0, 10000);
    } else if (arg == "--seed") {
      o.seed = static_cast<uint64_t>(number(0, 1e15));
    } else if (arg == "--max_connections") {
      o.max_connections = static_cast<int>(number(0, 1e6));
    } else if (arg == "--lifetime_s") {
      o.lifetime_s = static_cast<int>(number(1, 1e7));
    } else {
      Die("unknown flag " + arg +
          "; usage: latency_relay --target HOST:PORT [--listen HOST:PORT] [--delay_ms D] "
          "[--jitter_ms J] [--seed N] [--max_connections N] [--lifetime_s S]");
    }
  }
  if (o.target.empty()) Die("--target HOST:PORT is required");
  if (o.jitter_ms > o.delay_ms) Die("--jitter_ms must not exceed --delay_ms");
  return o;
}

// One direction: a reader thread queues chunks with release times, a writer
// thread sends each at its time.
class Pipe {
 public:
  Pipe(int from, int to, const Options& o, uint64_t seed)
      : from_(from), to_(to), delay_ns_(static_cast<int64_t>(o.delay_ms * 1e6)),
        jitter_ns_(static_cast<int64_t>(o.jitter_ms * 1e6)), rng_(seed) {}

  void Run() {
    std::thread writer([this] { WriteLoop(); });
    ReadLoop();
    writer.join();
  }

 private:
  struct Chunk {
    Clock::time_point release;
    std::string data;  // empty: end of stream
  };

  void ReadLoop() {
    std::uniform_int_distribution<int64_t> jitter(-jitter_ns_, jitter_ns_);
    Clock::time_point prev = Clock::now();
    std::string buf(kChunkBytes, '\0');
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return queued_ < kMaxQueuedBytes || broken_; });
        if (broken_) break;
      }
      ssize_t n = ::recv(from_, buf.data(), buf.size(), 0);
      if (n < 0 && errno == EINTR) continue;
      Clock::time_point arrival = Clock::now();
      int64_t d = std::max<int64_t>(0, delay_ns_ + (jitter_ns_ > 0 ? jitter(rng_) : 0));
      Clock::time_point release = std::max(prev, arrival + std::chrono::nanoseconds(d));
      prev = release;
      std::lock_guard<std::mutex> lock(mu_);
      if (n <= 0) {  // EOF or error: pass the end on after the data before it
        queue_.push_back({release, std::string()});
        cv_.notify_all();
        break;
      }
      queue_.push_back({release, buf.substr(0, static_cast<size_t>(n))});
      queued_ += static_cast<size_t>(n);
      cv_.notify_all();
    }
  }

  void WriteLoop() {
    for (;;) {
      Chunk c;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return !queue_.empty(); });
        Clock::time_point when = queue_.front().release;
        while (Clock::now() < when) cv_.wait_until(lock, when);
        c = std::move(queue_.front());
        queue_.pop_front();
        queued_ -= c.data.size();
        cv_.notify_all();
      }
      if (c.data.empty()) {
        ::shutdown(to_, SHUT_WR);
        return;
      }
      size_t off = 0;
      while (off < c.data.size()) {
        ssize_t n = ::send(to_, c.data.data() + off, c.data.size() - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          // The peer is gone: stop reading too, and make the other side see it.
          std::lock_guard<std::mutex> lock(mu_);
          broken_ = true;
          cv_.notify_all();
          ::shutdown(from_, SHUT_RDWR);
          return;
        }
        off += static_cast<size_t>(n);
      }
    }
  }

  int from_, to_;
  int64_t delay_ns_, jitter_ns_;
  std::mt19937_64 rng_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Chunk> queue_;
  size_t queued_ = 0;
  bool broken_ = false;
};

std::atomic<int> g_finished{0};
int g_wake_fd = -1;  // write end of a pipe that wakes the accept loop

void Serve(int client, sockaddr_in target, Options o, uint64_t seed) {
  int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (server < 0 || ::connect(server, reinterpret_cast<sockaddr*>(&target), sizeof(target)) != 0) {
    std::fprintf(stderr, "latency_relay: cannot connect to %s: %s\n", o.target.c_str(),
                 std::strerror(errno));
  } else {
    int one = 1;
    ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    ::setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    Pipe up(client, server, o, seed * 2 + 1);
    Pipe down(server, client, o, seed * 2 + 2);
    std::thread t([&] { down.Run(); });
    up.Run();
    t.join();
  }
  if (server >= 0) ::close(server);
  ::close(client);
  g_finished.fetch_add(1);
  char b = 'c';
  (void)!::write(g_wake_fd, &b, 1);
}

int g_signal_fd = -1;
void OnSignal(int) {
  char b = 's';
  (void)!::write(g_signal_fd, &b, 1);
}

}  // namespace

int main(int argc, char** argv) {
  Options o = ParseArgs(argc, argv);
  sockaddr_in listen_addr = ParseLoopback(o.listen, "--listen");
  sockaddr_in target = ParseLoopback(o.target, "--target");
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive the test that started us
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) Die(std::string("pipe: ") + std::strerror(errno));
  g_signal_fd = g_wake_fd = fds[1];
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(lfd, reinterpret_cast<sockaddr*>(&listen_addr), sizeof(listen_addr)) != 0) {
    Die("cannot listen on " + o.listen + ": " + std::strerror(errno));
  }
  if (::listen(lfd, 64) != 0) Die(std::string("listen: ") + std::strerror(errno));
  socklen_t len = sizeof(listen_addr);
  ::getsockname(lfd, reinterpret_cast<sockaddr*>(&listen_addr), &len);
  char host[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &listen_addr.sin_addr, host, sizeof(host));
  std::printf("listening on %s:%u\n", host, ntohs(listen_addr.sin_port));
  std::fflush(stdout);

  const auto deadline = Clock::now() + std::chrono::seconds(o.lifetime_s);
  int accepted = 0;
  uint64_t seed = o.seed;
  for (;;) {
    if (o.max_connections > 0 && g_finished.load() >= o.max_connections) break;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      std::fprintf(stderr, "latency_relay: lifetime of %d s reached\n", o.lifetime_s);
      break;
    }
    pollfd p[2] = {{lfd, POLLIN, 0}, {fds[0], POLLIN, 0}};
    int n = ::poll(p, 2, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) Die(std::string("poll: ") + std::strerror(errno));
    if (p[1].revents & POLLIN) {
      char b[64];
      ssize_t r = ::read(fds[0], b, sizeof(b));
      if (r > 0 && std::memchr(b, 's', static_cast<size_t>(r)) != nullptr) break;  // a signal
    }
    if ((p[0].revents & POLLIN) &&
        (o.max_connections == 0 || accepted < o.max_connections)) {
      int c = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      ++accepted;
      std::thread(Serve, c, target, o, seed++).detach();
    }
  }
  // Connections still open die with the process; their peers see a reset.
  std::_Exit(0);
}
