#include "agent/beneath.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif

namespace lockstep {
namespace {

constexpr uint64_t kResolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;

// Set once openat2 answered ENOSYS (or by the test hook): walk instead.
std::atomic<bool> g_walk{false};

// A descriptor closed at scope end; `fd` may be borrowed (not closed).
class Fd {
 public:
  Fd() = default;
  Fd(int fd, bool owned) : fd_(fd), owned_(owned) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)), owned_(std::exchange(o.owned_, false)) {}
  Fd& operator=(Fd&& o) noexcept {
    Reset();
    fd_ = std::exchange(o.fd_, -1);
    owned_ = std::exchange(o.owned_, false);
    return *this;
  }
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  int release() {
    owned_ = false;
    return std::exchange(fd_, -1);
  }

 private:
  void Reset() {
    if (owned_ && fd_ >= 0) {
      const int saved = errno;
      ::close(fd_);
      errno = saved;
    }
    fd_ = -1;
    owned_ = false;
  }
  int fd_ = -1;
  bool owned_ = false;
};

// `path` as components below `base`: relative, or absolute and below base.
// "." and empty components are dropped. EXDEV for ".." or an absolute path
// outside base, else 0.
int Components(const std::string& base, const std::string& path, std::vector<std::string>* out) {
  out->clear();
  std::string rel = path;
  if (!path.empty() && path[0] == '/') {
    if (path == base) {
      rel.clear();
    } else if (base == "/" || (path.size() > base.size() && path.compare(0, base.size(), base) == 0 &&
                               path[base.size()] == '/')) {
      rel = path.substr(base == "/" ? 1 : base.size() + 1);
    } else {
      return EXDEV;
    }
  }
  for (absl::string_view c : absl::StrSplit(rel, '/', absl::SkipEmpty())) {
    if (c == ".") continue;
    if (c == "..") return EXDEV;
    out->emplace_back(c);
  }
  return 0;
}

// openat2(2) beneath `dirfd` with no symlink; -1 and errno. ENOSYS switches
// every later call to the walk.
int OpenAt2(int dirfd, const std::string& rel, int flags, mode_t mode) {
  struct open_how how;
  std::memset(&how, 0, sizeof(how));
  // No O_NOFOLLOW: with O_PATH it would return the link itself; without,
  // RESOLVE_NO_SYMLINKS refuses a last component that is a link (ELOOP).
  how.flags = static_cast<uint64_t>(flags) | O_CLOEXEC;
  how.mode = (flags & O_CREAT) != 0 ? mode : 0;
  how.resolve = kResolve;
  for (int tries = 0;; ++tries) {
    const long fd = ::syscall(SYS_openat2, dirfd, rel.c_str(), &how, sizeof(how));
    if (fd >= 0) return static_cast<int>(fd);
    // EAGAIN: a concurrent rename anywhere on the file system; retry.
    if (errno == EAGAIN && tries < 16) continue;
    if (errno == EINTR) continue;
    if (errno == ENOSYS) g_walk.store(true);
    return -1;
  }
}

// One component below `dirfd`, a directory, not a symlink: ELOOP for one.
int OpenComponentDir(int dirfd, const std::string& name) {
  const int fd = ::openat(dirfd, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 || errno != ENOTDIR) return fd;
  struct stat st;
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
    errno = ELOOP;
  } else {
    errno = ENOTDIR;
  }
  return -1;
}

// The directory of comps[0, n) below `dirfd` (borrowed when n == 0).
Fd WalkDirs(int dirfd, const std::vector<std::string>& comps, size_t n) {
  if (n == 0) return Fd(dirfd, false);
  if (!g_walk.load(std::memory_order_relaxed)) {
    std::string rel;
    for (size_t i = 0; i < n; ++i) rel += (i ? "/" : "") + comps[i];
    const int fd = OpenAt2(dirfd, rel, O_PATH | O_DIRECTORY, 0);
    if (fd >= 0 || errno != ENOSYS) return Fd(fd, fd >= 0);
  }
  Fd cur(dirfd, false);
  for (size_t i = 0; i < n; ++i) {
    const int next = OpenComponentDir(cur.get(), comps[i]);
    if (next < 0) return Fd();
    cur = Fd(next, true);
  }
  return cur;
}

// The parent directory of `comps` below `dirfd` and its last name ("." for
// the directory itself). Fd of -1 and errno on failure.
Fd Parent(int dirfd, const std::vector<std::string>& comps, std::string* name) {
  if (comps.empty()) {
    name->assign(1, '.');  // not = ".": GCC 12 -Wrestrict false positive
    return Fd(dirfd, false);
  }
  *name = comps.back();
  return WalkDirs(dirfd, comps, comps.size() - 1);
}


// rm -r of `name` in `dirfd`; adds what it removed to *count. 0 or errno,
// *failed the path that failed.
int RemoveAt(int dirfd, const std::string& name, const std::string& shown, uint64_t* count,
             std::string* failed) {
  struct stat st;
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return 0;
    *failed = shown;
    return errno;
  }
  if (S_ISDIR(st.st_mode)) {
    const int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      *failed = shown;
      return errno;
    }
    DIR* d = ::fdopendir(fd);
    if (d == nullptr) {
      *failed = shown;
      const int err = errno;
      ::close(fd);
      return err;
    }
    std::vector<std::string> names;
    while (struct dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    int err = 0;
    for (const std::string& n : names) {
      err = RemoveAt(::dirfd(d), n, shown + "/" + n, count, failed);
      if (err != 0) break;
    }
    ::closedir(d);
    if (err != 0) return err;
  }
  if (::unlinkat(dirfd, name.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) != 0) {
    if (errno == ENOENT) return 0;
    *failed = shown;
    return errno;
  }
  ++*count;
  return 0;
}

struct Identity {
  uint64_t mount_id = 0;
  dev_t device = 0;
  ino_t inode = 0;
};

// statx of `path` at `dirfd` (AT_EMPTY_PATH for the descriptor itself).
int IdentityOf(int dirfd, const char* path, int flags, Identity* out) {
  struct statx stx;
  if (::statx(dirfd, path, flags | AT_SYMLINK_NOFOLLOW, STATX_INO | STATX_MNT_ID, &stx) != 0) {
    return errno;
  }
  out->mount_id = (stx.stx_mask & STATX_MNT_ID) != 0 ? stx.stx_mnt_id : 0;
  out->device = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  out->inode = stx.stx_ino;
  return 0;
}

}  // namespace

BeneathDir::BeneathDir(std::string path, int fd, std::string lead)
    : path_(std::move(path)), fd_(fd), lead_(std::move(lead)) {
  Identity id;
  if (IdentityOf(fd_, "", AT_EMPTY_PATH, &id) == 0) {
    mount_id_ = id.mount_id;
    device_ = id.device;
    inode_ = id.inode;
  }
}

BeneathDir::~BeneathDir() {
  if (fd_ >= 0) ::close(fd_);
}

absl::StatusOr<std::shared_ptr<const BeneathDir>> BeneathDir::OpenRoot(const std::string& root) {
  // From "/" with no symlink followed (openat2 beneath "/", or the walk): a
  // root is canonical, so a link on its path now means a directory on the
  // way was swapped for one since the agent started (rename(2) by whoever
  // owns a directory there), which would lead every file of the phase
  // outside the root.
  std::vector<std::string> comps;
  const int bad = root.empty() || root[0] != '/' ? EINVAL : Components("/", root, &comps);
  Fd slash(bad == 0 ? ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC) : -1, true);
  Fd fd = slash.get() < 0 ? Fd() : WalkDirs(slash.get(), comps, comps.size());
  const int err = bad != 0 ? bad : errno;
  if (fd.get() < 0) {
    if (err == ELOOP) {
      return absl::PermissionDeniedError(absl::StrFormat(
          "the root %s: a directory on its path is now a symbolic link (none was when the agent "
          "started); the agent does not follow it out of the root. Put the path back, or "
          "restart the agent with --root naming the real directory",
          root));
    }
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot open the root %s: %s; is it still a directory (and mounted)?", root,
        std::strerror(err)));
  }
  const int owned = comps.empty() ? slash.release() : fd.release();  // "/" is its own root
  return std::shared_ptr<const BeneathDir>(new BeneathDir(root, owned, ""));
}

int BeneathDir::Split(const std::string& path, std::vector<std::string>* comps) const {
  if (int err = Components(path_, path, comps); err != 0) return err;
  if (!lead_.empty()) comps->insert(comps->begin(), lead_);
  return 0;
}

absl::StatusOr<std::shared_ptr<const BeneathDir>> BeneathDir::OpenDirImpl(const std::string& path,
                                                                   bool may_be_missing) const {
  std::vector<std::string> comps;
  int err = Split(path, &comps);
  // What the new directory's root() is: this one's root, kept alive by it.
  std::shared_ptr<const BeneathDir> origin = origin_ != nullptr ? origin_ : weak_from_this().lock();
  std::string joined = path_;
  for (size_t i = lead_.empty() ? 0 : 1; i < comps.size(); ++i) {
    joined += (joined == "/" ? "" : "/") + comps[i];
  }
  if (err == 0 && may_be_missing && !comps.empty()) {
    // Its parent, and the name (there or not) resolved below it at each use.
    Fd parent = WalkDirs(fd_, comps, comps.size() - 1);
    if (parent.get() >= 0 && parent.get() == fd_) {
      parent = Fd(::fcntl(fd_, F_DUPFD_CLOEXEC, 0), true);
    }
    if (parent.get() >= 0) {
      std::shared_ptr<BeneathDir> dir(new BeneathDir(joined, parent.release(), comps.back()));
      dir->origin_ = std::move(origin);
      return std::shared_ptr<const BeneathDir>(std::move(dir));
    }
    err = errno;
  } else if (err == 0) {
    Fd fd = WalkDirs(fd_, comps, comps.size());
    if (fd.get() >= 0 && fd.get() == fd_) fd = Fd(::fcntl(fd_, F_DUPFD_CLOEXEC, 0), true);
    if (fd.get() >= 0) {
      std::shared_ptr<BeneathDir> dir(new BeneathDir(joined, fd.release(), ""));
      dir->origin_ = std::move(origin);
      return std::shared_ptr<const BeneathDir>(std::move(dir));
    }
    err = errno;
  }
  const std::string what = absl::StrFormat("cannot open the directory %s below %s: %s",
                                           err == EXDEV ? path : joined, path_,
                                           BeneathErrorText(err));
  if (err == ENOENT) return absl::NotFoundError(what);
  if (err == ENOTDIR) return absl::FailedPreconditionError(what);
  return absl::PermissionDeniedError(what);
}

absl::StatusOr<std::shared_ptr<const BeneathDir>> BeneathDir::OpenDir(
    const std::string& path) const {
  return OpenDirImpl(path, /*may_be_missing=*/false);
}

absl::StatusOr<std::shared_ptr<const BeneathDir>> BeneathDir::OpenDirToCreate(
    const std::string& path) const {
  return OpenDirImpl(path, /*may_be_missing=*/true);
}

template <typename Call>
int BeneathDir::AtParent(const std::string& path, Call&& call) const {
  std::vector<std::string> comps;
  if (int err = Split(path, &comps); err != 0) {
    errno = err;
    return -1;
  }
  std::string name;
  Fd parent = Parent(fd_, comps, &name);
  if (parent.get() < 0) return -1;
  return call(parent.get(), name.c_str());
}

int BeneathDir::Open(const std::string& path, int flags, mode_t mode) const {
  std::vector<std::string> comps;
  if (int err = Split(path, &comps); err != 0) {
    errno = err;
    return -1;
  }
  if (comps.size() > 1 && !g_walk.load(std::memory_order_relaxed)) {
    // One call for the whole path where the kernel has openat2.
    std::string rel;
    for (const std::string& c : comps) rel += (rel.empty() ? "" : "/") + c;
    const int fd = OpenAt2(fd_, rel, flags, mode);
    if (fd >= 0 || errno != ENOSYS) return fd;
  }
  std::string name;
  Fd parent = Parent(fd_, comps, &name);
  if (parent.get() < 0) return -1;
  const int fd = ::openat(parent.get(), name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0 && errno == ENOTDIR) {
    // O_PATH | O_DIRECTORY | O_NOFOLLOW on a link: say it is one.
    struct stat st;
    if (::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
      errno = ELOOP;
    } else {
      errno = ENOTDIR;
    }
  }
  return fd;
}

std::string BeneathDir::HeldPath() const {
  if (!lead_.empty()) return "";
  return absl::StrFormat("/proc/%d/fd/%d", ::getpid(), fd_);
}

int SettleDataFile(int fd, int flags) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return errno;
  if (!S_ISREG(st.st_mode)) return ENXIO;
  // Another name of the file may stand outside the roots (a hard link
  // planted at the path): writing or truncating would reach it there.
  if ((flags & O_ACCMODE) != O_RDONLY && st.st_nlink > 1) return EMLINK;
  // F_SETFL takes the status flags only (access mode and creation flags are
  // ignored): `flags` as asked, O_NONBLOCK cleared unless asked for.
  if ((flags & O_NONBLOCK) == 0 && ::fcntl(fd, F_SETFL, flags) != 0) return errno;
  if ((flags & O_TRUNC) != 0 && st.st_size > 0 && ::ftruncate(fd, 0) != 0) return errno;
  return 0;
}

int BeneathDir::OpenFile(const std::string& path, int flags, mode_t mode) const {
  // O_TRUNC waits until the file is known to be one the phase may change.
  const int fd = Open(path, (flags & ~O_TRUNC) | O_NONBLOCK, mode);
  if (fd < 0) return -1;
  const int err = SettleDataFile(fd, flags);
  if (err == 0) return fd;
  ::close(fd);
  errno = err;
  return -1;
}

int BeneathDir::Mkdir(const std::string& path, mode_t mode) const {
  return AtParent(path, [&](int dirfd, const char* name) { return ::mkdirat(dirfd, name, mode); });
}

int BeneathDir::Rmdir(const std::string& path) const {
  return AtParent(path,
                  [&](int dirfd, const char* name) { return ::unlinkat(dirfd, name, AT_REMOVEDIR); });
}

int BeneathDir::Unlink(const std::string& path) const {
  return AtParent(path, [&](int dirfd, const char* name) { return ::unlinkat(dirfd, name, 0); });
}

int BeneathDir::Stat(const std::string& path, struct stat* st) const {
  return AtParent(path, [&](int dirfd, const char* name) {
    return ::fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW);
  });
}

int BeneathDir::Rename(const std::string& from, const std::string& to, unsigned flags) const {
  std::vector<std::string> from_comps, to_comps;
  if (int err = Split(from, &from_comps); err != 0) {
    errno = err;
    return -1;
  }
  if (int err = Split(to, &to_comps); err != 0) {
    errno = err;
    return -1;
  }
  std::string from_name, to_name;
  Fd from_dir = Parent(fd_, from_comps, &from_name);
  if (from_dir.get() < 0) return -1;
  Fd to_dir = Parent(fd_, to_comps, &to_name);
  if (to_dir.get() < 0) return -1;
  if (flags != 0) {
    return ::renameat2(from_dir.get(), from_name.c_str(), to_dir.get(), to_name.c_str(), flags);
  }
  return ::renameat(from_dir.get(), from_name.c_str(), to_dir.get(), to_name.c_str());
}

absl::StatusOr<uint64_t> BeneathDir::RemoveTree(const std::string& path) const {
  std::vector<std::string> comps;
  std::string name;
  Fd parent;
  if (int err = Split(path, &comps); err != 0) {
    errno = err;
  } else {
    parent = Parent(fd_, comps, &name);
  }
  if (parent.get() < 0) {
    if (errno == ENOENT) return 0;
    return absl::InternalError(
        absl::StrFormat("cannot remove %s: %s", path, BeneathErrorText(errno)));
  }
  uint64_t count = 0;
  std::string failed;
  if (int err = RemoveAt(parent.get(), name, path, &count, &failed); err != 0) {
    return absl::InternalError(
        absl::StrFormat("cannot remove %s: %s", failed, BeneathErrorText(err)));
  }
  return count;
}

absl::Status BeneathDir::CheckStillAtPath() const {
  // No statx(2) answer for the held descriptor: nothing to compare.
  if (inode_ == 0 && device_ == 0) return absl::OkStatus();
  Identity now;
  // A directory still to be made is checked by its parent, the one held.
  const std::string held = lead_.empty() ? path_ : path_.substr(0, path_.rfind('/'));
  const int err = IdentityOf(AT_FDCWD, (held.empty() ? "/" : held).c_str(), 0, &now);
  if (err == 0 && now.mount_id == mount_id_ && now.device == device_ && now.inode == inode_) {
    return absl::OkStatus();
  }
  const std::string was = absl::StrFormat("mount id %u, device %u:%u", mount_id_,
                                          major(device_), minor(device_));
  const std::string is =
      err != 0 ? absl::StrFormat("it cannot be reached (%s)", std::strerror(err))
      : now.mount_id != mount_id_ || now.device != device_
          ? absl::StrFormat("it is on mount id %u, device %u:%u", now.mount_id,
                            major(now.device), minor(now.device))
          : "it is another directory (same mount, another inode)";
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s is no longer the directory the phase was prepared in (%s): %s; its mount was "
      "unmounted (umount -l), another was mounted over it, or a component was replaced",
      path_, was, is));
}

std::string BeneathErrorText(int err) {
  if (err == ELOOP) {
    return "a symbolic link on the path (the agent follows none below its roots)";
  }
  if (err == EXDEV) return "the path leaves the phase directory (\"..\" or outside it)";
  if (err == ENXIO) {
    return "not a regular file (a FIFO, socket or device file stands at the path; a data file "
           "must be a regular file)";
  }
  if (err == EMLINK) {
    return "the file has more than one name (a hard link; another name may be outside the "
           "agent's roots), so the agent does not write it; remove the file or its other names";
  }
  return std::strerror(err);
}

int64_t MountIdOfPath(const std::string& path) {
  Identity id;
  if (IdentityOf(AT_FDCWD, path.c_str(), 0, &id) != 0) return -1;
  return static_cast<int64_t>(id.mount_id);
}

void BeneathUseWalkForTesting(bool walk) { g_walk.store(walk); }

}  // namespace lockstep
