// BeneathDir (agent/beneath.h) on real directories, with openat2 and with
// the component walk of kernels without it: a symlink at any depth, "..",
// an absolute symlink, an absolute path outside, a file where a directory is
// expected — each refused with nothing outside touched, the victim file
// (hard-linked under the name the agent would write) keeping its bytes and
// mtime.
#include "agent/beneath.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;
namespace fs = std::filesystem;

struct Snapshot {
  std::string bytes;
  struct timespec mtime {};
  bool operator==(const Snapshot& o) const {
    return bytes == o.bytes && mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec;
  }
};

// The names in `dir`, sorted.
std::vector<std::string> ListFiles(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

Snapshot SnapshotOf(const std::string& path) {
  Snapshot s;
  s.bytes = ReadFileToString(path).value_or("<unreadable>");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) s.mtime = st.st_mtim;
  return s;
}

// A root with a/b/c below it, and an outside directory with a victim file
// hard-linked under the names the tests write, wherever a swapped symlink
// would lead a path a/b/c/f: "f", "c/f", "b/c/f".
class BeneathTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    BeneathUseWalkForTesting(GetParam());
    fs::create_directories(root_ / "a/b/c");
    fs::create_directories(outside_ / "b/c");
    fs::create_directories(outside_ / "c");
    std::ofstream(outside_ / "victim") << "precious";
    fs::create_hard_link(outside_ / "victim", outside_ / "f");
    fs::create_hard_link(outside_ / "victim", outside_ / "c/f");
    fs::create_hard_link(outside_ / "victim", outside_ / "b/c/f");
    before_ = SnapshotOf(outside_ / "victim");
    auto held = BeneathDir::OpenRoot(root_.path());
    ASSERT_TRUE(held.ok()) << held.status();
    root_dir_ = *held;
  }
  void TearDown() override { BeneathUseWalkForTesting(false); }

  // Replaces root/`component` (a directory) by a symlink to `target`.
  void Swap(const std::string& component, const std::string& target) {
    fs::rename(root_ / component, root_ / (component + ".moved"));
    fs::create_directory_symlink(target, root_ / component);
  }

  // Nothing outside changed: the victim's bytes and mtime, no new entry.
  void ExpectOutsideUntouched() {
    EXPECT_TRUE(SnapshotOf(outside_ / "victim") == before_);
    EXPECT_EQ(ListFiles(outside_.path()), (std::vector<std::string>{"b", "c", "f", "victim"}));
    EXPECT_EQ(ListFiles(outside_ / "c"), std::vector<std::string>{"f"});
    EXPECT_EQ(ListFiles(outside_ / "b/c"), std::vector<std::string>{"f"});
    EXPECT_EQ(ListFiles(outside_ / "b"), std::vector<std::string>{"c"});
  }

  TempDir root_;
  TempDir outside_;
  Snapshot before_;
  std::shared_ptr<const BeneathDir> root_dir_;
};

TEST_P(BeneathTest, OperationsBelowTheDirectoryWork) {
  const BeneathDir& d = *root_dir_;
  const int fd = d.Open(root_ / "a/b/c/f", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(::write(fd, "x", 1), 1);
  ::close(fd);
  struct stat st;
  ASSERT_EQ(d.Stat("a/b/c/f", &st), 0);
  EXPECT_EQ(st.st_size, 1);
  ASSERT_EQ(d.Mkdir("a/b/c/d", 0755), 0);
  ASSERT_EQ(d.Rename("a/b/c/f", "a/b/c/d/g"), 0);
  EXPECT_TRUE(fs::exists(root_ / "a/b/c/d/g"));
  ASSERT_EQ(d.Unlink(root_ / "a/b/c/d/g"), 0);
  ASSERT_EQ(d.Rmdir("a/b/c/d"), 0);
  auto sub = d.OpenDir("a/./b");
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_EQ((*sub)->path(), root_ / "a/b");
  auto removed = d.RemoveTree(root_ / "a");
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 3u);  // a, b, c
  EXPECT_FALSE(fs::exists(root_ / "a"));
  EXPECT_TRUE(d.CheckStillAtPath().ok());
}

TEST_P(BeneathTest, ASymlinkAtEveryDepthIsRefusedAndNothingOutsideChanges) {
  // Followed, each swap would lead a/b/c/f to a hard link of the victim.
  for (const std::string component : {"a", "a/b", "a/b/c"}) {
    SCOPED_TRACE(component);
    Swap(component, outside_.path());
    const BeneathDir& d = *root_dir_;
    const std::string file = root_ / "a/b/c/f";
    errno = 0;
    EXPECT_EQ(d.Open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644), -1);
    EXPECT_EQ(errno, ELOOP) << std::strerror(errno);
    errno = 0;
    EXPECT_EQ(d.Open(file, O_RDONLY), -1);
    EXPECT_EQ(errno, ELOOP);
    struct stat st;
    EXPECT_EQ(d.Stat(file, &st), -1);
    EXPECT_EQ(errno, ELOOP);
    EXPECT_EQ(d.Unlink(file), -1);
    EXPECT_EQ(errno, ELOOP);
    EXPECT_EQ(d.Mkdir("a/b/c/new", 0755), -1);
    EXPECT_EQ(d.Rmdir("a/b/c"), -1);
    EXPECT_EQ(d.Rename(file, "moved"), -1);
    EXPECT_FALSE(d.OpenDir("a/b/c").ok());
    auto removed = d.RemoveTree("a/b/c/f");
    EXPECT_FALSE(removed.ok());
    ExpectOutsideUntouched();
    fs::remove(root_ / component);
    fs::rename(root_ / (component + ".moved"), root_ / component);
  }
}

TEST_P(BeneathTest, TheSymlinkIsNamedAsTheReason) {
  Swap("a/b/c", outside_.path());
  errno = 0;
  EXPECT_EQ(root_dir_->Open("a/b/c/f", O_WRONLY | O_TRUNC), -1);
  EXPECT_EQ(errno, ELOOP);
  EXPECT_THAT(BeneathErrorText(errno), HasSubstr("symbolic link"));
  auto sub = root_dir_->OpenDir("a/b/c");
  ASSERT_FALSE(sub.ok());
  EXPECT_EQ(sub.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(sub.status().message(), HasSubstr(root_ / "a/b/c"));
  EXPECT_THAT(sub.status().message(), HasSubstr("symbolic link"));
  ExpectOutsideUntouched();
}

TEST_P(BeneathTest, ALastComponentSymlinkIsNeitherFollowedNorWrittenThrough) {
  fs::create_symlink(outside_ / "victim", root_ / "a/f");
  errno = 0;
  EXPECT_EQ(root_dir_->Open("a/f", O_WRONLY | O_CREAT | O_TRUNC, 0644), -1);
  EXPECT_EQ(errno, ELOOP);
  struct stat st;
  ASSERT_EQ(root_dir_->Stat("a/f", &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));  // lstat: the link itself
  ASSERT_EQ(root_dir_->Unlink("a/f"), 0);  // removes the link, not the victim
  ExpectOutsideUntouched();
}

TEST_P(BeneathTest, DotDotAndAbsolutePathsOutsideAreRefused) {
  const BeneathDir& d = *root_dir_;
  for (const std::string& path : {std::string("../x"), std::string("a/../../x"),
                                 std::string("a/.."), outside_ / "f", root_.path() + "-x/f"}) {
    SCOPED_TRACE(path);
    errno = 0;
    EXPECT_EQ(d.Open(path, O_WRONLY | O_CREAT, 0644), -1);
    EXPECT_EQ(errno, EXDEV);
    EXPECT_EQ(d.Mkdir(path, 0755), -1);
    EXPECT_EQ(errno, EXDEV);
  }
  EXPECT_THAT(BeneathErrorText(EXDEV), HasSubstr("leaves the phase directory"));
  ExpectOutsideUntouched();
}

TEST_P(BeneathTest, AnAbsoluteSymlinkIsRefused) {
  // An absolute target ("/..."), which RESOLVE_BENEATH would otherwise
  // reject as a jump: refused the same way, as a symlink.
  fs::create_directory_symlink("/", root_ / "a/root");
  errno = 0;
  EXPECT_EQ(root_dir_->Open("a/root/" + outside_.path().substr(1) + "/f", O_WRONLY), -1);
  EXPECT_TRUE(errno == ELOOP || errno == EXDEV) << std::strerror(errno);
  ExpectOutsideUntouched();
}

TEST_P(BeneathTest, AFileWhereADirectoryIsExpectedIsNotADirectory) {
  std::ofstream(root_ / "a/plain") << "x";
  errno = 0;
  EXPECT_EQ(root_dir_->Open("a/plain/f", O_WRONLY | O_CREAT, 0644), -1);
  EXPECT_EQ(errno, ENOTDIR);
  auto sub = root_dir_->OpenDir("a/plain");
  ASSERT_FALSE(sub.ok());
  EXPECT_EQ(sub.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_P(BeneathTest, RemoveTreeRemovesALinkInTheTreeNotWhatItPointsTo) {
  fs::create_directory_symlink(outside_.path(), root_ / "a/b/out");
  auto removed = root_dir_->RemoveTree("a");
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 4u);  // a, b, c, the link
  ExpectOutsideUntouched();
}

TEST_P(BeneathTest, ADirectoryHeldOpenKeepsItsFilesWhenItsPathIsSwapped) {
  auto held = root_dir_->OpenDir("a/b");
  ASSERT_TRUE(held.ok()) << held.status();
  Swap("a", outside_.path());
  // Still the directory it was: the file lands in a.moved/b, not outside.
  const int fd = (*held)->Open((*held)->path() + "/c/f", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ::close(fd);
  EXPECT_TRUE(fs::exists(root_ / "a.moved/b/c/f"));
  ExpectOutsideUntouched();
  // And says that its path leads elsewhere now.
  absl::Status moved = (*held)->CheckStillAtPath();
  EXPECT_EQ(moved.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(moved.message(), HasSubstr(root_ / "a/b"));
  EXPECT_THAT(moved.message(), HasSubstr("is no longer the directory"));
}

TEST_P(BeneathTest, ADirectoryToCreateIsMadeBelowItsHeldParent) {
  auto pending = root_dir_->OpenDirToCreate("a/new");
  ASSERT_TRUE(pending.ok()) << pending.status();
  EXPECT_EQ((*pending)->path(), root_ / "a/new");
  ASSERT_EQ((*pending)->Mkdir((*pending)->path(), 0755), 0);
  const int fd = (*pending)->Open("f", O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ::close(fd);
  EXPECT_TRUE(fs::exists(root_ / "a/new/f"));
  // Its name swapped for a symlink: refused.
  fs::remove_all(root_ / "a/new");
  fs::create_directory_symlink(outside_.path(), root_ / "a/new");
  errno = 0;
  EXPECT_EQ((*pending)->Open("f", O_WRONLY | O_TRUNC), -1);
  EXPECT_EQ(errno, ELOOP);
  ExpectOutsideUntouched();
}

// root(): the root a directory was opened below, kept alive by it (the
// caller dropped its own reference), resolving the directory's paths from
// the root each time (mdtest's items): a swapped component on the way is
// refused there too, where the held directory itself would go on.
TEST_P(BeneathTest, RootResolvesEveryComponentFromTheRootEachTime) {
  auto held = root_dir_->OpenDir("a/b");
  ASSERT_TRUE(held.ok()) << held.status();
  auto deeper = (*held)->OpenDir("c");
  ASSERT_TRUE(deeper.ok()) << deeper.status();
  root_dir_.reset();
  EXPECT_EQ((*deeper)->root().path(), root_.path());
  EXPECT_EQ(&(*deeper)->root(), &(*held)->root());
  EXPECT_EQ(&(*deeper)->root().root(), &(*deeper)->root());
  const std::string file = (*deeper)->path() + "/f";
  const int fd = (*deeper)->root().Open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ::close(fd);
  struct stat st;
  ASSERT_EQ((*deeper)->root().Stat(file, &st), 0);
  Swap("a", outside_.path());
  errno = 0;
  EXPECT_EQ((*deeper)->root().Stat(file, &st), -1);
  EXPECT_EQ(errno, ELOOP);
  EXPECT_EQ((*deeper)->root().Unlink(file), -1);
  EXPECT_EQ((*deeper)->root().Open(file, O_WRONLY | O_TRUNC), -1);
  EXPECT_EQ((*deeper)->Stat(file, &st), 0);  // the held directory is still a.moved/b/c
  ExpectOutsideUntouched();
}

// HeldPath leads to the directory held, not to what its path names now:
// lfs setstripe and setxattr, given it, act on the phase directory even
// when a component was swapped for a link to a directory outside.
TEST_P(BeneathTest, TheHeldPathLeadsToTheHeldDirectoryAfterASwap) {
  auto held = root_dir_->OpenDir("a/b");
  ASSERT_TRUE(held.ok()) << held.status();
  const std::string at = (*held)->HeldPath();
  ASSERT_THAT(at, ::testing::StartsWith("/proc/"));
  Swap("a", outside_.path());
  EXPECT_EQ(fs::canonical(at), fs::canonical(root_ / "a.moved/b"));
  std::ofstream(at + "/made") << "x";
  EXPECT_TRUE(fs::exists(root_ / "a.moved/b/made"));
  ExpectOutsideUntouched();
  auto to_make = root_dir_->OpenDirToCreate("a.moved/new");
  ASSERT_TRUE(to_make.ok()) << to_make.status();
  EXPECT_EQ((*to_make)->HeldPath(), "");  // still to be made: no directory to lead to
}

// A FIFO planted where a task's data file is expected: OpenFile refuses it
// at once (ENXIO, "not a regular file") for reading and for writing, where
// Open would block until a writer (or reader) came. Run on a thread with a
// deadline: a regression is released by opening the FIFO's other end, and
// fails instead of hanging the suite.
TEST_P(BeneathTest, OpenFileRefusesAFifoWithoutBlocking) {
  const fs::path fifo = root_ / "a/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0) << std::strerror(errno);
  for (const int flags : {O_RDONLY, O_WRONLY | O_CREAT, O_RDWR}) {
    auto opened = std::async(std::launch::async, [&] {
      const int fd = root_dir_->OpenFile("a/fifo", flags, 0644);
      const int err = errno;
      if (fd >= 0) ::close(fd);
      return fd >= 0 ? 0 : err;
    });
    if (opened.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      const int other = ::open(fifo.c_str(), (flags & O_ACCMODE) == O_RDONLY
                                                 ? O_WRONLY | O_NONBLOCK
                                                 : O_RDONLY | O_NONBLOCK);
      opened.wait();
      if (other >= 0) ::close(other);
      FAIL() << "OpenFile blocked on a FIFO (flags " << flags << ")";
    }
    EXPECT_EQ(opened.get(), ENXIO) << "flags " << flags;
  }
  EXPECT_THAT(BeneathErrorText(ENXIO), HasSubstr("not a regular file"));
}

TEST_P(BeneathTest, OpenFileOfARegularFileIsBlockingAsAsked) {
  const int made = root_dir_->OpenFile("a/f", O_WRONLY | O_CREAT | O_APPEND, 0644);
  ASSERT_GE(made, 0) << std::strerror(errno);
  const int status = ::fcntl(made, F_GETFL);
  EXPECT_EQ(status & O_NONBLOCK, 0);
  EXPECT_NE(status & O_APPEND, 0);
  ::close(made);
  const int nonblocking = root_dir_->OpenFile("a/f", O_RDONLY | O_NONBLOCK);
  ASSERT_GE(nonblocking, 0) << std::strerror(errno);
  EXPECT_NE(::fcntl(nonblocking, F_GETFL) & O_NONBLOCK, 0);
  ::close(nonblocking);
  EXPECT_EQ(root_dir_->OpenFile("a/b", O_RDONLY), -1);  // a directory
  EXPECT_EQ(errno, ENXIO);
}

// A hard link planted at a data path to a file outside the roots (no
// symlink on the way, so the walk and openat2 let it through): a write
// open is refused with EMLINK and the outside file is neither truncated nor
// written; reading it stays allowed (a data set may be hard-linked). Before,
// a write phase filled the outside file with its pattern.
TEST_P(BeneathTest, AFileWithAnotherNameIsNotWrittenNorTruncated) {
  ASSERT_EQ(::link((outside_ / "victim").c_str(), (root_ / "a/linked").c_str()), 0)
      << std::strerror(errno);
  for (const int flags : {O_WRONLY | O_CREAT | O_TRUNC, O_RDWR | O_CREAT, O_WRONLY}) {
    EXPECT_EQ(root_dir_->OpenFile("a/linked", flags, 0644), -1) << "flags " << flags;
    EXPECT_EQ(errno, EMLINK) << "flags " << flags;
  }
  ExpectOutsideUntouched();  // "precious": neither truncated nor written
  const int reader = root_dir_->OpenFile("a/linked", O_RDONLY);
  EXPECT_GE(reader, 0) << std::strerror(errno);
  if (reader >= 0) ::close(reader);
  EXPECT_THAT(BeneathErrorText(EMLINK), HasSubstr("more than one name"));
  // One name: O_TRUNC empties it, as asked.
  std::ofstream(root_ / "a/one") << "data";
  const int one = root_dir_->OpenFile("a/one", O_WRONLY | O_TRUNC);
  ASSERT_GE(one, 0) << std::strerror(errno);
  ::close(one);
  EXPECT_EQ(fs::file_size(root_ / "a/one"), 0u);
}

INSTANTIATE_TEST_SUITE_P(OpenAt2AndWalk, BeneathTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("ComponentWalk")
                                             : std::string("OpenAt2");
                         });

// A root whose path gained a symbolic link since the agent started (a
// directory on the way renamed and a link put in its place, by whoever owns
// that directory) is not followed: the phase's files would land outside it.
TEST(BeneathDir, ARootWhosePathNowHasASymlinkIsRefused) {
  TempDir tmp;
  fs::create_directories(tmp / "user/bench");
  fs::create_directories(tmp / "outside");
  const std::string root = tmp / "user/bench";
  ASSERT_OK(BeneathDir::OpenRoot(root).status());

  fs::rename(tmp / "user", tmp / "user.old");
  fs::create_directories(tmp / "elsewhere");
  fs::create_directory_symlink(tmp / "outside", tmp / "elsewhere/bench");
  fs::create_directory_symlink(tmp / "elsewhere", tmp / "user");  // user/bench -> outside
  auto swapped = BeneathDir::OpenRoot(root);
  ASSERT_FALSE(swapped.ok());
  EXPECT_EQ(swapped.status().code(), absl::StatusCode::kPermissionDenied) << swapped.status();
  EXPECT_THAT(swapped.status().message(), HasSubstr("symbolic link")) << swapped.status();
  EXPECT_THAT(swapped.status().message(), HasSubstr(root)) << swapped.status();

  // "/" itself is a root like any other.
  auto slash = BeneathDir::OpenRoot("/");
  ASSERT_OK(slash.status());
  EXPECT_EQ((*slash)->path(), "/");
}

}  // namespace
}  // namespace lockstep
