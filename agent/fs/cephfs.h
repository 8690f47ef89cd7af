// CephFS behind the FileSystem interface (the kernel client or ceph-fuse):
// layouts through the ceph.dir.layout / ceph.file.layout virtual xattrs
// (stripe_unit, stripe_count, object_size, pool), set on the phase
// directory before its files exist, so that they inherit it.
//
// No OST index (stripe_index) and no "all OSTs" (stripe_count = -1): refused.
// object_size must be a multiple of stripe_unit (the MDS refuses otherwise;
// the check names both values first). Client data CRCs (ms_crc_data) are
// read when the client mounts, not at run time: `checksums` is refused with
// how to remount.
#ifndef LOCKSTEP_AGENT_FS_CEPHFS_H_
#define LOCKSTEP_AGENT_FS_CEPHFS_H_

#include <string>

#include "agent/fs/file_system.h"

namespace lockstep {

class CephFs : public FileSystem {
 public:
  explicit CephFs(std::string client) : client_(std::move(client)) {}
  std::string Name() const override { return "cephfs"; }
  // The client kind: "ceph-fuse" or "kernel".
  std::string Version() const override { return client_; }
  // Layouts; no run-time checksums (ms_crc_data is read at mount); shared.
  v1::FsCapabilities Capabilities() const override {
    v1::FsCapabilities c;
    c.set_layouts(true);
    c.set_shared(true);
    return c;
  }
  absl::Status CheckSettings(const v1::PhaseSpec& spec, const std::string& dir) const override;
  absl::StatusOr<v1::FsLayout> SetLayout(const std::string& dir, const std::string& at,
                                         const v1::PhaseSpec& spec) const override;
  // A directory's own layout, else the nearest ancestor's (what its new
  // files get); a file's layout.
  absl::StatusOr<v1::FsLayout> GetLayout(const std::string& path) const override;
  absl::StatusOr<std::unique_ptr<FsTunableScope>> SetChecksums(bool on) const override;

 private:
  std::string client_;
};

// "stripe_unit=65536 stripe_count=4 object_size=4194304 pool=cephfs_data".
v1::FsLayout ParseCephLayout(const std::string& text);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_FS_CEPHFS_H_
