// RunStore::Create (controller/run/run_store.h) refuses a results directory
// in which another account could rename a run's directory (and so redirect
// the files the controller writes by path): one writable by others without
// the sticky bit, or owned by another account than ours and root. Its own,
// and a sticky world-writable one (/tmp's mode), are fine.
#include "controller/run/run_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A run id is the UTC second, the plan's name made safe, and 48 random bits
// (12 hex digits): sites running one plan at the same second push into one
// namespace on a results service, where 16 bits collided 1 time in 65,536.
TEST(RunStore, ARunIdEndsInFortyEightRandomBits) {
  testing::TempDir tmp;
  std::set<std::string> suffixes;
  for (int i = 0; i < 4; ++i) {
    auto store = RunStore::Create(tmp.path(), "night ly/x", "[[phase]]\n");
    ASSERT_TRUE(store.ok()) << store.status();
    const std::string& id = (*store)->run_id();
    EXPECT_THAT(id, ::testing::MatchesRegex("[0-9]{8}-[0-9]{6}-night_ly_x-[0-9a-f]{12}")) << id;
    suffixes.insert(id.substr(id.size() - 12));
  }
  EXPECT_EQ(suffixes.size(), 4u);
}

TEST(RunStore, AResultsDirectoryOthersMayRenameInIsRefused) {
  testing::TempDir tmp;
  const std::string out = tmp / "out";
  std::filesystem::create_directory(out);
  ASSERT_EQ(::chmod(out.c_str(), 0777), 0);
  auto open = RunStore::Create(out, "p", "[[phase]]\n");
  EXPECT_TRUE(absl::IsPermissionDenied(open.status())) << open.status();
  EXPECT_THAT(open.status().message(),
              AllOf(HasSubstr(out), HasSubstr("mode 0777"), HasSubstr("without the sticky bit"),
                    HasSubstr("--out")));
  EXPECT_TRUE(std::filesystem::is_empty(out));  // no run directory made

  ASSERT_EQ(::chmod(out.c_str(), 01777), 0);  // as /tmp
  EXPECT_TRUE(RunStore::Create(out, "p", "[[phase]]\n").ok());
  ASSERT_EQ(::chmod(out.c_str(), 0755), 0);
  EXPECT_TRUE(RunStore::Create(out, "p", "[[phase]]\n").ok());
}

TEST(RunStore, AResultsDirectoryOfAnotherAccountIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the directory away";
  testing::TempDir tmp;
  const std::string out = tmp / "out";
  std::filesystem::create_directory(out);
  ASSERT_EQ(::chown(out.c_str(), 65534, 65534), 0);
  auto open = RunStore::Create(out, "p", "[[phase]]\n");
  EXPECT_THAT(open.status().message(),
              AllOf(HasSubstr("uid 65534"), HasSubstr("it owns the directory")));
}

}  // namespace
}  // namespace lockstep
