// The NET receivers' shared acceptor (agent/workloads/net_acceptor.h), in
// the agent's real phase runner and on its own, with real sockets on
// loopback: connections that never prove themselves (silent, garbage, a
// wrong proof, a flood) neither hold a receiving task nor count, while a
// real stream is taken at once, also when its hello comes in two pieces.
#include "agent/workloads/net_acceptor.h"

#include <arpa/inet.h>
#include <endian.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "agent/phase_runner.h"
#include "agent/workloads/net.h"
#include "agent/workloads/net_streams.h"
#include "assert_eventually.h"
#include "common/clock.h"
#include "common/unique_fd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "unit/run_phase.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kPhase[] = "t0/r0/net";

// A NET phase of this agent: `send_peers` peers x 2 streams to send,
// `receive_streams` to receive (ranks 2.. when it only receives).
v1::PhaseSpec NetSpec(uint32_t send_peers, uint32_t receive_streams, const std::string& token) {
  return NetPhaseSpec(send_peers, receive_streams, send_peers > 0 ? 0 : 2, 4, token);
}

using Started = StartedPhase;

// A blocking connection to 127.0.0.1:port; -1 on failure.
UniqueFd ConnectTo(uint32_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) return UniqueFd();
  return fd;
}

// How the other end names `fd`'s side: "127.0.0.1:PORT".
std::string LocalEndpoint(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return NetEndpoint(a);
}

// Whether the other end closed `fd` (end of stream or a reset); never blocks.
bool ClosedByPeer(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  char byte;
  const ssize_t n = ::recv(fd, &byte, 1, MSG_DONTWAIT | MSG_PEEK);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

std::string Hello(const std::string& token, uint32_t rank,
                  std::optional<std::string> proof = std::nullopt) {
  std::string h(kNetHelloMagic, 4);
  const uint32_t version = htobe32(kNetProtocolVersion), rank_be = htobe32(rank);
  h.append(reinterpret_cast<const char*>(&version), 4);
  h.append(reinterpret_cast<const char*>(&rank_be), 4);
  h += proof.value_or(NetStreamProof(token, kPhase, rank));
  return h;
}

bool SendText(int fd, const std::string& bytes) {
  return ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
         static_cast<ssize_t>(bytes.size());
}

// A receiving phase prepared on loopback and its port.
struct Receiver {
  explicit Receiver(const TempDir& tmp, uint32_t streams, const std::string& token) {
    auto r = PhaseRunner::Prepare(NetSpec(0, streams, token), tmp.path());
    EXPECT_OK(r);
    if (!r.ok()) return;
    runner = std::move(*r);
    v1::PrepareReply reply;
    runner->DescribePrepared(&reply);
    port = reply.net_port();
  }
  std::unique_ptr<PhaseRunner> runner;
  uint32_t port = 0;
};

// A sending phase of this agent (2 streams) to `port` on loopback.
std::unique_ptr<PhaseRunner> Sender(const TempDir& tmp, uint32_t port, const std::string& token) {
  auto r = PhaseRunner::Prepare(NetSpec(1, 0, token), tmp.path());
  EXPECT_OK(r);
  if (!r.ok()) return nullptr;
  v1::NetPeer peer;
  peer.set_host("127.0.0.1");
  peer.set_port(port);
  peer.set_agent("receiver:7070");
  EXPECT_OK((*r)->SetPeers({peer}));
  return std::move(*r);
}

// Both ends ended well and the receivers counted what was sent, from
// streams none of which came from `strangers`.
void ExpectMeasured(const v1::PhaseResult& sent, const v1::PhaseResult& received,
                    const std::vector<std::string>& strangers) {
  ASSERT_TRUE(sent.ok()) << sent.error();
  ASSERT_TRUE(received.ok()) << received.error();
  uint64_t sent_bytes = 0, received_bytes = 0;
  for (const v1::TaskResult& t : sent.tasks()) sent_bytes += t.bytes();
  for (const v1::TaskResult& t : received.tasks()) {
    EXPECT_TRUE(t.net().receiver());
    EXPECT_THAT(t.net().peer(), HasSubstr("127.0.0.1:"));
    for (const std::string& s : strangers) EXPECT_NE(t.net().peer(), s);
    received_bytes += t.bytes();
  }
  EXPECT_GT(sent_bytes, 0u);
  EXPECT_EQ(sent_bytes, received_bytes);
}

TEST(NetAcceptance, SilentConnectionsQueuedFirstHoldNoReceiver) {
  TempDir tmp;
  const std::string token(32, 'k');
  Receiver rx(tmp, 2, token);
  ASSERT_GT(rx.port, 0u);
  // Four connections that never send a byte, in the listener's queue before
  // the phase starts and before the real streams: before the shared
  // acceptor, each held a receiving task 10 s (two rounds: 20 s).
  std::vector<UniqueFd> silent;
  std::vector<std::string> strangers;
  for (int i = 0; i < 4; ++i) {
    silent.push_back(ConnectTo(rx.port));
    ASSERT_GE(silent.back().get(), 0);
    strangers.push_back(LocalEndpoint(silent.back().get()));
  }
  auto tx = Sender(tmp, rx.port, token);
  ASSERT_NE(tx, nullptr);
  Started received_run(rx.runner.get());
  Started sent_run(tx.get());
  const v1::PhaseResult sent = sent_run.Wait(), received = received_run.Wait();
  ExpectMeasured(sent, received, strangers);
  ASSERT_EQ(received.tasks_size(), 2);
  for (const v1::TaskResult& t : received.tasks()) {
    // The stream's open: from the task's start to its verified stream. The
    // old code could not end it before a silent connection's 10 s.
    EXPECT_GT(t.open_stop_unix_ns(), 0);
    EXPECT_LT(t.open_stop_unix_ns() - t.open_start_unix_ns(), 3'000'000'000)
        << "a receiving task waited on a silent connection";
  }
  // Still silent, and within their hello window: closed with the phase's port.
  for (const UniqueFd& s : silent) {
    ASSERT_EVENTUALLY([&] { EXPECT_TRUE(ClosedByPeer(s.get())); });
  }
}

TEST(NetAcceptance, GarbageAndAWrongProofAreClosedAndDoNotCount) {
  TempDir tmp;
  const std::string token(32, 'k');
  Receiver rx(tmp, 2, token);
  ASSERT_GT(rx.port, 0u);
  Started received_run(rx.runner.get());
  UniqueFd garbage = ConnectTo(rx.port), wrong = ConnectTo(rx.port);
  ASSERT_GE(garbage.get(), 0);
  ASSERT_GE(wrong.get(), 0);
  const std::vector<std::string> strangers = {LocalEndpoint(garbage.get()),
                                              LocalEndpoint(wrong.get())};
  // 53 bytes that are no hello: refused once the first 44 are in.
  ASSERT_TRUE(SendText(garbage.get(), "GET / HTTP/1.1\r\nHost: receiver\r\nUser-Agent: x\r\n\r\n" +
                                          std::string(4, 'x')));
  // A hello for rank 0, the real sender's first stream, with a proof made
  // with another token: it must not take rank 0 away from the real stream.
  ASSERT_TRUE(SendText(wrong.get(), Hello(token, 0, NetStreamProof(std::string(32, 'x'),
                                                                     kPhase, 0))));
  // Closed while the receivers still wait (no sender yet), not at the end.
  ASSERT_EVENTUALLY_WITHIN(std::chrono::seconds(3), [&] {
    EXPECT_TRUE(ClosedByPeer(garbage.get()));
    EXPECT_TRUE(ClosedByPeer(wrong.get()));
  });
  auto tx = Sender(tmp, rx.port, token);
  ASSERT_NE(tx, nullptr);
  Started sent_run(tx.get());
  ExpectMeasured(sent_run.Wait(), received_run.Wait(), strangers);
}

TEST(NetAcceptance, AHelloInTwoPiecesVerifies) {
  TempDir tmp;
  const std::string token(32, 'k');
  Receiver rx(tmp, 1, token);
  ASSERT_GT(rx.port, 0u);
  Started received_run(rx.runner.get());
  // A fake sender of rank 7: its hello in two pieces 300 ms apart, then one
  // DATA frame of 1000 bytes and the END mark, answered with the count.
  UniqueFd peer = ConnectTo(rx.port);
  ASSERT_GE(peer.get(), 0);
  const std::string hello = Hello(token, 7);
  ASSERT_TRUE(SendText(peer.get(), hello.substr(0, 10)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // splits the hello
  ASSERT_TRUE(SendText(peer.get(), hello.substr(10)));
  unsigned char header[kNetFrameHeaderBytes];
  EncodeNetFrameHeader(kNetData, 1000, header);
  ASSERT_TRUE(SendText(peer.get(), std::string(reinterpret_cast<char*>(header), sizeof(header)) +
                                       std::string(1000, 'd')));
  EncodeNetFrameHeader(kNetEnd, 0, header);
  ASSERT_TRUE(SendText(peer.get(), std::string(reinterpret_cast<char*>(header), sizeof(header))));
  BlockWithTimeouts(peer.get());
  uint64_t counted_be = 0;
  ASSERT_TRUE(RecvAll(peer.get(), &counted_be, sizeof(counted_be), nullptr,
                      MonotonicNs() + 30'000'000'000));
  EXPECT_EQ(be64toh(counted_be), 1000u);
  const std::string from = LocalEndpoint(peer.get());
  peer.Reset();  // no pings: the receiver is done when the stream closes
  const v1::PhaseResult received = received_run.Wait();
  ASSERT_TRUE(received.ok()) << received.error();
  ASSERT_EQ(received.tasks_size(), 1);
  EXPECT_EQ(received.tasks(0).bytes(), 1000u);
  EXPECT_EQ(received.tasks(0).net().peer(), from);
}

// ---- The acceptor on its own ------------------------------------------------

// An acceptor on a loopback port (*port) that takes the hellos of kPhase
// under `token`.
std::unique_ptr<NetAcceptor> LoopbackAcceptor(const std::string& token, size_t max_pending,
                                              int64_t hello_window_ns, uint32_t* port) {
  absl::StatusOr<UniqueFd> listener = ListenForNetStreams("127.0.0.1", 16, port);
  EXPECT_OK(listener);
  if (!listener.ok()) return nullptr;
  return std::make_unique<NetAcceptor>(
      std::move(*listener),
      [token](const unsigned char* hello) -> std::optional<uint32_t> {
        uint32_t rank_be;
        std::memcpy(&rank_be, hello + 8, 4);
        const uint32_t rank = be32toh(rank_be);
        if (std::string(reinterpret_cast<const char*>(hello), kNetHelloBytes) !=
            Hello(token, rank)) {
          return std::nullopt;
        }
        return rank;
      },
      max_pending, hello_window_ns);
}

// Take on its own thread, from now until `deadline_s` seconds ahead.
class Taking {
 public:
  Taking(NetAcceptor* a, int deadline_s)
      : thread_([this, a, deadline_s] {
          result_ = a->Take(nullptr, MonotonicNs() + deadline_s * 1'000'000'000LL);
          done_.Notify();
        }) {}
  ~Taking() { thread_.join(); }
  const absl::StatusOr<NetStream>& Wait() {
    EXPECT_TRUE(done_.WaitForNotificationWithTimeout(absl::Seconds(30)));
    return result_;
  }

 private:
  absl::StatusOr<NetStream> result_ = absl::UnknownError("not yet");
  absl::Notification done_;
  std::thread thread_;
};

TEST(NetAcceptor, AFloodClosesTheOldestPendingAndAStreamIsStillTaken) {
  const std::string token(32, 't');
  uint32_t port = 0;
  auto acceptor = LoopbackAcceptor(token, 4, 60'000'000'000, &port);
  ASSERT_NE(acceptor, nullptr);
  Taking taking(acceptor.get(), 30);
  std::vector<UniqueFd> silent;
  for (uint64_t i = 1; i <= 6; ++i) {  // one at a time, so that they are accepted in order
    silent.push_back(ConnectTo(port));
    ASSERT_GE(silent.back().get(), 0);
    ASSERT_EVENTUALLY([&] { EXPECT_EQ(acceptor->Counts().accepted, i); });
  }
  // Four may pend: the two oldest went, the four newest wait (60 s window).
  ASSERT_EVENTUALLY([&] {
    EXPECT_TRUE(ClosedByPeer(silent[0].get()));
    EXPECT_TRUE(ClosedByPeer(silent[1].get()));
  });
  for (size_t i = 2; i < silent.size(); ++i) EXPECT_FALSE(ClosedByPeer(silent[i].get())) << i;
  EXPECT_EQ(acceptor->Counts().evicted, 2u);
  UniqueFd real = ConnectTo(port);
  ASSERT_TRUE(SendText(real.get(), Hello(token, 3)));
  const absl::StatusOr<NetStream>& taken = taking.Wait();
  ASSERT_OK(taken);
  EXPECT_EQ(taken->from, LocalEndpoint(real.get()));
  const NetAcceptCounts counts = acceptor->Counts();
  EXPECT_EQ(counts.accepted, 7u);
  EXPECT_EQ(counts.verified, 1u);
}

TEST(NetAcceptor, AnIncompleteHelloExpiresAndAReplayedRankIsRefused) {
  const std::string token(32, 't');
  uint32_t port = 0;
  auto acceptor = LoopbackAcceptor(token, 8, 300'000'000, &port);
  ASSERT_NE(acceptor, nullptr);
  UniqueFd first = ConnectTo(port);
  ASSERT_TRUE(SendText(first.get(), Hello(token, 5)));
  {
    Taking taking(acceptor.get(), 30);
    const absl::StatusOr<NetStream>& taken = taking.Wait();
    ASSERT_OK(taken);
    EXPECT_EQ(taken->from, LocalEndpoint(first.get()));
  }
  UniqueFd replay = ConnectTo(port), partial = ConnectTo(port);
  ASSERT_TRUE(SendText(replay.get(), Hello(token, 5)));  // rank 5 again
  ASSERT_TRUE(SendText(partial.get(), Hello(token, 6).substr(0, 20)));  // and no more
  Taking waiting(acceptor.get(), 3);  // a leader at work, until it gives up
  ASSERT_EVENTUALLY([&] {
    EXPECT_TRUE(ClosedByPeer(replay.get()));
    EXPECT_TRUE(ClosedByPeer(partial.get()));
  });
  NetAcceptCounts counts = acceptor->Counts();
  EXPECT_EQ(counts.refused, 1u);
  EXPECT_EQ(counts.expired, 1u);
  EXPECT_TRUE(absl::IsDeadlineExceeded(waiting.Wait().status()));
}

TEST(NetAcceptor, AnAbortedTaskStopsWaiting) {
  uint32_t port = 0;
  auto acceptor = LoopbackAcceptor(std::string(32, 't'), 4, 60'000'000'000, &port);
  ASSERT_NE(acceptor, nullptr);
  std::atomic<bool> abort{true};
  TaskContext task;
  task.abort = &abort;
  EXPECT_TRUE(absl::IsCancelled(acceptor->Take(&task, MonotonicNs() + 60'000'000'000).status()));
}

}  // namespace
}  // namespace lockstep::testing
