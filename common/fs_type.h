// The file systems Lockstep tells apart by statfs(2) f_type: one table for
// the name a root's file system is reported by (RootFacts.fs_type), whether
// several hosts see its files (shared), and whether the kernel checks a
// path's names with a server or daemon at each lookup (names_revalidated).
// Every statfs magic number in the code is here; the agent's fs/ layer and
// the controller's --local checks ask this table.
#ifndef LOCKSTEP_COMMON_FS_TYPE_H_
#define LOCKSTEP_COMMON_FS_TYPE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace lockstep {

inline constexpr uint32_t kLustreSuperMagic = 0x0BD00BD0;
inline constexpr uint32_t kCephSuperMagic = 0x00C36400;  // the kernel client
inline constexpr uint32_t kFuseSuperMagic = 0x65735546;  // ceph-fuse, sshfs, ...

struct FsKind {
  uint32_t magic = 0;
  const char* name = "";  // "ext4", "lustre", "ceph", ...
  // Other hosts can see the same files (network and cluster file systems;
  // FUSE counts as shared, since it is where ceph-fuse and sshfs live).
  bool shared = false;
  // A lookup checks each name with the server or daemon (the kernel
  // revalidates its cached entries: FUSE, NFS, CephFS, Lustre, SMB, 9P,
  // GPFS, BeeGFS, AFS, GFS2, OCFS2, OrangeFS), so a path of N directories
  // costs N lookups that may leave the host. False where the dentry cache
  // answers a path walk (ext4, xfs, btrfs, tmpfs, ...).
  bool names_revalidated = false;
};

// The table's row for `magic`, or nullptr for a type it does not know.
const FsKind* FsKindOf(uint64_t magic);
// The row named `name` ("cephfs" is also "ceph"), or nullptr.
const FsKind* FsKindNamed(const std::string& name);
// The row's name, or hex ("0x1234abcd") for a type the table does not know.
std::string FsTypeName(uint64_t magic);

struct FsType {
  uint64_t magic = 0;  // statfs f_type
  std::string name;    // FsTypeName(magic)
};

// statfs(path). NotFound / PermissionDenied name the path; other errors are
// Internal.
absl::StatusOr<FsType> FsTypeOf(const std::string& path);
// FsTypeOf(path)'s name, "" when statfs fails. The agent reports it per root
// (RootFacts.fs_type); the controller asks it of its own --local root.
std::string FileSystemType(const std::string& path);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_FS_TYPE_H_
