// The NET and BACKEND workloads in-process (agent/workloads/net.h,
// backend.h): real sockets on loopback and a real directory. A stream that
// does not prove the phase's token is closed unread while the real one is
// taken; the scratch files of a backend phase are gone after it; the
// refusals name the host, the interface or the OSDs.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "agent/phase_runner.h"
#include "agent/workloads/net.h"
#include "agent/workloads/workload.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "unit/run_phase.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;

v1::PhaseSpec NetSpec(uint32_t send_peers, uint32_t receive_streams, uint32_t first_rank,
                      const std::string& token) {
  return NetPhaseSpec(send_peers, receive_streams, first_rank, 8, token);
}

using Started = StartedPhase;

TEST(NetWorkload, StreamsAreCountedOnBothEndsAndAStrangerIsClosedUnread) {
  TempDir tmp;
  const std::string token(32, 'k');
  auto receiver = PhaseRunner::Prepare(NetSpec(0, 2, 2, token), tmp.path());
  ASSERT_OK(receiver);
  v1::PrepareReply reply;
  (*receiver)->DescribePrepared(&reply);
  ASSERT_GT(reply.net_port(), 0u);
  auto sender = PhaseRunner::Prepare(NetSpec(1, 0, 0, token), tmp.path());
  ASSERT_OK(sender);
  v1::NetPeer peer;
  peer.set_host("127.0.0.1");
  peer.set_port(reply.net_port());
  peer.set_agent("receiver:7070");
  ASSERT_OK((*sender)->SetPeers({peer}));

  // A stranger connects first with a wrong proof: it must not take a stream.
  const int stranger = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(reply.net_port()));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(stranger, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0);
  std::string hello = "LSNT";
  hello += std::string("\0\0\0\1\0\0\0\0", 8) + std::string(32, 'x');
  ASSERT_EQ(::write(stranger, hello.data(), hello.size()), static_cast<ssize_t>(hello.size()));

  Started rx(receiver->get());
  Started tx(sender->get());
  const v1::PhaseResult sent = tx.Wait(), received = rx.Wait();
  ASSERT_TRUE(sent.ok()) << sent.error();
  ASSERT_TRUE(received.ok()) << received.error();
  uint64_t sent_bytes = 0, received_bytes = 0;
  for (const v1::TaskResult& t : sent.tasks()) {
    EXPECT_FALSE(t.net().receiver());
    EXPECT_EQ(t.net().peer(), "receiver:7070");
    EXPECT_EQ(t.net().peer_counted_bytes(), t.bytes());
    EXPECT_EQ(t.net().pings(), 5u);
    EXPECT_GT(t.net().rtt_us(), 0u);
    EXPECT_GE(t.rdwr_stop_unix_ns() - t.rdwr_start_unix_ns(), 300'000'000);
    sent_bytes += t.bytes();
  }
  for (const v1::TaskResult& t : received.tasks()) {
    EXPECT_TRUE(t.net().receiver());
    EXPECT_THAT(t.net().peer(), HasSubstr("127.0.0.1:"));
    received_bytes += t.bytes();
  }
  EXPECT_GT(sent_bytes, 0u);
  EXPECT_EQ(sent_bytes, received_bytes);
  // The stranger was closed without an answer.
  char byte;
  EXPECT_EQ(::read(stranger, &byte, 1), 0);
  ::close(stranger);
}

TEST(NetWorkload, AProofIsBoundToThePhaseAndTheRank) {
  const std::string token(32, 't');
  const std::string proof = NetStreamProof(token, "t0/r0/net", 3);
  EXPECT_EQ(proof.size(), 32u);
  EXPECT_EQ(proof, NetStreamProof(token, "t0/r0/net", 3));
  EXPECT_NE(proof, NetStreamProof(token, "t0/r1/net", 3));
  EXPECT_NE(proof, NetStreamProof(token, "t0/r0/net", 4));
  EXPECT_NE(proof, NetStreamProof(std::string(32, 'u'), "t0/r0/net", 3));
}

TEST(NetWorkload, RefusalsNameTheInterfaceTheHostAndTheCounts) {
  TempDir tmp;
  const std::string token(32, 'k');
  v1::PhaseSpec s = NetSpec(0, 1, 0, token);
  s.mutable_net()->set_interface("nosuch0");
  auto bad_interface = PhaseRunner::Prepare(s, tmp.path());
  ASSERT_FALSE(bad_interface.ok());
  EXPECT_THAT(bad_interface.status().message(), HasSubstr("has no interface nosuch0"));
  EXPECT_THAT(bad_interface.status().message(), HasSubstr("lo"));
  EXPECT_OK(InterfaceAddress("lo").status());
  EXPECT_EQ(*InterfaceAddress("lo"), "127.0.0.1");

  s = NetSpec(1, 0, 0, "short");
  EXPECT_THAT(PhaseRunner::Prepare(s, tmp.path()).status().message(),
              HasSubstr("the phase token has 5 bytes, not 32"));
  s = NetSpec(1, 0, 0, token);
  s.set_tasks(3);
  EXPECT_THAT(PhaseRunner::Prepare(s, tmp.path()).status().message(),
              HasSubstr("3 tasks, but 1 peers x 2 streams to send and 0 to receive"));
  auto sender = PhaseRunner::Prepare(NetSpec(1, 0, 0, token), tmp.path());
  ASSERT_OK(sender);
  EXPECT_THAT((*sender)->SetPeers({}).message(), HasSubstr("0 peers to stream to"));
}

TEST(NetWorkload, APeerThatIsGoneIsNamed) {
  TempDir tmp;
  // A port nobody listens on: bind one, note it, close it.
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  socklen_t len = sizeof(a);
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  auto sender = PhaseRunner::Prepare(NetSpec(1, 0, 0, std::string(32, 'k')), tmp.path());
  ASSERT_OK(sender);
  v1::NetPeer peer;
  peer.set_host("127.0.0.1");
  peer.set_port(ntohs(a.sin_port));
  peer.set_agent("gone:7070");
  ASSERT_OK((*sender)->SetPeers({peer}));
  const v1::PhaseResult r = RunNow(sender->get());
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r.error(), HasSubstr("cannot connect to agent gone:7070 (127.0.0.1 port"));
}

TEST(BackendWorkload, WritesAndReadsScratchFilesWithODirectAndLeavesNone) {
  TempDir tmp;
  const v1::PhaseResult r = RunSpec(BackendPhaseSpec("file", 2), tmp.path());
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r.tasks_size(), 2);
  for (const v1::TaskResult& t : r.tasks()) {
    EXPECT_EQ(t.backend().method(), "file");
    EXPECT_EQ(t.backend().write_bytes(), 4u << 20);
    EXPECT_EQ(t.backend().read_bytes(), 4u << 20);
    EXPECT_GT(t.backend().write_ns(), 0);
    EXPECT_GT(t.backend().read_ns(), 0);
    EXPECT_EQ(t.bytes(), 4u << 20);
    EXPECT_EQ(t.readback_bytes(), 4u << 20);
    EXPECT_THAT(t.backend().target(), HasSubstr(tmp.path() + "/scratch."));
  }
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
}

TEST(BackendWorkload, RefusedWithoutOsdsOrWithABadBlock) {
  TempDir tmp;
  auto no_osd = PhaseRunner::Prepare(BackendPhaseSpec("osd_bench", 1), tmp.path());
  ASSERT_FALSE(no_osd.ok());
  EXPECT_THAT(no_osd.status().message(), HasSubstr("serves no OSD"));
  v1::PhaseSpec s = BackendPhaseSpec("file", 1);
  s.mutable_backend()->set_block_bytes(1000);
  EXPECT_THAT(PhaseRunner::Prepare(s, tmp.path()).status().message(),
              HasSubstr("block_bytes 1000 must be a multiple of 4096"));
  s = BackendPhaseSpec("dd", 1);
  EXPECT_THAT(PhaseRunner::Prepare(s, tmp.path()).status().message(),
              HasSubstr("backend method \"dd\""));
}

}  // namespace
}  // namespace lockstep::testing
