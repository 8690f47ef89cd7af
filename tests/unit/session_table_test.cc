// SessionTable on an injected monotonic clock: one session at a time, lease
// renewal and expiry, and what an ended session leaves to remove.
#include "agent/session_table.h"

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <fstream>

#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
using testing::TempDir;

constexpr int64_t kMs = 1'000'000;

class SessionTableTest : public ::testing::Test {
 protected:
  int64_t now_mono_ns_ = 1'000 * kMs;
  SessionTable table_{5000, 200, [this] { return now_mono_ns_; }};
};

v1::PhaseSpec WriteSpec(const std::string& file_name) {
  v1::PhaseSpec s;
  s.set_kind(v1::WRITE);
  s.set_file_name(file_name);
  s.set_tasks(1);
  s.set_total_tasks(1);
  s.set_transfer_bytes(8);  // a spec Prepare takes: Cleanup checks it as Prepare does
  s.set_block_bytes(8);
  s.set_segments(1);
  return s;
}

TEST_F(SessionTableTest, ASecondSessionIsRefusedWhileTheLeaseHolds) {
  EXPECT_TRUE(table_.idle());
  EXPECT_OK(table_.CheckAttach());
  const std::string id = table_.Begin("run-1", "ctl-A", 1000, 0);
  EXPECT_EQ(id.size(), 32u);
  EXPECT_FALSE(table_.idle());
  absl::Status busy = table_.CheckAttach();
  EXPECT_EQ(busy.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(KindOf(busy), v1::BUSY);
  EXPECT_THAT(busy.message(), HasSubstr("busy: run run-1 from ctl-A since"));
  EXPECT_THAT(busy.message(), HasSubstr("lease of 1000 ms"));
  // Another session's id is refused as busy; an unknown one when idle as gone.
  EXPECT_EQ(KindOf(table_.Check("not-this-one")), v1::BUSY);
  EXPECT_OK(table_.Check(id));
  table_.End();
  EXPECT_EQ(KindOf(table_.Check(id)), v1::SESSION_GONE);
  EXPECT_OK(table_.CheckAttach());
}

TEST_F(SessionTableTest, TheLeaseExpiresOnTheClockAndALateCallDoesNotRenewIt) {
  const std::string id = table_.Begin("run-1", "ctl-A", 1000, 0);
  EXPECT_EQ(table_.lease_deadline_mono_ns(), now_mono_ns_ + 1000 * kMs);
  now_mono_ns_ += 999 * kMs;
  EXPECT_FALSE(table_.Expired());
  EXPECT_OK(table_.Check(id));
  now_mono_ns_ += 1 * kMs;
  EXPECT_TRUE(table_.Expired());
  absl::Status late = table_.CheckAndRenew(id);
  EXPECT_EQ(KindOf(late), v1::SESSION_GONE);
  EXPECT_THAT(late.message(), HasSubstr("the lease of 1000 ms of run run-1 expired"));
  EXPECT_TRUE(table_.Expired());  // not renewed
  EXPECT_EQ(KindOf(table_.Heartbeat(id)), v1::SESSION_GONE);
  // Expired but not yet ended: a new controller may attach.
  EXPECT_OK(table_.CheckAttach());
}

TEST_F(SessionTableTest, RenewalExtendsButNeverShortensAndHeartbeatResets) {
  const std::string id = table_.Begin("run-1", "ctl-A", 1000, 0);
  now_mono_ns_ += 400 * kMs;
  ASSERT_OK(table_.CheckAndRenew(id));
  EXPECT_EQ(table_.lease_deadline_mono_ns(), now_mono_ns_ + 1000 * kMs);
  ASSERT_OK(table_.Heartbeat(id));
  EXPECT_EQ(table_.lease_deadline_mono_ns(), now_mono_ns_ + 1000 * kMs);
  now_mono_ns_ += 900 * kMs;  // still within the lease renewed 900 ms ago
  EXPECT_OK(table_.Check(id));
  now_mono_ns_ += 100 * kMs;
  EXPECT_TRUE(table_.Expired());
}

TEST_F(SessionTableTest, LeasesAreBoundedBelowAndDefaulted) {
  table_.Begin("run-1", "ctl-A", 0, 0);  // none asked: the default
  EXPECT_EQ(table_.lease_deadline_mono_ns(), now_mono_ns_ + 5000 * kMs);
  table_.End();
  table_.Begin("run-2", "ctl-A", 10, 0);  // below the minimum
  EXPECT_EQ(table_.lease_deadline_mono_ns(), now_mono_ns_ + 200 * kMs);
}

TEST_F(SessionTableTest, EndHandsOverTheLeftoversOnce) {
  table_.Begin("run-1", "ctl-A", 1000, 0);
  TempDir tmp;
  auto held = BeneathDir::OpenRoot(tmp.path());
  ASSERT_OK(held);
  table_.AddPhaseFiles(WriteSpec("kept"), *held);
  table_.AddPhaseFiles(WriteSpec("removed"), *held);
  EXPECT_EQ(table_.PhaseDirOf(WriteSpec("removed")), *held);
  table_.ForgetPhaseFiles(WriteSpec("kept"));  // released or removed by the controller
  EXPECT_EQ(table_.PhaseDirOf(WriteSpec("kept")), nullptr);
  table_.NoteCreatedDir(*(*held)->OpenDirToCreate("md-a"));
  table_.NoteCreatedDir(*(*held)->OpenDirToCreate("md-b"));
  table_.NoteTreeRemoved(tmp / "md-b");
  table_.NoteTreeRemoved(tmp / "not-created");  // not ours: ignored
  EndedSession ended = table_.End();
  EXPECT_EQ(ended.run_id, "run-1");
  EXPECT_EQ(ended.controller, "ctl-A");
  EXPECT_EQ(ended.lease_ms, 1000u);
  ASSERT_EQ(ended.phases.size(), 1u);
  EXPECT_EQ(ended.phases.begin()->second.spec.file_name(), "removed");
  EXPECT_THAT(ended.DirsToRemove(true), UnorderedElementsAre(tmp / "md-a", tmp / "md-b"));
  EXPECT_THAT(ended.DirsToRemove(false), UnorderedElementsAre(tmp / "md-b"));
  EXPECT_TRUE(table_.idle());
  EXPECT_EQ(table_.lease_deadline_mono_ns(), 0);
  // A new session starts empty.
  table_.Begin("run-2", "ctl-B", 1000, 0);
  EndedSession second = table_.End();
  EXPECT_THAT(second.phases, IsEmpty());
  EXPECT_THAT(second.created_dirs, IsEmpty());
}

TEST(RemoveLeftovers, RemovesTheFilesAndOnlyEmptyCreatedDirs) {
  TempDir tmp;
  std::filesystem::create_directories(tmp / "empty");
  std::filesystem::create_directories(tmp / "full");
  std::ofstream(tmp / "full/f") << "x";
  std::ofstream(tmp / "data") << "x";
  auto held = BeneathDir::OpenRoot(tmp.path());
  ASSERT_OK(held);
  EndedSession ended;
  ended.phases["k"] = {WriteSpec("data"), *held};
  ended.created_dirs = {{tmp / "empty", {.held = *(*held)->OpenDirToCreate("empty")}},
                        {tmp / "full", {.held = *(*held)->OpenDirToCreate("full")}}};
  RemoveLeftovers(ended, /*all_dirs=*/false);  // Detach: neither dir had a tree_remove
  EXPECT_FALSE(std::filesystem::exists(tmp / "data"));
  EXPECT_TRUE(std::filesystem::exists(tmp / "empty"));
  RemoveLeftovers(ended, /*all_dirs=*/true);
  EXPECT_FALSE(std::filesystem::exists(tmp / "empty"));
  EXPECT_TRUE(std::filesystem::exists(tmp / "full/f"));  // not empty: stays
}

}  // namespace
}  // namespace lockstep
