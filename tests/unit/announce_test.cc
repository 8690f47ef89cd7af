// common/announce.h and controller/run/agent_discovery.h: the files agents
// announce themselves with, the trust checks on them, and the wait for them.
#include "common/announce.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "common/files.h"
#include "controller/run/agent_discovery.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

Announcement Node(const std::string& node, const std::string& address, int64_t pid = ::getpid()) {
  Announcement a;
  a.node = node;
  a.address = address;
  a.role = v1::CLIENT;
  a.host = "thishost";
  a.pid = pid;
  return a;
}

class AnnounceDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_ / "announce";
    ASSERT_EQ(::mkdir(dir_.c_str(), 0700), 0);
  }
  TempDir tmp_;
  std::string dir_;
};

TEST(AnnouncementTest, RoundTripsAndNamesBadKeys) {
  Announcement a = Node("n7", "host7:4242");
  a.role = v1::OSS;
  auto back = ParseAnnouncement(FormatAnnouncement(a), "f.agent");
  ASSERT_OK(back);
  EXPECT_EQ(back->node, "n7");
  EXPECT_EQ(back->address, "host7:4242");
  EXPECT_EQ(back->role, v1::OSS);
  EXPECT_EQ(back->host, "thishost");
  EXPECT_EQ(back->pid, ::getpid());

  auto no_port = ParseAnnouncement("node = \"n1\"\naddress = \"host7\"\nrole = \"client\"\n", "d/n1.agent");
  EXPECT_THAT(no_port.status().message(), HasSubstr("d/n1.agent: key 'address'"));
  EXPECT_THAT(no_port.status().message(), HasSubstr("\"host7\" is not HOST:PORT"));
  auto bad_role = ParseAnnouncement("node = \"n1\"\naddress = \"h:1\"\nrole = \"boss\"\n", "x");
  EXPECT_THAT(bad_role.status().message(), HasSubstr("key 'role'"));
  auto bad_node = ParseAnnouncement("node = \"../n1\"\naddress = \"h:1\"\nrole = \"client\"\n", "x");
  EXPECT_THAT(bad_node.status().message(), HasSubstr("key 'node'"));
  auto garbage = ParseAnnouncement("node = ", "g.agent");
  EXPECT_THAT(garbage.status().message(), HasSubstr("g.agent:1: not an announcement"));
}

TEST_F(AnnounceDirTest, DirectoryOthersCanWriteIsRefused) {
  EXPECT_OK(CheckAnnounceDir(dir_));
  ASSERT_EQ(::chmod(dir_.c_str(), 01777), 0);  // sticky like /tmp: still anyone can add
  absl::Status world = CheckAnnounceDir(dir_);
  EXPECT_THAT(world.message(), HasSubstr("writable by every user"));
  EXPECT_THAT(world.message(), HasSubstr("chmod 0700 " + dir_));
  ASSERT_EQ(::chmod(dir_.c_str(), 0770), 0);
  EXPECT_THAT(CheckAnnounceDir(dir_).message(), HasSubstr("writable by its group"));
  EXPECT_THAT(WriteAnnouncement(dir_, Node("n1", "h:1")).message(), HasSubstr("its group"));
  EXPECT_TRUE(absl::IsNotFound(CheckAnnounceDir(tmp_ / "missing")));
}

TEST_F(AnnounceDirTest, LiveNodeIsNotTakenOverButAStaleFileIs) {
  ASSERT_OK(WriteAnnouncement(dir_, Node("n1", "h:1")));
  absl::Status again = WriteAnnouncement(dir_, Node("n1", "h:2", ::getpid() + 0));
  // Same pid means "ours": a second agent in this process is still refused,
  // since the first one is alive.
  EXPECT_TRUE(absl::IsAlreadyExists(again)) << again;
  EXPECT_THAT(again.message(), HasSubstr("node n1 is already announced"));
  EXPECT_THAT(again.message(), HasSubstr("h:1"));

  // A file left by a process that no longer runs on this host is replaced.
  const std::string path = dir_ + "/n2.agent";
  Announcement dead = Node("n2", "h:3", /*pid=*/0x7ffffff0);
  ASSERT_OK(WriteFileAtomically(path, FormatAnnouncement(dead)));
  ASSERT_OK(WriteAnnouncement(dir_, Node("n2", "h:4")));
  auto read = ReadAnnouncements(dir_);
  ASSERT_OK(read);
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[1].address, "h:4");

  RemoveAnnouncement(dir_, Node("n2", "h:4"));
  read = ReadAnnouncements(dir_);
  ASSERT_OK(read);
  EXPECT_EQ(read->size(), 1u);
}

TEST_F(AnnounceDirTest, ForgedOrConflictingFilesAreRefused) {
  ASSERT_OK(WriteAnnouncement(dir_, Node("n1", "h:1")));
  ASSERT_OK(WriteAnnouncement(dir_, Node("n2", "h:1")));
  auto both = ReadAnnouncements(dir_);
  EXPECT_THAT(both.status().message(), HasSubstr("nodes n1 and n2 both announce h:1"));

  ASSERT_EQ(::unlink((dir_ + "/n2.agent").c_str()), 0);
  ASSERT_EQ(::chmod((dir_ + "/n1.agent").c_str(), 0666), 0);
  EXPECT_THAT(ReadAnnouncements(dir_).status().message(), HasSubstr("writable by others"));

  ASSERT_EQ(::chmod((dir_ + "/n1.agent").c_str(), 0644), 0);
  ASSERT_OK(WriteFileAtomically(dir_ + "/n9.agent", FormatAnnouncement(Node("n3", "h:9"))));
  EXPECT_THAT(ReadAnnouncements(dir_).status().message(), HasSubstr("announces node \"n3\""));
  ASSERT_EQ(::unlink((dir_ + "/n9.agent").c_str()), 0);

  // Other files (temporaries, notes) are ignored.
  ASSERT_OK(WriteFileAtomically(dir_ + "/README", "not an agent"));
  auto read = ReadAnnouncements(dir_);
  ASSERT_OK(read);
  EXPECT_EQ(read->size(), 1u);
}

TEST_F(AnnounceDirTest, WaitNamesTheMissingNodesAndRefusesStrangers) {
  ASSERT_OK(WriteAnnouncement(dir_, Node("n1", "h:1")));
  AnnounceWait wait;
  wait.dir = dir_;
  wait.nodes = {"n1", "n2"};
  wait.timeout = absl::Milliseconds(50);
  wait.poll = absl::Milliseconds(5);
  auto missing = AwaitAnnouncements(wait);
  EXPECT_TRUE(absl::IsDeadlineExceeded(missing.status()));
  EXPECT_THAT(missing.status().message(), HasSubstr("1 of 2 agents announced"));
  EXPECT_THAT(missing.status().message(), HasSubstr("never announced: n2"));
  EXPECT_THAT(missing.status().message(), HasSubstr("or wait longer (--wait_ms)"));
  wait.wait_flag = "--wait-s";  // the Slurm script's flag
  EXPECT_THAT(AwaitAnnouncements(wait).status().message(), HasSubstr("or wait longer (--wait-s)"));

  ASSERT_OK(WriteAnnouncement(dir_, Node("n2", "h:2")));
  auto all = AwaitAnnouncements(wait);
  ASSERT_OK(all);
  EXPECT_EQ(AgentsOf(*all).size(), 2u);

  ASSERT_OK(WriteAnnouncement(dir_, Node("x9", "h:9")));
  EXPECT_THAT(AwaitAnnouncements(wait).status().message(),
              HasSubstr("not one of the expected nodes (n1, n2)"));

  AnnounceWait count;
  count.dir = dir_;
  count.expect = 4;
  count.timeout = absl::Milliseconds(20);
  count.poll = absl::Milliseconds(5);
  EXPECT_THAT(AwaitAnnouncements(count).status().message(), HasSubstr("3 of 4 agents"));
}

}  // namespace
}  // namespace lockstep
