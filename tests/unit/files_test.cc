// common/files: atomic writes with an exact mode, mkdir -p, paths under a root.
#include "common/files.h"

#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using ::lockstep::testing::TempDir;

int ModeOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return -1;
  return static_cast<int>(st.st_mode & 07777);
}

// Restores the process umask at scope exit.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(old_); }

 private:
  mode_t old_;
};

TEST(WriteFileAtomically, ModeIsExactWhateverTheUmask) {
  TempDir dir;
  {
    ScopedUmask mask(0077);  // would hide 0644's group and other bits
    ASSERT_TRUE(WriteFileAtomically(dir / "public", "a", 0644).ok());
  }
  {
    ScopedUmask mask(0);  // would leave a 0666 create mode as it is
    ASSERT_TRUE(WriteFileAtomically(dir / "secret", "b", 0600).ok());
  }
  EXPECT_EQ(ModeOf(dir / "public"), 0644);
  EXPECT_EQ(ModeOf(dir / "secret"), 0600);
  EXPECT_EQ(*ReadFileToString(dir / "secret"), "b");
}

TEST(WriteFileAtomically, ReplacesTheWholeFileAndLeavesNoTemp) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomically(dir / "f", "a long first version").ok());
  ASSERT_TRUE(WriteFileAtomically(dir / "f", "short").ok());
  EXPECT_EQ(*ReadFileToString(dir / "f"), "short");
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    ++entries;
    EXPECT_EQ(e.path().filename(), "f");
  }
  EXPECT_EQ(entries, 1);
}

TEST(WriteFileAtomically, MissingDirectoryIsNotFoundNamingTheFile) {
  TempDir dir;
  absl::Status s = WriteFileAtomically(dir / "no/such/f", "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr(dir / "no/such/f"));
}

TEST(MakeDirectories, MakesParentsAcceptsExistingRefusesAFile) {
  TempDir dir;
  ASSERT_TRUE(MakeDirectories(dir / "a/b/c", 0700).ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir / "a/b/c"));
  EXPECT_EQ(ModeOf(dir / "a/b"), 0700);
  EXPECT_TRUE(MakeDirectories(dir / "a/b/c", 0700).ok());
  EXPECT_TRUE(MakeDirectories(dir / "a/b/c/", 0700).ok());  // a trailing '/'
  ASSERT_TRUE(WriteFileAtomically(dir / "file", "x").ok());
  absl::Status s = MakeDirectories(dir / "file", 0700);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr(dir / "file"));
  s = MakeDirectories(dir / "file/below", 0700);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(dir / "file/below"));
  EXPECT_EQ(MakeDirectories("", 0700).code(), absl::StatusCode::kInvalidArgument);
}

TEST(PathIsUnder, ByTextOnly) {
  EXPECT_TRUE(PathIsUnder("/a/b", "/a"));
  EXPECT_TRUE(PathIsUnder("/a", "/a"));
  EXPECT_FALSE(PathIsUnder("/ab", "/a"));
  EXPECT_TRUE(PathIsUnder("/anything", "/"));
}

TEST(AbsolutePath, AgainstTheWorkingDirectoryAndNormalByText) {
  const std::string cwd = std::filesystem::current_path().string();
  EXPECT_EQ(AbsolutePath("data/../io500"),
            (std::filesystem::path(cwd) / "io500").lexically_normal().string());
  EXPECT_EQ(AbsolutePath("/a//b/./c/.."), "/a/b/");
}

}  // namespace
}  // namespace lockstep
