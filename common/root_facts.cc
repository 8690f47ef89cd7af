#include "common/root_facts.h"

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "common/files.h"
#include "common/fs_type.h"

namespace lockstep {
namespace {

// An agent before wire minor 10 declared nothing: its statfs type name.
v1::FsCapabilities CapabilitiesByType(const std::string& fs_type) {
  v1::FsCapabilities c;
  const bool settings_at_prepare = fs_type.empty() || fs_type == "lustre" || fs_type == "ceph" ||
                                   fs_type == "fuse" ||
                                   absl::StartsWith(fs_type, "0x");  // unknown to the agent
  c.set_layouts(settings_at_prepare);
  c.set_checksums(settings_at_prepare);
  const FsKind* kind = FsKindNamed(fs_type);
  c.set_shared(kind != nullptr && kind->shared);
  return c;
}

}  // namespace

const v1::RootFacts* RootOf(const std::string& dir, const v1::HostFacts& facts) {
  if (facts.roots_size() == 0) return nullptr;
  if (dir.empty() || dir[0] != '/') return &facts.roots(0);
  const v1::RootFacts* best = nullptr;
  for (const v1::RootFacts& r : facts.roots()) {
    if (PathIsUnder(dir, r.path()) && (best == nullptr || r.path().size() > best->path().size())) {
      best = &r;
    }
  }
  return best;
}

v1::FsCapabilities CapabilitiesOf(const v1::RootFacts& root) {
  return root.has_capabilities() ? root.capabilities() : CapabilitiesByType(root.fs_type());
}

std::string FsNameOf(const v1::RootFacts& root) {
  if (root.fs_name().empty() || root.fs_name() == "posix") {
    return root.fs_type().empty() ? "unknown" : root.fs_type();
  }
  if (root.fs_version().empty()) return root.fs_name();
  return absl::StrFormat("%s (%s)", root.fs_name(), root.fs_version());
}

}  // namespace lockstep
