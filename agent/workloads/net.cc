// The NET workload (agent/workloads/net.h): its checks, its listening socket
// and its sending and receiving tasks. A stream's wire format and socket
// calls are agent/workloads/net_streams.h; the receivers' shared acceptor,
// which reads and checks the hellos, agent/workloads/net_acceptor.h.
#include "agent/workloads/net.h"

#include <arpa/inet.h>
#include <endian.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/workloads/net_acceptor.h"
#include "agent/workloads/net_streams.h"
#include "common/checked_math.h"
#include "common/clock.h"
#include "common/limits.h"
#include "common/net.h"
#include "common/unique_fd.h"

namespace lockstep {
namespace {

// How long a receiving task waits for its stream, and any stream for its
// next bytes, beyond the phase's duration: a sender that never comes or
// stops midway is then named.
constexpr int64_t kQuietLimitNs = 30'000'000'000;

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
    if (net_.message_bytes() < kNetFrameHeaderBytes || net_.message_bytes() > kMaxNetMessageBytes) {
      return SpecError(spec_, absl::StrFormat("message_bytes %u is outside %u..%u",
                                              net_.message_bytes(), kNetFrameHeaderBytes,
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
    if (net_.token().size() != kNetProofBytes) {
      return SpecError(spec_, absl::StrFormat("the phase token has %u bytes, not %u",
                                              net_.token().size(), kNetProofBytes));
    }
    return absl::OkStatus();
  }

  std::string TaskPath(const std::string& /*dir*/, uint32_t /*rank*/) const override {
    return "";
  }

  absl::Status Prepare(const BeneathDir& /*dir*/,
                       std::span<v1::TaskResult* const> results) override;
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
  // The port is the phase's only: closed as soon as its tasks are done,
  // with every connection that was not taken.
  void Finish() override { acceptor_.reset(); }

  void RunTask(const TaskContext& task) override {
    if (task.index < net_.send_peers() * net_.streams_per_peer()) {
      Send(task);
    } else {
      Receive(task);
    }
  }

  absl::StatusOr<uint32_t> RemoveFiles(const BeneathDir& /*dir*/) const override { return 0u; }
  bool CreatesFiles() const override { return false; }
  // A sender's payload (message - header) and its ping and pong frames
  // (header + ping each); a receiver's frame buffer, max(message, header + ping).
  uint64_t AgentBufferBytes() const override;
  std::string AgentBufferKeys() const override { return "streams, message_size or ping_size"; }

 private:
  void Send(const TaskContext& task);
  void Receive(const TaskContext& task);
  // Connects task's stream to `peer` and sends the hello; false after task.Fail.
  bool Connect(const TaskContext& task, const v1::NetPeer& peer, UniqueFd* out);
  // Takes a stream that proved the token from the acceptor; false after task.Fail.
  bool AcceptVerified(const TaskContext& task, UniqueFd* out, std::string* from);
  // The rank a hello names when it proves the phase's token (NetAcceptor::HelloCheck).
  std::optional<uint32_t> CheckHello(const unsigned char* hello) const;
  void ReceiveFrames(const TaskContext& task, int fd, const std::string& from);
  std::string PeerName(const v1::NetPeer& p) const {
    return absl::StrFormat("agent %s (%s port %u)", p.agent(), p.host(), p.port());
  }

  const v1::PhaseSpec spec_;
  const v1::NetSpec net_;
  const WorkloadOptions options_;
  std::string interface_address_;  // of net_.interface(), "" when none named
  // Receivers: the phase's listening socket and the connections not yet
  // taken; every receiving task takes its stream here (net_acceptor.h).
  std::unique_ptr<NetAcceptor> acceptor_;
  uint32_t listen_port_ = 0;
  std::vector<v1::NetPeer> peers_;
  std::vector<std::vector<unsigned char>> payloads_;  // by sending task
};

uint64_t NetWorkload::AgentBufferBytes() const {
  // Senders and receivers as Validate has them (together the tasks): a spec
  // whose peers and streams outnumber its tasks is weighed by its tasks
  // here, then refused by Validate before anything is allocated.
  const uint64_t tasks = spec_.tasks();
  const uint64_t senders =
      std::min(SaturatingMul(net_.send_peers(), net_.streams_per_peer()), tasks);
  const uint64_t receivers = std::min<uint64_t>(net_.receive_streams(), tasks - senders);
  const uint64_t message = net_.message_bytes();
  const uint64_t ping_frame = SaturatingAdd(kNetFrameHeaderBytes, net_.ping_bytes());
  const uint64_t payload = message > kNetFrameHeaderBytes ? message - kNetFrameHeaderBytes : 0;
  const uint64_t per_sender = SaturatingAdd(payload, SaturatingMul(2, ping_frame));
  const uint64_t per_receiver = std::max(message, ping_frame);
  return SaturatingAdd(SaturatingMul(senders, per_sender), SaturatingMul(receivers, per_receiver));
}

absl::Status NetWorkload::Prepare(const BeneathDir& /*dir*/,
                                  std::span<v1::TaskResult* const> results) {
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
  payloads_.assign(senders,
                   std::vector<unsigned char>(net_.message_bytes() - kNetFrameHeaderBytes));
  for (size_t t = 0; t < senders; ++t) {
    for (size_t i = 0; i < payloads_[t].size(); ++i) {
      payloads_[t][i] = static_cast<unsigned char>(i * 131 + t);
    }
  }
  if (net_.receive_streams() == 0) return absl::OkStatus();
  // One socket for the phase: the interface's address, else any (IPv6 and IPv4).
  absl::StatusOr<UniqueFd> listener = ListenForNetStreams(
      interface_address_, static_cast<int>(net_.receive_streams()) + 16, &listen_port_);
  if (!listener.ok()) {
    return absl::InternalError(
        absl::StrFormat("phase %s: %s", spec_.phase_id(), listener.status().message()));
  }
  // Room for every receiving stream to be pending at once, and for strangers.
  acceptor_ = std::make_unique<NetAcceptor>(
      std::move(*listener), [this](const unsigned char* hello) { return CheckHello(hello); },
      net_.receive_streams() + kNetPendingSpare);
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
    task.Fail({.message = absl::StrFormat("socket for %s: %s", name, NetErrnoText(errno))});
    return false;
  }
  if (!interface_address_.empty() && found->ai_family == AF_INET) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    ::inet_pton(AF_INET, interface_address_.c_str(), &local.sin_addr);
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
      task.Fail({.message = absl::StrFormat("cannot send from %s (interface %s): %s",
                                            interface_address_, net_.interface(),
                                            NetErrnoText(errno))});
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
    task.Fail({.message = absl::StrFormat("cannot connect to %s: %s", name, NetErrnoText(errno))});
    return false;
  }
  BlockWithTimeouts(fd.get());
  unsigned char hello[kNetHelloBytes];
  const uint32_t version = htobe32(kNetProtocolVersion), rank = htobe32(task.rank);
  std::memcpy(hello, kNetHelloMagic, 4);
  std::memcpy(hello + 4, &version, 4);
  std::memcpy(hello + 8, &rank, 4);
  const std::string proof = NetStreamProof(net_.token(), spec_.phase_id(), task.rank);
  std::memcpy(hello + 12, proof.data(), kNetProofBytes);
  if (!SendBytes(fd.get(), hello, sizeof(hello), &task, deadline)) {
    task.Fail({.message = absl::StrFormat("hello to %s: %s", name, NetErrnoText(errno))});
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
  unsigned char header[kNetFrameHeaderBytes];
  EncodeNetFrameHeader(kNetData, payload.size(), header);
  auto fail = [&](const char* what) {
    task.Fail({.message = absl::StrFormat("%s %s after %u bytes: %s", what, name,
                                          task.counters->bytes.load(), NetErrnoText(errno))});
  };
  const int64_t start_mono = MonotonicNs();
  const int64_t end_mono = start_mono + static_cast<int64_t>(net_.duration_ms()) * 1'000'000;
  const int64_t quiet_deadline = end_mono + kQuietLimitNs;
  r->set_rdwr_start_unix_ns(RealtimeNs());
  r->set_first_io_unix_ns(r->rdwr_start_unix_ns());
  uint64_t sent = 0;
  bool first = true;
  while (MonotonicNs() < end_mono && !task.Aborted()) {
    iovec iov[2] = {{header, sizeof(header)},  // sendmsg only reads the payload
                    {const_cast<unsigned char*>(payload.data()), payload.size()}};
    if (first) task.FirstOpIssuing();
    if (!SendAll(fd.get(), iov, 2, &task, quiet_deadline)) return fail("send to");
    if (first) task.FirstOpReturned();
    first = false;
    sent += payload.size();
    task.counters->bytes.store(sent, std::memory_order_relaxed);
    task.counters->ops.fetch_add(1, std::memory_order_relaxed);
  }
  if (task.Aborted()) return;
  unsigned char end[kNetFrameHeaderBytes];
  EncodeNetFrameHeader(kNetEnd, 0, end);
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
  std::vector<unsigned char> ping(kNetFrameHeaderBytes + net_.ping_bytes(), 0x5a);
  std::vector<unsigned char> pong(ping.size());
  EncodeNetFrameHeader(kNetPing, net_.ping_bytes(), ping.data());
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
  absl::StatusOr<NetStream> stream = acceptor_->Take(&task, deadline);
  if (!stream.ok()) {
    if (!absl::IsCancelled(stream.status())) {
      task.Fail({.message = absl::StrFormat(
                     "no stream arrived on port %u of %s within %u ms after the phase's "
                     "duration: a sending agent never connected (is a firewall between them?)",
                     listen_port_, LocalHostName(), kQuietLimitNs / 1'000'000)});
    }
    return false;
  }
  *out = std::move(stream->fd);
  *from = std::move(stream->from);
  task.result->mutable_net()->set_peer(*from);
  return true;
}

std::optional<uint32_t> NetWorkload::CheckHello(const unsigned char* hello) const {
  uint32_t version, rank;
  std::memcpy(&version, hello + 4, 4);
  std::memcpy(&rank, hello + 8, 4);
  rank = be32toh(rank);
  const std::string proof = NetStreamProof(net_.token(), spec_.phase_id(), rank);
  const bool valid = std::memcmp(hello, kNetHelloMagic, 4) == 0 &&
                     be32toh(version) == kNetProtocolVersion &&
                     CRYPTO_memcmp(hello + 12, proof.data(), kNetProofBytes) == 0;
  if (!valid) return std::nullopt;
  return rank;
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
  std::vector<unsigned char> buffer(
      std::max<uint64_t>(net_.message_bytes(), kNetFrameHeaderBytes + net_.ping_bytes()));
  uint64_t counted = 0;
  bool first = true;
  auto fail = [&](const char* what) {
    task.Fail({.message = absl::StrFormat("%s the stream from %s after %u bytes: %s", what, from,
                                          counted, NetErrnoText(errno))});
  };
  while (true) {
    const int64_t deadline = MonotonicNs() + kQuietLimitNs;
    unsigned char h[kNetFrameHeaderBytes];
    // The start gate (more tasks than cores) waits for every task's first
    // operation: a receiver's is its first read.
    if (first) task.FirstOpIssuing();
    if (!RecvAll(fd, h, sizeof(h), &task, deadline)) return fail("receiving from");
    if (first) task.FirstOpReturned();
    const NetFrameHeader f = DecodeNetFrameHeader(h);
    if (first) {
      r->set_rdwr_start_unix_ns(RealtimeNs());
      r->set_first_io_unix_ns(r->rdwr_start_unix_ns());
      first = false;
    }
    if (f.type == kNetEnd) {
      r->set_rdwr_stop_unix_ns(RealtimeNs());
      r->set_bytes(counted);
      r->set_ops(task.counters->ops.load());
      const uint64_t be = htobe64(counted);
      if (!SendBytes(fd, &be, sizeof(be), &task, deadline)) return fail("answering");
      break;
    }
    if ((f.type != kNetData && f.type != kNetPing) || f.length > buffer.size()) {
      errno = EPROTO;
      return fail("a bad frame on");
    }
    if (!RecvAll(fd, buffer.data(), f.length, &task, deadline)) return fail("receiving from");
    if (f.type == kNetData) {
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
    unsigned char h[kNetFrameHeaderBytes];
    if (!RecvAll(fd, h, sizeof(h), &task, deadline)) {
      if (errno == 0) return;  // closed: done
      return fail("pings on");
    }
    const NetFrameHeader f = DecodeNetFrameHeader(h);
    if (f.type != kNetPing || f.length > net_.ping_bytes()) {
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
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || name != i->ifa_name) {
      continue;
    }
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text,
                sizeof(text));
    return std::string(text);
  }
  return absl::NotFoundError(absl::StrFormat(
      "host %s has no interface %s with an IPv4 address; its interfaces: %s (fix the phase's "
      "interface key)",
      LocalHostName(), name, absl::StrJoin(names, ", ")));
}

}  // namespace lockstep
