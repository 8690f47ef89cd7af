#include "agent/port_holder.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::lockstep::testing::LoopbackSocket;

TEST(PortHolder, FindsThisProcessListening) {
  LoopbackSocket s(/*listen=*/true);
  ASSERT_GT(s.port(), 0);
  auto holders = FindPortHolders(s.port());
  ASSERT_OK(holders);
  ASSERT_EQ(holders->size(), 1u);
  const PortHolder& h = (*holders)[0];
  EXPECT_EQ(h.local_address, absl::StrFormat("127.0.0.1:%d", s.port()));
  EXPECT_EQ(h.pid, ::getpid());
  EXPECT_GT(h.inode, 0u);
  EXPECT_THAT(h.command_line, HasSubstr("lockstep_unit_tests"));

  std::string msg = DescribeListenFailure(absl::StrFormat("127.0.0.1:%d", s.port()), s.port());
  EXPECT_THAT(msg, HasSubstr(absl::StrFormat("cannot listen on 127.0.0.1:%d: port %d is taken",
                                             s.port(), s.port())));
  EXPECT_THAT(msg, HasSubstr(absl::StrFormat("held by pid %d (", ::getpid())));
  EXPECT_THAT(msg, Not(HasSubstr("ss -ltnp")));  // the holder is known
}

TEST(PortHolder, ABoundButNotListeningPortHasNoHolder) {
  LoopbackSocket s(/*listen=*/false);
  ASSERT_GT(s.port(), 0);
  auto holders = FindPortHolders(s.port());
  ASSERT_OK(holders);
  EXPECT_TRUE(holders->empty());
  std::string msg = DescribeListenFailure(absl::StrFormat("127.0.0.1:%d", s.port()), s.port());
  EXPECT_THAT(msg, HasSubstr(absl::StrFormat("no socket listens on port %d", s.port())));
  EXPECT_THAT(msg, HasSubstr(absl::StrFormat("ss -tanp 'sport = :%d'", s.port())));
}

// A synthetic /proc: two listening sockets on 7070 (one owned by pid 4242,
// one by no visible process), plus rows that must be ignored.
class FakeProc : public ::testing::Test {
 protected:
  void SetUp() override {
    namespace fs = std::filesystem;
    fs::create_directories(dir_ / "net");
    // 127.0.0.1:7070 LISTEN inode 777; 127.0.0.1:7070 ESTABLISHED; 0.0.0.0:7071 LISTEN.
    std::ofstream(dir_ / "net/tcp")
        << "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
           "timeout inode\n"
        << "   0: 0100007F:1B9E 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000 "
           "       0 777 1 0000000000000000 100 0 0 10 0\n"
        << "   1: 0100007F:1B9E 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000 "
           "       0 778 1 0000000000000000 20 4 30 10 -1\n"
        << "   2: 00000000:1B9F 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0 "
           "       0 779 1 0000000000000000 100 0 0 10 0\n";
    // [::]:7070 LISTEN inode 888 (no owner visible); ::ffff:127.0.0.1 on 7072.
    std::ofstream(dir_ / "net/tcp6")
        << "  sl  local_address                         remote_address                        st "
           "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        << "   0: 00000000000000000000000000000000:1B9E 00000000000000000000000000000000:0000 0A "
           "00000000:00000000 00:00000000 00000000     0        0 888 1 0000000000000000 100 0 0 "
           "10 0\n"
        << "   1: 0000000000000000FFFF00000100007F:1BA0 00000000000000000000000000000000:0000 0A "
           "00000000:00000000 00:00000000 00000000     0        0 889 1 0000000000000000 100 0 0 "
           "10 0\n";
    fs::create_directories(dir_ / "4242/fd");
    fs::create_symlink("socket:[777]", dir_ / "4242/fd/5");
    fs::create_symlink("/dev/null", dir_ / "4242/fd/0");
    std::ofstream(dir_ / "4242/cmdline", std::ios::binary)
        << std::string("lockstep-agent\0--listen\0" "127.0.0.1:7070\0", 39);
    fs::create_directories(dir_ / "4243/fd");  // a child sharing the socket: the parent wins
    fs::create_symlink("socket:[777]", dir_ / "4243/fd/5");
    fs::create_directories(dir_ / "self");     // not a pid
  }
  testing::TempDir dir_;
};

TEST_F(FakeProc, ListsListenersOnThePortWithTheirOwners) {
  auto holders = FindPortHolders(7070, dir_.path());
  ASSERT_OK(holders);
  ASSERT_EQ(holders->size(), 2u);
  EXPECT_EQ((*holders)[0].local_address, "127.0.0.1:7070");
  EXPECT_EQ((*holders)[0].inode, 777u);
  EXPECT_EQ((*holders)[0].pid, 4242);
  EXPECT_EQ((*holders)[0].command_line, "lockstep-agent --listen 127.0.0.1:7070");
  EXPECT_EQ((*holders)[1].local_address, "[::]:7070");
  EXPECT_EQ((*holders)[1].inode, 888u);
  EXPECT_EQ((*holders)[1].pid, 0);

  auto mapped = FindPortHolders(7072, dir_.path());
  ASSERT_OK(mapped);
  ASSERT_EQ(mapped->size(), 1u);
  EXPECT_EQ((*mapped)[0].local_address, "127.0.0.1:7072");  // IPv4-mapped: shown as IPv4
  auto none = FindPortHolders(7073, dir_.path());
  ASSERT_OK(none);
  EXPECT_TRUE(none->empty());
}

TEST_F(FakeProc, TheMessageNamesPidAndSaysWhenItCannotTell) {
  std::string msg = DescribeListenFailure("0.0.0.0:7070", 7070, dir_.path());
  EXPECT_THAT(msg, HasSubstr("cannot listen on 0.0.0.0:7070: port 7070 is taken"));
  EXPECT_THAT(msg, HasSubstr("127.0.0.1:7070 is held by pid 4242 (lockstep-agent --listen "
                             "127.0.0.1:7070)"));
  EXPECT_THAT(msg, HasSubstr("[::]:7070 is held by a process this user cannot inspect (socket "
                             "inode 888)"));
  EXPECT_THAT(msg, HasSubstr("`ss -ltnp 'sport = :7070'` (as root) names the holder"));
}

TEST(PortHolder, BadInput) {
  EXPECT_EQ(FindPortHolders(0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FindPortHolders(70000).status().code(), absl::StatusCode::kInvalidArgument);
  testing::TempDir empty;
  auto missing = FindPortHolders(7070, empty.path());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr(empty.path() + "/net/tcp"));
  std::string msg = DescribeListenFailure("127.0.0.1:7070", 7070, empty.path());
  EXPECT_THAT(msg, HasSubstr("cannot tell who holds port 7070"));
  EXPECT_THAT(msg, HasSubstr("ss -ltnp 'sport = :7070'"));
  EXPECT_THAT(DescribeListenFailure("10.255.255.1:0", 0),
              HasSubstr("cannot listen on 10.255.255.1:0: port 0 lets the system pick"));
}

}  // namespace
}  // namespace lockstep
