// A root agent that cannot be steered outside its roots, and files left
// where nobody looks (issue 39, items 1 and 12), with real agent processes
// and the real `lockstep` binary:
//   - a component of the phase directory swapped for a symlink to an
//     outside directory, during a held cache barrier (between Prepare and
//     Start) or between transfers: the outside directory holds a hard link
//     of a victim file under the name the phase writes; its bytes and mtime
//     stay, nothing is made there, and the run fails naming the directory;
//   - the root's file system lazily unmounted (umount -l) mid-phase: the run
//     fails naming the directory and its mount, and the files are not left
//     in the detached mount;
//   - an agent killed mid-phase (SIGKILL) removes its files when it starts
//     again, and logs what it removed.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/files.h"
#include "controller/cli/exit_codes.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;
using std::chrono::milliseconds;
namespace fs = std::filesystem;

constexpr int kLeaseMs = 2000;

// A file's bytes and modification time.
struct Snapshot {
  std::string bytes;
  int64_t mtime_ns = 0;
  bool operator==(const Snapshot& o) const { return bytes == o.bytes && mtime_ns == o.mtime_ns; }
};

Snapshot SnapshotOf(const std::string& path) {
  Snapshot s{.bytes = ReadFileToString(path).value_or("<unreadable>")};
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    s.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
  }
  return s;
}

// An outside directory with a victim file, hard-linked under the name a
// phase's task 0 writes ("testfile.00000000").
class Outside {
 public:
  Outside() {
    std::ofstream(dir_ / "victim") << "precious bytes the agent must never touch";
    fs::create_hard_link(dir_ / "victim", dir_ / "testfile.00000000");
    before_ = SnapshotOf(dir_ / "victim");
  }
  const std::string& path() const { return dir_.path(); }
  void ExpectUntouched() const {
    EXPECT_TRUE(SnapshotOf(dir_ / "victim") == before_)
        << "the victim changed: " << SnapshotOf(dir_ / "victim").bytes;
    EXPECT_EQ(ListFiles(dir_.path()), (std::vector<std::string>{"testfile.00000000", "victim"}));
  }

 private:
  TempDir dir_;
  Snapshot before_;
};

PlanPhase SmallWrite(const std::string& dir, const std::string& block = "256k") {
  return FilePerProcess("w", "write", "64k", block).Set("file_name", "testfile").Set("dir", dir);
}

class RootEscapeTest : public ::testing::Test {
 protected:
  std::string PlanOf(const PlanPhase& phase, const std::string& cache = "none") {
    return cluster_.WritePlan(cluster_.Plan()
                                  .Set("name", "escape")
                                  .Set("lease_ms", kLeaseMs)
                                  .Set("connect_timeout_ms", 3000)
                                  .Set("cache", cache)
                                  .AddPhase(phase));
  }
  std::unique_ptr<ControllerProcess> StartRun(const std::string& plan) {
    return cluster_.StartRun(plan, {"--history=false"});
  }
  void WaitForLog(int i, const std::string& line, ControllerProcess& ctl) {
    ASSERT_EVENTUALLY_WITHIN(milliseconds(15000), [&] {
      EXPECT_THAT(ReadFileToString(cluster_.log_path(i)).value_or(""), HasSubstr(line))
          << ctl.Output();
    });
  }
  void WaitForData(int i, const std::string& rel, ControllerProcess& ctl) {
    ASSERT_EVENTUALLY_WITHIN(milliseconds(15000), [&] {
      ASSERT_GT(cluster_.FileBytes(i, rel), 0u) << ctl.Output();
    });
  }
  // root(0)/`rel` moved aside to rel.moved and replaced by a symlink to `target`.
  void SwapForSymlink(const std::string& rel, const std::string& target) {
    fs::rename(cluster_.dir(0, rel), cluster_.dir(0, rel + ".moved"));
    fs::create_directory_symlink(target, cluster_.dir(0, rel));
  }
  // The run failed at the removal, naming the directory whose path now
  // leads elsewhere; the files written went to the directory prepared and
  // were removed from it; nothing outside changed.
  void ExpectRefusedAndNothingOutside(ControllerProcess& ctl, const Outside& outside,
                                      const std::string& rel) {
    ASSERT_EQ(ctl.Wait(milliseconds(60000)), kExitIoError) << ctl.Output();
    std::printf("[escape] says \"%s\"\n", ctl.err().c_str());
    EXPECT_THAT(ctl.err(), HasSubstr(cluster_.dir(0, rel) +
                                     " is no longer the directory the phase was prepared in"));
    EXPECT_THAT(ctl.err(), HasSubstr("a component was replaced"));
    EXPECT_THAT(ctl.err(), HasSubstr("removed 1 file(s) through the directory it held"));
    outside.ExpectUntouched();
    EXPECT_TRUE(cluster_.Files(0, rel + ".moved").empty())
        << absl::StrJoin(cluster_.Files(0, rel + ".moved"), " ");
    EXPECT_EQ(cluster_.AgentState(0), "idle");
  }

  TestCluster cluster_;
};

TEST_F(RootEscapeTest, SymlinkSwapBetweenPrepareAndStartWritesNothingOutside) {
  // The cache barrier (between Prepare and Start) is held for 3 s.
  ASSERT_OK(cluster_.Start({.agents = {{.flags = {"--test_delay_calls", "cache",
                                                  "--test_delay_call_ms", "3000",
                                                  "--allow_drop_caches=false"}}},
                            .dirs = {"data/sub"}}));
  Outside outside;
  auto ctl = StartRun(PlanOf(SmallWrite("data/sub"), "clients"));
  ASSERT_NO_FATAL_FAILURE(WaitForLog(0, "test hook: cache delayed", *ctl));
  SwapForSymlink("data/sub", outside.path());
  ExpectRefusedAndNothingOutside(*ctl, outside, "data/sub");
}

TEST_F(RootEscapeTest, SymlinkSwapOfAnUpperComponentBetweenPrepareAndStartWritesNothingOutside) {
  ASSERT_OK(cluster_.Start({.agents = {{.flags = {"--test_delay_calls", "cache",
                                                  "--test_delay_call_ms", "3000",
                                                  "--allow_drop_caches=false"}}},
                            .dirs = {"data/sub"}}));
  Outside outside;
  fs::create_directory(outside.path() + "/sub");
  fs::create_hard_link(outside.path() + "/victim", outside.path() + "/sub/testfile.00000000");
  auto ctl = StartRun(PlanOf(SmallWrite("data/sub"), "clients"));
  ASSERT_NO_FATAL_FAILURE(WaitForLog(0, "test hook: cache delayed", *ctl));
  // "data" now leads to the outside directory, whose sub/ has the victim.
  SwapForSymlink("data", outside.path());
  ASSERT_EQ(ctl->Wait(milliseconds(60000)), kExitIoError) << ctl->Output();
  EXPECT_THAT(ctl->err(), HasSubstr(cluster_.dir(0, "data/sub") + " is no longer the directory"));
  EXPECT_EQ(SnapshotOf(outside.path() + "/sub/testfile.00000000"),
            SnapshotOf(outside.path() + "/victim"));
  EXPECT_EQ(ListFiles(outside.path() + "/sub"), std::vector<std::string>{"testfile.00000000"});
  EXPECT_TRUE(cluster_.Files(0, "data.moved/sub").empty());
}

TEST_F(RootEscapeTest, SymlinkSwapBetweenTransfersWritesNothingOutside) {
  // 16 transfers of 64 KiB, 150 ms each; IOR -W re-opens the file after them.
  ASSERT_OK(cluster_.Start(
      {.agents = {{.flags = {"--test_delay_per_transfer_us", "150000"}}}, .dirs = {"data/sub"}}));
  Outside outside;
  auto ctl = StartRun(PlanOf(SmallWrite("data/sub", "1m").Set("verify_after_write", true)));
  ASSERT_NO_FATAL_FAILURE(WaitForData(0, "data/sub", *ctl));
  SwapForSymlink("data/sub", outside.path());
  ExpectRefusedAndNothingOutside(*ctl, outside, "data/sub");
}

// umount -l of the file system the phase writes on, mid-phase, in a private
// mount namespace of this test process (the agents it starts inherit it).
TEST_F(RootEscapeTest, RootLazilyUnmountedMidPhaseIsAFailureNamingTheMount) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a tmpfs in a mount namespace";
  if (::unshare(CLONE_NEWNS) != 0) {
    GTEST_SKIP() << "unshare(CLONE_NEWNS): " << std::strerror(errno);
  }
  ASSERT_EQ(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr), 0) << std::strerror(errno);
  ASSERT_OK(cluster_.Start({.agents = {{.flags = {"--test_delay_per_transfer_us", "150000"}}}}));
  const std::string data = cluster_.dir(0, "data");
  if (::mount("tmpfs", data.c_str(), "tmpfs", 0, "size=64m") != 0) {
    GTEST_SKIP() << "mount -t tmpfs on " << data << ": " << std::strerror(errno);
  }
  auto ctl = StartRun(PlanOf(SmallWrite("data", "1m")));
  ASSERT_NO_FATAL_FAILURE(WaitForData(0, "data", *ctl));
  // A look into the mount that stays after it is detached.
  const int mount_fd = ::open(data.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(mount_fd, 0) << std::strerror(errno);
  ASSERT_EQ(::umount2(data.c_str(), MNT_DETACH), 0) << std::strerror(errno);
  ASSERT_EQ(ctl->Wait(milliseconds(60000)), kExitIoError) << ctl->Output();
  std::printf("[escape] umount -l: says \"%s\"\n", ctl->err().c_str());
  EXPECT_THAT(ctl->err(), HasSubstr(data + " is no longer the directory the phase was prepared in"));
  EXPECT_THAT(ctl->err(), HasSubstr("its mount was unmounted (umount -l)"));
  EXPECT_THAT(ctl->err(), HasSubstr("no longer mounted there"));
  v1::RunRecord rec = ctl->Result().Record();
  EXPECT_NE(rec.status(), "complete");
  // Nothing left in the detached mount.
  EXPECT_TRUE(ListFiles(absl::StrFormat("/proc/self/fd/%d", mount_fd)).empty())
      << absl::StrJoin(ListFiles(absl::StrFormat("/proc/self/fd/%d", mount_fd)), " ");
  ::close(mount_fd);
}

TEST_F(RootEscapeTest, AgentKilledMidPhaseRemovesItsFilesWhenItRestarts) {
  ASSERT_OK(cluster_.Start({.agents = {{.flags = {"--test_delay_per_transfer_us", "150000"}}}}));
  auto ctl = StartRun(PlanOf(SmallWrite("data", "1m")));
  ASSERT_NO_FATAL_FAILURE(WaitForData(0, "data", *ctl));
  cluster_.Kill(0);
  ASSERT_EQ(ctl->Wait(milliseconds(kLeaseMs + 15000)), kExitAgentLost) << ctl->Output();
  EXPECT_EQ(cluster_.Files(0), std::vector<std::string>{"testfile.00000000"});
  // Listening means started: what the killed agent left is gone by then.
  ASSERT_OK(cluster_.Restart(0));
  EXPECT_TRUE(cluster_.Files(0).empty()) << absl::StrJoin(cluster_.Files(0), " ");
  const std::string log = ReadFileToString(cluster_.log_path(0)).value_or("");
  std::printf("[escape] restart log:\n%s\n", log.c_str());
  EXPECT_THAT(log, HasSubstr("files left by an agent that ended without removing them"));
  EXPECT_THAT(log, HasSubstr("removed 1 file(s) of phase t0/r0/w in " + cluster_.dir(0, "data")));
  // Only the new agent's lock is left in the state directory.
  const std::vector<std::string> state = ListFiles(cluster_ / "agent0-state");
  ASSERT_EQ(state.size(), 1u) << absl::StrJoin(state, " ");
  EXPECT_EQ(state[0], absl::StrFormat("agent-%d.lock", cluster_.pid(0)));
}

}  // namespace
}  // namespace lockstep::testing
