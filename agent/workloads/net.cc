#include "agent/workloads/net.h"

#include <arpa/inet.h>
#include <endian.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/limits.h"
#include "common/net.h"
#include "common/unique_fd.h"

namespace lockstep {
namespace {

constexpr char kHelloMagic[4] = {'L', 'S', 'N', 'T'};
constexpr uint32_t kProtocolVersion = 1;
constexpr size_t kProofBytes = 32;
constexpr size_t kHelloBytes = 4 + 4 + 4 + kProofBytes;
constexpr uint32_t kData = 1, kPing = 2, kEnd = 3;
constexpr size_t kFrameHeaderBytes = 16;
// How often a blocked send, receive or accept looks at the abort flag.
constexpr int kPollMs = 200;
// How long a receiving task waits for its stream, and any stream for its
// next bytes, beyond the phase's duration: a sender that never comes or
// stops midway is then named.
constexpr int64_t kQuietLimitNs = 30'000'000'000;


struct FrameHeader {
  uint32_t type = 0;
  uint64_t length = 0;
};

void EncodeHeader(uint32_t type, uint64_t length, unsigned char out[kFrameHeaderBytes]) {
  const uint32_t t = htobe32(type), zero = 0;
  const uint64_t l = htobe64(length);
  std::memcpy(out, &t, 4);
  std::memcpy(out + 4, &zero, 4);
  std::memcpy(out + 8, &l, 8);
}

FrameHeader DecodeHeader(const unsigned char in[kFrameHeaderBytes]) {
  uint32_t t;
  uint64_t l;
  std::memcpy(&t, in, 4);
  std::memcpy(&l, in + 8, 8);
  return {be32toh(t), be64toh(l)};
}

// Waits until `fd` is ready for `events`, looking at the abort flag every
// kPollMs; false (errno ETIMEDOUT or ECANCELED) past `deadline_mono_ns` or
// on abort.
bool WaitReady(int fd, short events, const TaskContext* task, int64_t deadline_mono_ns) {
  while (true) {
    if (task != nullptr && task->Aborted()) {
      errno = ECANCELED;
      return false;
    }
    const int64_t left_ns = deadline_mono_ns - MonotonicNs();
    if (left_ns <= 0) {
      errno = ETIMEDOUT;
      return false;
    }
    pollfd p{fd, events, 0};
    const int wait_ms = static_cast<int>(std::min<int64_t>(kPollMs, left_ns / 1'000'000 + 1));
    const int n = ::poll(&p, 1, wait_ms);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

// Whether to go on after a call timed out (SO_SNDTIMEO/SO_RCVTIMEO, kPollMs):
// false, errno ECANCELED or ETIMEDOUT, once the phase stopped or the deadline passed.
bool StillWaiting(const TaskContext* task, int64_t deadline_mono_ns) {
  if (task != nullptr && task->Aborted()) {
    errno = ECANCELED;
    return false;
  }
  if (MonotonicNs() >= deadline_mono_ns) {
    errno = ETIMEDOUT;
    return false;
  }
  return true;
}

// A connected stream's calls block, each for kPollMs at most (then the
// caller looks at the abort flag and its deadline): one send or receive per
// message where a non-blocking socket would add a poll and a short count.
void BlockWithTimeouts(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  timeval tv{0, kPollMs * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

// All of iov (a header and a payload) or false with errno.
bool SendAll(int fd, iovec* iov, int count, const TaskContext* task, int64_t deadline_mono_ns) {
  while (count > 0) {
    msghdr m{};
    m.msg_iov = iov;
    m.msg_iovlen = static_cast<size_t>(count);
    const ssize_t n = ::sendmsg(fd, &m, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN || !StillWaiting(task, deadline_mono_ns)) return false;
      continue;
    }
    size_t sent = static_cast<size_t>(n);
    while (count > 0 && sent >= iov->iov_len) {
      sent -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + sent;
      iov->iov_len -= sent;
    }
  }
  return true;
}

bool SendBytes(int fd, const void* data, size_t n, const TaskContext* task, int64_t deadline_mono_ns) {
  iovec v{const_cast<void*>(data), n};
  return SendAll(fd, &v, 1, task, deadline_mono_ns);
}

// Exactly n bytes, or false: errno set, or 0 when the other end closed first.
bool RecvAll(int fd, void* data, size_t n, const TaskContext* task, int64_t deadline_mono_ns) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t got = ::recv(fd, p, n, MSG_WAITALL);
    if (got > 0) {
      p += got;
      n -= static_cast<size_t>(got);
      continue;
    }
    if (got == 0) {
      errno = 0;
      return false;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN || !StillWaiting(task, deadline_mono_ns)) return false;
  }
  return true;
}

std::string ErrnoText(int err) {
  if (err == 0) return "the other end closed the connection";
  if (err == ECANCELED) return "the phase stopped";
  return absl::StrFormat("%s (errno %d)", std::strerror(err), err);
}

std::string Endpoint(sockaddr_storage a) {
  if (a.ss_family == AF_INET6) {  // an IPv4 peer on the dual-stack socket: as IPv4
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&a);
    if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
      sockaddr_in a4{};
      a4.sin_family = AF_INET;
      a4.sin_port = a6->sin6_port;
      std::memcpy(&a4.sin_addr, &a6->sin6_addr.s6_addr[12], 4);
      a = sockaddr_storage{};
      std::memcpy(&a, &a4, sizeof(a4));
    }
  }
  char host[NI_MAXHOST] = {}, port[NI_MAXSERV] = {};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&a), sizeof(a), host, sizeof(host), port,
                    sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "?";
  }
  return a.ss_family == AF_INET6 ? absl::StrFormat("[%s]:%s", host, port)
                                 : absl::StrFormat("%s:%s", host, port);
}

class NetWorkload : public Workload {
 public:
  NetWorkload(const v1::PhaseSpec& spec, const WorkloadOptions& options)
      : spec_(spec), net_(spec.net()), options_(options) {}

  absl::Status Validate() const override {
    const uint64_t streams = net_.streams_per_peer();
    if (net_.send_peers() > 0 && (streams == 0 || streams > kMaxNetStreamsPerPeer)) {
      return SpecError(spec_, absl::StrFormat("streams_per_peer %u is outside 1..%u", streams,
                                              kMaxNetStreamsPerPeer));
    }
    // The tasks (send and receive) are bounded by the agent's max_tasks.
    if (uint64_t{net_.send_peers()} * streams + net_.receive_streams() != spec_.tasks()) {
      return SpecError(spec_, absl::StrFormat(
                                  "%u tasks, but %u peers x %u streams to send and %u to receive",
                                  spec_.tasks(), net_.send_peers(), streams,
                                  net_.receive_streams()));
    }
    if (net_.message_bytes() < kFrameHeaderBytes || net_.message_bytes() > kMaxNetMessageBytes) {
      return SpecError(spec_, absl::StrFormat("message_bytes %u is outside %u..%u",
                                              net_.message_bytes(), kFrameHeaderBytes,
                                              kMaxNetMessageBytes));
    }
    if (net_.duration_ms() == 0 || net_.duration_ms() > kMaxNetDurationMs) {
      return SpecError(spec_, absl::StrFormat("duration_ms %u is outside 1..%u", net_.duration_ms(),
                                              kMaxNetDurationMs));
    }
    if (net_.ping_bytes() > kMaxNetPingBytes) {
      return SpecError(spec_, absl::StrFormat("ping_bytes %u is over the limit of %u",
                                              net_.ping_bytes(), kMaxNetPingBytes));
    }
    if (net_.token().size() != kProofBytes) {
      return SpecError(spec_, absl::StrFormat("the phase token has %u bytes, not %u",
                                              net_.token().size(), kProofBytes));
    }
    return absl::OkStatus();
  }

  std::string TaskPath(const std::string& /*dir*/, uint32_t /*rank*/) const override {
    return "";
  }

  absl::Status Prepare(const BeneathDir& /*dir*/, std::span<v1::TaskResult* const> results) override;
  void DescribePrepared(v1::PrepareReply* reply) const override {
    if (listen_port_ != 0) reply->set_net_port(listen_port_);
    reply->set_net_address(interface_address_);
  }
  absl::Status SetPeers(const std::vector<v1::NetPeer>& peers) override {
    if (peers.size() != net_.send_peers()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "phase %s: %u peers to stream to, but the phase was prepared for %u; the controller "
          "and this agent disagree (update both)",
          spec_.phase_id(), peers.size(), net_.send_peers()));
    }
    peers_ = peers;
    return absl::OkStatus();
  }
  bool UsesDir() const override { return false; }
  // The port is the phase's only: closed as soon as its tasks are done.
  void Finish() override { listener_.Reset(); }

  void RunTask(const TaskContext& task) override {
    if (task.index < net_.send_peers() * net_.streams_per_peer()) {
      Send(task);
    } else {
      Receive(task);
    }
  }

  absl::StatusOr<uint32_t> RemoveFiles(const BeneathDir& /*dir*/) const override { return 0u; }
  bool CreatesFiles() const override { return false; }

 private:
  void Send(const TaskContext& task);
  void Receive(const TaskContext& task);
  // Connects task's stream to `peer` and sends the hello; false after task.Fail.
  bool Connect(const TaskContext& task, const v1::NetPeer& peer, UniqueFd* out);
  // Accepts connections until one proves the token; false after task.Fail.
  bool AcceptVerified(const TaskContext& task, UniqueFd* out, std::string* from);
  void ReceiveFrames(const TaskContext& task, int fd, const std::string& from);
  void ReadTcpInfo(int fd, v1::NetResult* r) const;
  std::string PeerName(const v1::NetPeer& p) const {
    return absl::StrFormat("agent %s (%s port %u)", p.agent(), p.host(), p.port());
  }

  const v1::PhaseSpec spec_;
  const v1::NetSpec net_;
  const WorkloadOptions options_;
  std::string interface_address_;  // of net_.interface(), "" when none named
  UniqueFd listener_;
  uint32_t listen_port_ = 0;
  std::vector<v1::NetPeer> peers_;
  std::vector<std::vector<unsigned char>> payloads_;  // by sending task
  // Receivers: the ranks whose stream was taken (a repeated hello is refused).
  absl::Mutex mu_;
  std::set<uint32_t> ranks_seen_ ABSL_GUARDED_BY(mu_);
};

absl::Status NetWorkload::Prepare(const BeneathDir& /*dir*/, std::span<v1::TaskResult* const> results) {
  if (!net_.interface().empty()) {
    auto address = InterfaceAddress(net_.interface());
    if (!address.ok()) {
      return absl::FailedPreconditionError(
          absl::StrFormat("phase %s: %s", spec_.phase_id(), address.status().message()));
    }
    interface_address_ = *address;
  }
  const size_t senders = uint64_t{net_.send_peers()} * net_.streams_per_peer();
  for (size_t i = 0; i < results.size(); ++i) results[i]->mutable_net()->set_receiver(i >= senders);
  // Each sending task's message, made before the start instant.
  payloads_.assign(senders, std::vector<unsigned char>(net_.message_bytes() - kFrameHeaderBytes));
  for (size_t t = 0; t < senders; ++t) {
    for (size_t i = 0; i < payloads_[t].size(); ++i) {
      payloads_[t][i] = static_cast<unsigned char>(i * 131 + t);
    }
  }
  if (net_.receive_streams() == 0) return absl::OkStatus();
  // One socket for the phase: the interface's address, else any (IPv6 and IPv4).
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (!interface_address_.empty()) {
    auto* a4 = reinterpret_cast<sockaddr_in*>(&addr);
    a4->sin_family = AF_INET;
    ::inet_pton(AF_INET, interface_address_.c_str(), &a4->sin_addr);
    len = sizeof(sockaddr_in);
  } else {
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&addr);
    a6->sin6_family = AF_INET6;
    a6->sin6_addr = in6addr_any;
    len = sizeof(sockaddr_in6);
  }
  UniqueFd fd(::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0 && addr.ss_family == AF_INET6) {  // a host without IPv6
    auto* a4 = reinterpret_cast<sockaddr_in*>(&addr);
    *a4 = sockaddr_in{};
    a4->sin_family = AF_INET;
    a4->sin_addr.s_addr = htonl(INADDR_ANY);
    len = sizeof(sockaddr_in);
    fd = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  }
  if (fd.get() < 0) {
    return absl::InternalError(absl::StrFormat("phase %s: socket: %s", spec_.phase_id(),
                                               ErrnoText(errno)));
  }
  if (addr.ss_family == AF_INET6) {
    int off = 0;
    ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
  }
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      ::listen(fd.get(), static_cast<int>(net_.receive_streams()) + 16) != 0) {
    return absl::InternalError(absl::StrFormat(
        "phase %s: cannot listen on %s of host %s: %s", spec_.phase_id(),
        interface_address_.empty() ? "any address" : interface_address_, LocalHostName(),
        ErrnoText(errno)));
  }
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof(bound);
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &bound_len);
  listen_port_ = ntohs(bound.ss_family == AF_INET6
                           ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                           : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  listener_ = std::move(fd);
  return absl::OkStatus();
}

bool NetWorkload::Connect(const TaskContext& task, const v1::NetPeer& peer, UniqueFd* out) {
  v1::TaskResult* r = task.result;
  const std::string name = PeerName(peer);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = absl::StrFormat("%u", peer.port());
  if (int e = ::getaddrinfo(peer.host().c_str(), port.c_str(), &hints, &found); e != 0) {
    task.Fail({.message = absl::StrFormat("cannot resolve %s: %s", name, ::gai_strerror(e))});
    return false;
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> guard(found, ::freeaddrinfo);
  UniqueFd fd(::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) {
    task.Fail({.message = absl::StrFormat("socket for %s: %s", name, ErrnoText(errno))});
    return false;
  }
  if (!interface_address_.empty() && found->ai_family == AF_INET) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    ::inet_pton(AF_INET, interface_address_.c_str(), &local.sin_addr);
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
      task.Fail({.message = absl::StrFormat("cannot send from %s (interface %s): %s",
                                            interface_address_, net_.interface(),
                                            ErrnoText(errno))});
      return false;
    }
  }
  const int64_t deadline = MonotonicNs() + kQuietLimitNs;
  r->set_open_start_unix_ns(RealtimeNs());
  int rc = ::connect(fd.get(), found->ai_addr, found->ai_addrlen);
  if (rc != 0 && errno == EINPROGRESS && WaitReady(fd.get(), POLLOUT, &task, deadline)) {
    int err = 0;
    socklen_t elen = sizeof(err);
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &elen);
    errno = err;
    rc = err == 0 ? 0 : -1;
  }
  if (rc != 0) {
    task.Fail({.message = absl::StrFormat("cannot connect to %s: %s", name, ErrnoText(errno))});
    return false;
  }
  BlockWithTimeouts(fd.get());
  unsigned char hello[kHelloBytes];
  const uint32_t version = htobe32(kProtocolVersion), rank = htobe32(task.rank);
  std::memcpy(hello, kHelloMagic, 4);
  std::memcpy(hello + 4, &version, 4);
  std::memcpy(hello + 8, &rank, 4);
  const std::string proof = NetStreamProof(net_.token(), spec_.phase_id(), task.rank);
  std::memcpy(hello + 12, proof.data(), kProofBytes);
  if (!SendBytes(fd.get(), hello, sizeof(hello), &task, deadline)) {
    task.Fail({.message = absl::StrFormat("hello to %s: %s", name, ErrnoText(errno))});
    return false;
  }
  r->set_open_stop_unix_ns(RealtimeNs());
  *out = std::move(fd);
  return true;
}

void NetWorkload::Send(const TaskContext& task) {
  const v1::NetPeer& peer = peers_.at(task.index / net_.streams_per_peer());
  const std::string name = PeerName(peer);
  v1::TaskResult* r = task.result;
  v1::NetResult* nr = r->mutable_net();
  nr->set_peer(peer.agent());
  UniqueFd fd;
  if (!Connect(task, peer, &fd)) return;
  const std::vector<unsigned char>& payload = payloads_[task.index];
  unsigned char header[kFrameHeaderBytes];
  EncodeHeader(kData, payload.size(), header);
  auto fail = [&](const char* what) {
    task.Fail({.message = absl::StrFormat("%s %s after %u bytes: %s", what, name,
                                          task.counters->bytes.load(), ErrnoText(errno))});
  };
  const int64_t start_mono = MonotonicNs();
  const int64_t end_mono = start_mono + static_cast<int64_t>(net_.duration_ms()) * 1'000'000;
  const int64_t quiet_deadline = end_mono + kQuietLimitNs;
  r->set_rdwr_start_unix_ns(RealtimeNs());
  r->set_first_io_unix_ns(r->rdwr_start_unix_ns());
  uint64_t sent = 0;
  bool first = true;
  while (MonotonicNs() < end_mono && !task.Aborted()) {
    iovec iov[2] = {{header, sizeof(header)},
                    {const_cast<unsigned char*>(payload.data()), payload.size()}};  // sendmsg only reads
    if (first) task.FirstOpIssuing();
    if (!SendAll(fd.get(), iov, 2, &task, quiet_deadline)) return fail("send to");
    if (first) task.FirstOpReturned();
    first = false;
    sent += payload.size();
    task.counters->bytes.store(sent, std::memory_order_relaxed);
    task.counters->ops.fetch_add(1, std::memory_order_relaxed);
  }
  if (task.Aborted()) return;
  unsigned char end[kFrameHeaderBytes];
  EncodeHeader(kEnd, 0, end);
  uint64_t counted_be = 0;
  if (!SendBytes(fd.get(), end, sizeof(end), &task, quiet_deadline) ||
      !RecvAll(fd.get(), &counted_be, sizeof(counted_be), &task, quiet_deadline)) {
    return fail("end of data to");
  }
  r->set_rdwr_stop_unix_ns(RealtimeNs());
  const uint64_t counted = be64toh(counted_be);
  r->set_bytes(sent);
  r->set_ops(task.counters->ops.load());
  nr->set_peer_counted_bytes(counted);
  if (counted != sent) {
    task.Fail({.message = absl::StrFormat("%s counted %u bytes of the %u this stream sent", name,
                                          counted, sent)});
    return;
  }
  // Round trips on the quiet connection.
  int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  std::vector<unsigned char> ping(kFrameHeaderBytes + net_.ping_bytes(), 0x5a);
  std::vector<unsigned char> pong(ping.size());
  EncodeHeader(kPing, net_.ping_bytes(), ping.data());
  for (uint32_t i = 0; i < net_.ping_count() && !task.Aborted(); ++i) {
    const int64_t t0 = MonotonicNs();
    if (!SendBytes(fd.get(), ping.data(), ping.size(), &task, t0 + kQuietLimitNs) ||
        !RecvAll(fd.get(), pong.data(), pong.size(), &task, t0 + kQuietLimitNs)) {
      return fail("ping to");
    }
    task.latency->Record(static_cast<uint64_t>(MonotonicNs() - t0));
    nr->set_pings(i + 1);
  }
  ReadTcpInfo(fd.get(), nr);
  r->set_close_start_unix_ns(RealtimeNs());
  fd.Reset();
  r->set_close_stop_unix_ns(RealtimeNs());
}

bool NetWorkload::AcceptVerified(const TaskContext& task, UniqueFd* out, std::string* from) {
  const int64_t deadline =
      MonotonicNs() + static_cast<int64_t>(net_.duration_ms()) * 1'000'000 + kQuietLimitNs;
  while (true) {
    if (!WaitReady(listener_.get(), POLLIN, &task, deadline)) {
      if (errno != ECANCELED) {
        task.Fail({.message = absl::StrFormat(
                       "no stream arrived on port %u of %s within %u ms after the phase's "
                       "duration: a sending agent never connected (is a firewall between them?)",
                       listen_port_, LocalHostName(), kQuietLimitNs / 1'000'000)});
      }
      return false;
    }
    sockaddr_storage peer{};
    socklen_t len = sizeof(peer);
    UniqueFd fd(::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&peer), &len,
                    SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (fd.get() < 0) continue;  // another task took it, or it went away
    BlockWithTimeouts(fd.get());
    *from = Endpoint(peer);
    unsigned char hello[kHelloBytes];
    if (!RecvAll(fd.get(), hello, sizeof(hello), &task, MonotonicNs() + 10'000'000'000)) continue;
    uint32_t version, rank;
    std::memcpy(&version, hello + 4, 4);
    std::memcpy(&rank, hello + 8, 4);
    rank = be32toh(rank);
    const std::string proof = NetStreamProof(net_.token(), spec_.phase_id(), rank);
    const bool valid = std::memcmp(hello, kHelloMagic, 4) == 0 &&
                       be32toh(version) == kProtocolVersion &&
                       CRYPTO_memcmp(hello + 12, proof.data(), kProofBytes) == 0;
    if (!valid) continue;  // not one of the phase's streams: closed unread
    {
      absl::MutexLock lock(&mu_);
      if (!ranks_seen_.insert(rank).second) continue;  // a replayed hello
    }
    task.result->mutable_net()->set_peer(*from);
    *out = std::move(fd);
    return true;
  }
}

void NetWorkload::Receive(const TaskContext& task) {
  v1::TaskResult* r = task.result;
  UniqueFd fd;
  std::string from;
  r->set_open_start_unix_ns(RealtimeNs());
  if (!AcceptVerified(task, &fd, &from)) return;
  r->set_open_stop_unix_ns(RealtimeNs());
  ReceiveFrames(task, fd.get(), from);
  r->set_close_start_unix_ns(RealtimeNs());
  fd.Reset();
  r->set_close_stop_unix_ns(RealtimeNs());
}

void NetWorkload::ReceiveFrames(const TaskContext& task, int fd, const std::string& from) {
  v1::TaskResult* r = task.result;
  std::vector<unsigned char> buffer(std::max<uint64_t>(net_.message_bytes(), kFrameHeaderBytes + net_.ping_bytes()));
  uint64_t counted = 0;
  bool first = true;
  auto fail = [&](const char* what) {
    task.Fail({.message = absl::StrFormat("%s the stream from %s after %u bytes: %s", what, from,
                                          counted, ErrnoText(errno))});
  };
  while (true) {
    const int64_t deadline = MonotonicNs() + kQuietLimitNs;
    unsigned char h[kFrameHeaderBytes];
    // The start gate (more tasks than cores) waits for every task's first
    // operation: a receiver's is its first read.
    if (first) task.FirstOpIssuing();
    if (!RecvAll(fd, h, sizeof(h), &task, deadline)) return fail("receiving from");
    if (first) task.FirstOpReturned();
    const FrameHeader f = DecodeHeader(h);
    if (first) {
      r->set_rdwr_start_unix_ns(RealtimeNs());
      r->set_first_io_unix_ns(r->rdwr_start_unix_ns());
      first = false;
    }
    if (f.type == kEnd) {
      r->set_rdwr_stop_unix_ns(RealtimeNs());
      r->set_bytes(counted);
      r->set_ops(task.counters->ops.load());
      const uint64_t be = htobe64(counted);
      if (!SendBytes(fd, &be, sizeof(be), &task, deadline)) return fail("answering");
      break;
    }
    if ((f.type != kData && f.type != kPing) || f.length > buffer.size()) {
      errno = EPROTO;
      return fail("a bad frame on");
    }
    if (!RecvAll(fd, buffer.data(), f.length, &task, deadline)) return fail("receiving from");
    if (f.type == kData) {
      counted += f.length;
      task.counters->bytes.store(counted, std::memory_order_relaxed);
      task.counters->ops.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // The sender's round trips, echoed until it closes.
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  while (!task.Aborted()) {
    const int64_t deadline = MonotonicNs() + kQuietLimitNs;
    unsigned char h[kFrameHeaderBytes];
    if (!RecvAll(fd, h, sizeof(h), &task, deadline)) {
      if (errno == 0) return;  // closed: done
      return fail("pings on");
    }
    const FrameHeader f = DecodeHeader(h);
    if (f.type != kPing || f.length > net_.ping_bytes()) {
      errno = EPROTO;
      return fail("a bad ping on");
    }
    // The echo in one segment: header and payload in one call, without Nagle
    // holding the second part for the delayed ACK of the first (40 ms).
    iovec echo[2] = {{h, sizeof(h)}, {buffer.data(), f.length}};
    if (!RecvAll(fd, buffer.data(), f.length, &task, deadline) ||
        !SendAll(fd, echo, 2, &task, deadline)) {
      return fail("pings on");
    }
  }
}

void NetWorkload::ReadTcpInfo(int fd, v1::NetResult* r) const {
  tcp_info info{};
  socklen_t len = sizeof(info);
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return;
  r->set_retransmits(info.tcpi_total_retrans);
  r->set_rtt_us(info.tcpi_rtt);
  r->set_rtt_var_us(info.tcpi_rttvar);
  r->set_snd_cwnd(info.tcpi_snd_cwnd);
}

}  // namespace

std::unique_ptr<Workload> MakeNetWorkload(const v1::PhaseSpec& spec,
                                          const WorkloadOptions& options) {
  return std::make_unique<NetWorkload>(spec, options);
}

std::string NetStreamProof(const std::string& token, const std::string& phase_id, uint32_t rank) {
  std::string message = phase_id;
  message.push_back('\0');
  const uint32_t be = htobe32(rank);
  message.append(reinterpret_cast<const char*>(&be), 4);
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int out_len = 0;
  ::HMAC(EVP_sha256(), token.data(), static_cast<int>(token.size()),
         reinterpret_cast<const unsigned char*>(message.data()), message.size(), out, &out_len);
  return std::string(reinterpret_cast<const char*>(out), out_len);
}

absl::StatusOr<std::string> InterfaceAddress(const std::string& name) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) {
    return absl::InternalError(absl::StrFormat("getifaddrs: %s", std::strerror(errno)));
  }
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> guard(list, ::freeifaddrs);
  std::set<std::string> names;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_name == nullptr) continue;
    names.insert(i->ifa_name);
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || name != i->ifa_name) continue;
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof(text));
    return std::string(text);
  }
  return absl::NotFoundError(absl::StrFormat(
      "host %s has no interface %s with an IPv4 address; its interfaces: %s (fix the phase's "
      "interface key)",
      LocalHostName(), name, absl::StrJoin(names, ", ")));
}

}  // namespace lockstep
