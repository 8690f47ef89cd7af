#include "common/fs_type.h"

#include <sys/statfs.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"

namespace lockstep {
namespace {

//  magic, name, shared, names_revalidated
constexpr FsKind kKinds[] = {
    {0xEF53, "ext4", false, false},
    {0x58465342, "xfs", false, false},
    {0x9123683E, "btrfs", false, false},
    {0x01021994, "tmpfs", false, false},
    {0x794C7630, "overlayfs", false, false},
    {0x2FC12FC1, "zfs", false, false},
    {0x9FA0, "proc", false, false},
    {0x62656572, "sysfs", false, false},
    {kLustreSuperMagic, "lustre", true, true},
    {kCephSuperMagic, "ceph", true, true},
    {kFuseSuperMagic, "fuse", true, true},
    {0x6969, "nfs", true, true},
    {0x47504653, "gpfs", true, true},
    {0x19830326, "beegfs", true, true},
    {0xFF534D42, "cifs", true, true},
    {0xFE534D42, "smb2", true, true},
    {0x517B, "smb", true, true},
    {0x01021997, "9p", true, true},
    {0x5346414F, "afs", true, true},
    {0x6B414653, "kafs", true, true},
    {0x01161970, "gfs2", true, true},
    {0x7461636F, "ocfs2", true, true},
    {0x20030528, "orangefs", true, true},
};

}  // namespace

const FsKind* FsKindOf(uint64_t magic) {
  for (const FsKind& k : kKinds) {
    if (k.magic == static_cast<uint32_t>(magic)) return &k;
  }
  return nullptr;
}

const FsKind* FsKindNamed(const std::string& name) {
  const std::string n = name == "cephfs" ? "ceph" : name;
  for (const FsKind& k : kKinds) {
    if (n == k.name) return &k;
  }
  return nullptr;
}

std::string FsTypeName(uint64_t magic) {
  const FsKind* k = FsKindOf(magic);
  return k != nullptr ? k->name : absl::StrFormat("0x%x", static_cast<uint32_t>(magic));
}

absl::StatusOr<FsType> FsTypeOf(const std::string& path) {
  struct statfs st;
  if (::statfs(path.c_str(), &st) != 0) {
    const int err = errno;
    const std::string msg = absl::StrFormat("statfs %s: %s", path, std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(msg);
    if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(msg);
    return absl::InternalError(msg);
  }
  FsType t;
  t.magic = static_cast<uint32_t>(st.f_type);
  t.name = FsTypeName(t.magic);
  return t;
}

std::string FileSystemType(const std::string& path) {
  absl::StatusOr<FsType> t = FsTypeOf(path);
  return t.ok() ? t->name : "";
}

}  // namespace lockstep
