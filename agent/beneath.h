// The one way the agent touches a phase's files: through a directory it
// holds open. A phase's directory is opened beneath its allowed root at
// Prepare (the root's descriptor, then the path below it), and every file
// operation of the phase afterwards — its tasks, Cleanup, the lease
// watchdog's removal — resolves relative to that descriptor with no symbolic
// link followed and no way above it: openat2(2) with RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS where the kernel has it, else O_NOFOLLOW | O_DIRECTORY
// component by component. A component swapped for a symlink to a directory
// outside (between Prepare and Start, between transfers) makes the operation
// fail with ELOOP; ".." and an absolute path outside the directory fail with
// EXDEV. Nothing is ever written through the link.
//
// Thread-safe: a BeneathDir is immutable after it is opened; any thread may
// use it. Shared (std::shared_ptr) by the phase runner and the session's
// leftovers, so that the files are removed through the same directory they
// were written in.
#ifndef LOCKSTEP_AGENT_BENEATH_H_
#define LOCKSTEP_AGENT_BENEATH_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace lockstep {

class BeneathDir : public std::enable_shared_from_this<BeneathDir> {
 public:
  // Opens `root`, a directory the agent trusts (an allowed root, canonical:
  // AllowedRoots), from "/" with no symlink followed, and records its mount.
  // PermissionDenied naming the root when a directory on its path is now a
  // symlink (swapped since the agent started); FailedPrecondition naming it
  // when it cannot be opened as a directory.
  static absl::StatusOr<std::shared_ptr<const BeneathDir>> OpenRoot(const std::string& root);

  // The directory `path` below this one (relative, or absolute below
  // path()), opened beneath it with no symlink followed; its path() is the
  // joined path. PermissionDenied (a symlink or ".." on the way: names the
  // path and says why), NotFound, FailedPrecondition (not a directory).
  absl::StatusOr<std::shared_ptr<const BeneathDir>> OpenDir(const std::string& path) const;
  // OpenDir, but a missing last component is no error: the directory
  // returned holds its parent and resolves the missing name at each use, so
  // that Mkdir(path()) makes it (a phase directory that its Prepare or
  // another agent creates: mdtest -d, datagen, checkpoints).
  absl::StatusOr<std::shared_ptr<const BeneathDir>> OpenDirToCreate(const std::string& path) const;

  ~BeneathDir();
  BeneathDir(const BeneathDir&) = delete;
  BeneathDir& operator=(const BeneathDir&) = delete;

  // The path the directory had when it was opened (messages, TaskPath).
  const std::string& path() const { return path_; }
  // The root this directory was opened below (OpenDir or OpenDirToCreate of
  // a root, or of a directory opened from one), held as long as this one;
  // a root is its own. Its operations take this directory's paths (absolute
  // below path()) and resolve every component from the root each time, as a
  // program that names its files by full path does (mdtest).
  const BeneathDir& root() const { return origin_ != nullptr ? *origin_ : *this; }
  // The descriptor held: the directory, or its parent for a directory still
  // to be made (OpenDirToCreate). For fstatvfs/ioctl of its file system.
  int fd() const { return fd_; }
  // The directory held, as a path that leads to it and nowhere else:
  // "/proc/<agent pid>/fd/<fd>", a link the kernel resolves to the very
  // directory held, whatever became of its path since (a component swapped
  // for a symlink). For what takes only a path: a program the agent starts
  // (lfs setstripe), setxattr. Empty for a directory still to be made.
  std::string HeldPath() const;

  // The operations, as their system calls: `path` is relative to this
  // directory or absolute below path() (the workloads build their paths
  // from path()). They return what the call returns, -1 with errno on
  // failure: ELOOP for a symlink anywhere on the way (the last component
  // included), EXDEV for ".." or a path outside path(), the call's own
  // errno otherwise. Open adds O_NOFOLLOW | O_CLOEXEC; Stat does not follow
  // a last symlink (lstat); Rename works between any two paths below.
  int Open(const std::string& path, int flags, mode_t mode = 0) const;
  // Open for a task's data file, one that a plan may point at among files
  // others can write (a READ of an existing data set, a rewrite, a
  // directory a user owns): anything but a regular file is refused with
  // ENXIO, and a file opened for writing that has more than one name with
  // EMLINK (BeneathErrorText says so). A FIFO, socket or device planted at
  // the name would otherwise block the open or the reads, and a hard link
  // to a file outside the roots would have that file written: the open is
  // non-blocking and without O_TRUNC, then SettleDataFile checks the file
  // and applies `flags`. Costs an fstat and an fcntl per open.
  int OpenFile(const std::string& path, int flags, mode_t mode = 0) const;
  int Mkdir(const std::string& path, mode_t mode) const;
  int Rmdir(const std::string& path) const;
  int Unlink(const std::string& path) const;
  int Stat(const std::string& path, struct stat* st) const;
  // `flags` as renameat2(2)'s (RENAME_NOREPLACE); 0 is renameat(2).
  int Rename(const std::string& from, const std::string& to, unsigned flags = 0) const;

  // rm -r of `path` beneath this directory: a symlink in the tree is
  // removed, never followed. A missing path is no error. Returns how many
  // entries it removed; errors name the path.
  absl::StatusOr<uint64_t> RemoveTree(const std::string& path) const;

  // OK while path() still names the directory held (same mount, same
  // inode). FailedPrecondition naming the directory and its mount when the
  // path now leads elsewhere or nowhere: its mount was unmounted (umount -l),
  // another was mounted over it, or a component was replaced.
  absl::Status CheckStillAtPath() const;

  // The mount id (statx STATX_MNT_ID; 0 where the kernel has none) and
  // device of the held directory.
  uint64_t mount_id() const { return mount_id_; }
  dev_t device() const { return device_; }

 private:
  BeneathDir(std::string path, int fd, std::string lead);
  absl::StatusOr<std::shared_ptr<const BeneathDir>> OpenDirImpl(const std::string& path,
                                                         bool may_be_missing) const;
  // `path` as components below fd_ (lead_ first); 0 or EXDEV.
  int Split(const std::string& path, std::vector<std::string>* comps) const;
  template <typename Call>
  int AtParent(const std::string& path, Call&& call) const;

  std::string path_;
  int fd_ = -1;
  std::string lead_;  // a missing last component (OpenDirToCreate), resolved below fd_
  std::shared_ptr<const BeneathDir> origin_;  // root(); null for a root
  uint64_t mount_id_ = 0;
  dev_t device_ = 0;
  ino_t inode_ = 0;
};

// For `fd`, just opened with O_NONBLOCK and without O_TRUNC at a data path
// (OpenFile, or an openat of a workload that holds its directory): 0 when it
// is a regular file, and one with a single name when `flags` writes, then
// made as `flags` asks (O_NONBLOCK cleared unless asked, emptied for
// O_TRUNC); else the errno (ENXIO, EMLINK, or the call's), `fd` left open.
int SettleDataFile(int fd, int flags);

// A sentence for an errno of a BeneathDir operation: ELOOP and EXDEV say
// that the agent follows no symlink and leaves no directory below its
// roots, ENXIO that a data file is no regular file and EMLINK that one to
// write has another name (OpenFile); others are
// strerror's.
std::string BeneathErrorText(int err);

// The mount id of what `path` names now (statx, no symlink followed at the
// end), 0 when the kernel reports none; -1 when it cannot be reached.
int64_t MountIdOfPath(const std::string& path);

// TESTS ONLY: true makes every BeneathDir use the component walk, as on a
// kernel without openat2 (ENOSYS).
void BeneathUseWalkForTesting(bool walk);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_BENEATH_H_
