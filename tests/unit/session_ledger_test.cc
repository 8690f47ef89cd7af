#include "agent/session_ledger.h"

#include <sys/stat.h>

#include <atomic>
#include <string>
#include <thread>

#include "agent/roots.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

// Agents starting together on one state directory: each one's start sweeps
// the lock files it can lock as dead agents' (RemoveLostSessions) while
// another is between creating its lock file and locking it. The one whose
// fresh file was swept takes a new one; it does not fail to start (it did,
// "cannot lock ...: No such file or directory", once in a Slurm test's four
// agents).
TEST(SessionLedger, AStartDoesNotFailWhenAnotherStartSweepsItsFreshLockFile) {
  testing::TempDir dir;
  auto roots = AllowedRoots::Create({dir.path()});
  ASSERT_TRUE(roots.ok()) << roots.status();
  const std::string state = dir.path() + "/state";
  std::atomic<bool> done{false};
  std::thread sweeper([&] {
    while (!done.load()) RemoveLostSessions(state, *roots);
  });
  int failed = 0;
  std::string first_error;
  for (int i = 0; i < 3000; ++i) {
    auto ledger = SessionLedger::Open(state);
    if (!ledger.ok()) {
      if (failed++ == 0) first_error = ledger.status().ToString();
    }
  }
  done = true;
  sweeper.join();
  EXPECT_EQ(failed, 0) << first_error;
}

// A state directory others can write in would let them plant a ledger that
// makes the agent remove the files it names: refused, naming the fix.
TEST(SessionLedger, AStateDirectoryOthersCanWriteIsRefused) {
  testing::TempDir tmp;
  const std::string dir = tmp / "state";
  ASSERT_OK(CheckStateDir(dir));  // made private
  struct stat st = {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u);
  ASSERT_EQ(::chmod(dir.c_str(), 01777), 0);
  absl::Status s = CheckStateDir(dir);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("chmod 0700"), std::string::npos) << s;
  EXPECT_FALSE(SessionLedger::Open(dir).ok());
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  EXPECT_OK(CheckStateDir(dir));
}

}  // namespace
}  // namespace lockstep
