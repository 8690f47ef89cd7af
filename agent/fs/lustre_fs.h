// Lustre behind the FileSystem interface: layouts through `lfs setstripe` /
// `lfs getstripe -d`, client checksums through `lctl set_param
// osc.*.checksums` (restored per OSC), the version from /sys or lctl. The
// tools themselves are agent/fs/lustre_tools.h; they run only with --allow_lustre.
#ifndef LOCKSTEP_AGENT_FS_LUSTRE_FS_H_
#define LOCKSTEP_AGENT_FS_LUSTRE_FS_H_

#include <map>
#include <memory>
#include <string>

#include "agent/fs/file_system.h"
#include "agent/fs/lustre_tools.h"

namespace lockstep {

class LustreFs : public FileSystem {
 public:
  explicit LustreFs(const FileSystemContext& ctx) : ctx_(ctx) {}
  std::string Name() const override { return "lustre"; }
  std::string Version() const override { return ctx_.lustre_version; }
  // Layouts and checksums (Prepare also needs --allow_lustre); shared.
  v1::FsCapabilities Capabilities() const override {
    v1::FsCapabilities c;
    c.set_layouts(true);
    c.set_checksums(true);
    c.set_shared(true);
    return c;
  }
  absl::Status CheckSettings(const v1::PhaseSpec& spec, const std::string& dir) const override;
  absl::StatusOr<v1::FsLayout> SetLayout(const std::string& dir, const std::string& at,
                                         const v1::PhaseSpec& spec) const override;
  absl::StatusOr<v1::FsLayout> GetLayout(const std::string& path) const override;
  absl::StatusOr<std::unique_ptr<FsTunableScope>> SetChecksums(bool on) const override;
  // The lock LRU of every namespace (ldlm.namespaces.*.lru_size=clear).
  // Needs --allow_lustre.
  bool HasClientCaches() const override { return true; }
  absl::Status DropClientCaches() const override;

 private:
  const FileSystemContext ctx_;
};

// The agent's Lustre support, set up once as it starts: the tools of
// `options` (the caller keeps them for the agent's life) and, in *ctx, what
// LustreFs reads of them. With `allowed` (--allow_lustre) it asks the
// version once (lctl may take a while; a client upgrade restarts the
// agent) and, on an OSS, counts the OSTs it serves into
// (*extra_facts)["lustre_osts"] for a backend phase's obdfilter survey.
std::unique_ptr<LustreTools> SetUpLustre(const LustreToolsOptions& options, bool allowed,
                                         v1::Role role, FileSystemContext* ctx,
                                         std::map<std::string, std::string>* extra_facts);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_FS_LUSTRE_FS_H_
