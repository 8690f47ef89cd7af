#include "agent/fs/file_system.h"

#include <filesystem>

#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "agent/fs/cephfs.h"
#include "agent/fs/lustre_fs.h"
#include "agent/fs/lustre_stats.h"
#include "common/files.h"
#include "common/fs_type.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

// Ext4, XFS, tmpfs, NFS, ...: files and the page cache, nothing more.
class PosixFs : public FileSystem {
 public:
  PosixFs(std::string type, bool shared) : type_(std::move(type)), shared_(shared) {}
  std::string Name() const override { return "posix"; }
  std::string Version() const override { return type_; }
  // No layout and no tunables; shared when it is a network or cluster file
  // system (common/fs_type.h).
  v1::FsCapabilities Capabilities() const override {
    v1::FsCapabilities c;
    c.set_shared(shared_);
    return c;
  }

 private:
  std::string type_;  // the statfs type name, "ext4"; a FUSE mount's type, "fuse.sshfs"
  bool shared_;
};

// The fstype field of the mountinfo line whose mount point holds `dir`
// most closely ("fuse.ceph-fuse"), "" when none matches.
std::string MountTypeOf(const std::string& dir, const std::string& mountinfo_path) {
  auto text = ReadFileToString(mountinfo_path);
  if (!text.ok()) return "";
  std::string best_type;
  size_t best_len = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    if (f.size() < 10) continue;
    size_t dash = 6;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (dash + 1 >= f.size()) continue;
    // Mount points escape blanks and backslashes as octal.
    const std::string point = absl::StrReplaceAll(
        f[4], {{"\\040", " "}, {"\\011", "\t"}, {"\\012", "\n"}, {"\\134", "\\"}});
    if (PathIsUnder(dir, point) && point.size() >= best_len) {
      best_len = point.size();
      best_type = f[dash + 1];
    }
  }
  return best_type;
}

}  // namespace

absl::Status NotOnThisFs(const std::string& fs, const std::string& key, const std::string& value,
                         const std::string& dir, const std::string& why) {
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s = %s: the file system of %s is %s, which %s; drop %s from the phase or point dir at "
      "a file system that has it",
      key, value, dir, fs, why, key));
}

absl::Status FileSystem::CheckSettings(const v1::PhaseSpec& spec, const std::string& dir) const {
  const std::string fs = Version().empty() ? Name() : Version();
  if (spec.set_stripe()) {
    return NotOnThisFs(fs, "stripe_count/stripe_size/stripe_index/stripe_pool/object_size",
                       "(a layout)", dir,
                       "is not Lustre or CephFS and has no per-directory striping (on Lustre "
                       "nodes the agent also needs --allow_lustre)");
  }
  if (spec.checksums() != v1::CHECKSUMS_UNCHANGED) {
    return NotOnThisFs(fs, "checksums", spec.checksums() == v1::CHECKSUMS_ON ? "true" : "false",
                       dir,
                       "is not Lustre and has no client data checksums to switch (on Lustre "
                       "nodes the agent also needs --allow_lustre)");
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::FsLayout> FileSystem::SetLayout(const std::string& dir,
                                                   const std::string& /*at*/,
                                                   const v1::PhaseSpec& spec) const {
  RETURN_IF_ERROR(CheckSettings(spec, dir));
  return GetLayout(dir);
}

absl::StatusOr<v1::FsLayout> FileSystem::GetLayout(const std::string& path) const {
  return absl::UnimplementedError(
      absl::StrFormat("%s: %s keeps no layout", path, Name()));
}

absl::StatusOr<std::unique_ptr<FsTunableScope>> FileSystem::SetChecksums(bool on) const {
  return absl::FailedPreconditionError(absl::StrFormat(
      "checksums = %s: %s has no client data checksums to switch", on ? "true" : "false",
      Name()));
}

absl::StatusOr<std::unique_ptr<FileSystem>> FileSystemFor(const std::string& dir,
                                                          const FileSystemContext& ctx) {
  absl::StatusOr<FsType> type = FsTypeOf(dir);
  if (!type.ok()) {
    if (absl::IsNotFound(type.status()) || absl::IsPermissionDenied(type.status())) {
      return type.status();
    }
    return absl::FailedPreconditionError(std::string(type.status().message()) +
                                         " (a mount that is gone or hung?)");
  }
  if (type->magic == kLustreSuperMagic || ctx.lustre_any_fs) {
    return std::unique_ptr<FileSystem>(std::make_unique<LustreFs>(ctx));
  }
  if (type->magic == kCephSuperMagic) {
    return std::unique_ptr<FileSystem>(std::make_unique<CephFs>("kernel"));
  }
  if (type->magic == kFuseSuperMagic) {
    std::error_code ec;
    const std::string canonical = std::filesystem::canonical(dir, ec).string();
    const std::string mount_type = MountTypeOf(ec ? dir : canonical, ctx.mountinfo_path);
    if (mount_type == "fuse.ceph-fuse" || mount_type == "fuse.ceph") {
      return std::unique_ptr<FileSystem>(std::make_unique<CephFs>("ceph-fuse"));
    }
    return std::unique_ptr<FileSystem>(
        std::make_unique<PosixFs>(mount_type.empty() ? "fuse" : mount_type, true));
  }
  const FsKind* kind = FsKindOf(type->magic);
  return std::unique_ptr<FileSystem>(
      std::make_unique<PosixFs>(type->name, kind != nullptr && kind->shared));
}

std::vector<FsStatsSource> DefaultFsStatsSources() { return {LustreStatsSource()}; }

}  // namespace lockstep
