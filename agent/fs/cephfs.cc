#include "agent/fs/cephfs.h"

#include <sys/stat.h>
#include <sys/xattr.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

absl::StatusOr<std::string> GetXattr(const std::string& path, const char* name) {
  char buf[1024];
  ssize_t n = ::getxattr(path.c_str(), name, buf, sizeof(buf) - 1);
  if (n < 0) {
    const int e = errno;
    std::string msg = absl::StrFormat("getxattr %s %s: %s", path, name, std::strerror(e));
    return e == ENODATA ? absl::NotFoundError(msg) : absl::InternalError(msg);
  }
  return std::string(buf, static_cast<size_t>(n));
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

v1::FsLayout ParseCephLayout(const std::string& text) {
  v1::FsLayout l;
  l.set_raw(text);
  l.set_stripe_index(-1);
  for (absl::string_view field : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    std::pair<std::string, std::string> kv = absl::StrSplit(field, absl::MaxSplits('=', 1));
    uint64_t u = 0;
    if (kv.first == "stripe_unit" && absl::SimpleAtoi(kv.second, &u)) l.set_stripe_unit_bytes(u);
    if (kv.first == "stripe_count" && absl::SimpleAtoi(kv.second, &u)) l.set_stripe_count(u);
    if (kv.first == "object_size" && absl::SimpleAtoi(kv.second, &u)) l.set_object_size_bytes(u);
    if (kv.first == "pool") l.set_pool(kv.second);
  }
  return l;
}

absl::Status CephFs::CheckSettings(const v1::PhaseSpec& spec, const std::string& dir) const {
  if (spec.checksums() != v1::CHECKSUMS_UNCHANGED) {
    return NotOnThisFs(
        "cephfs (" + client_ + ")", "checksums",
        spec.checksums() == v1::CHECKSUMS_ON ? "true" : "false", dir,
        "switches client data CRCs (ms_crc_data) only when the client mounts; remount the "
        "clients with --ms_crc_data=false (ceph-fuse) or set ms_crc_data in their ceph.conf, and "
        "compare two runs");
  }
  if (!spec.set_stripe()) return absl::OkStatus();
  if (spec.stripe_index() >= 0) {
    return NotOnThisFs("cephfs", "stripe_index", absl::StrFormat("%d", spec.stripe_index()), dir,
                       "places objects by CRUSH, not on a chosen OST; use -1");
  }
  if (spec.stripe_count() < 0) {
    return NotOnThisFs("cephfs", "stripe_count", absl::StrFormat("%d", spec.stripe_count()), dir,
                       "has no \"all OSTs\"; give a count (objects written in parallel)");
  }
  const uint64_t su = spec.stripe_size_bytes(), os = spec.object_size_bytes();
  if (su != 0 && su % 65536 != 0) {
    return NotOnThisFs("cephfs", "stripe_size", absl::StrFormat("%u", su), dir,
                       "needs a stripe_unit that is a multiple of 64 KiB");
  }
  if (su != 0 && os != 0 && os % su != 0) {
    return NotOnThisFs("cephfs", "object_size", absl::StrFormat("%u", os), dir,
                       absl::StrFormat("needs an object_size that is a multiple of the "
                                       "stripe_unit (stripe_size = %u)",
                                       su));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::FsLayout> CephFs::GetLayout(const std::string& path) const {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrFormat("stat %s: %s", path, std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    ASSIGN_OR_RETURN(std::string text, GetXattr(path, "ceph.file.layout"));
    return ParseCephLayout(text);
  }
  // A directory without a layout of its own answers ENODATA; its new files
  // take the nearest ancestor's (the root always has one).
  for (std::string d = path;; d = Dirname(d)) {
    auto text = GetXattr(d, "ceph.dir.layout");
    if (text.ok()) {
      v1::FsLayout l = ParseCephLayout(*text);
      if (d != path) l.set_raw(absl::StrFormat("%s (inherited from %s)", *text, d));
      return l;
    }
    if (!absl::IsNotFound(text.status()) || d == "/") return text.status();
  }
}

absl::StatusOr<v1::FsLayout> CephFs::SetLayout(const std::string& dir, const std::string& at,
                                               const v1::PhaseSpec& spec) const {
  RETURN_IF_ERROR(CheckSettings(spec, dir));
  ASSIGN_OR_RETURN(v1::FsLayout now, GetLayout(dir));
  const uint64_t su = spec.stripe_size_bytes() ? spec.stripe_size_bytes() : now.stripe_unit_bytes();
  const int64_t sc = spec.stripe_count() > 0 ? spec.stripe_count() : now.stripe_count();
  uint64_t os = spec.object_size_bytes() ? spec.object_size_bytes() : now.object_size_bytes();
  if (su == 0 || os % su != 0) {
    return NotOnThisFs("cephfs", "stripe_size", absl::StrFormat("%u", su), dir,
                       absl::StrFormat("needs a stripe_unit that divides the object_size "
                                       "(%u, from %s); set object_size too",
                                       os, spec.object_size_bytes() ? "the plan" : "the directory"));
  }
  std::string value = absl::StrFormat("stripe_unit=%u stripe_count=%d object_size=%u", su, sc, os);
  if (!spec.stripe_pool().empty()) value += " pool=" + spec.stripe_pool();
  // Through the held directory (`at`), not by the path: see file_system.h.
  const std::string& target = at.empty() ? dir : at;
  if (::setxattr(target.c_str(), "ceph.dir.layout", value.data(), value.size(), 0) != 0) {
    const int e = errno;
    return absl::FailedPreconditionError(absl::StrFormat(
        "cephfs: setting ceph.dir.layout=\"%s\" on %s failed: %s%s", value, dir, std::strerror(e),
        e == EINVAL ? " (a pool that is not one of the file system's data pools, or sizes the "
                      "MDS refuses)"
                    : ""));
  }
  return GetLayout(dir);
}

absl::StatusOr<std::unique_ptr<FsTunableScope>> CephFs::SetChecksums(bool on) const {
  v1::PhaseSpec spec;
  spec.set_checksums(on ? v1::CHECKSUMS_ON : v1::CHECKSUMS_OFF);
  return CheckSettings(spec, "(the phase directory)");
}

}  // namespace lockstep
