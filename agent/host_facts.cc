#include "agent/host_facts.h"

#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/build_info.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/wire_version.h"

namespace lockstep {

std::string FileSystemType(const std::string& path) {
  struct statfs sf;
  if (::statfs(path.c_str(), &sf) != 0) return "";
  switch (static_cast<unsigned long>(sf.f_type)) {
    case 0xEF53: return "ext4";
    case 0x01021994: return "tmpfs";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x0BD00BD0: return "lustre";
    case 0x47504653: return "gpfs";
    case 0x19830326: return "beegfs";
    case 0x6969: return "nfs";
    case 0x794C7630: return "overlayfs";
    case 0x65735546: return "fuse";
    case 0x2FC12FC1: return "zfs";
    case 0x00C36400: return "ceph";
    default: return absl::StrFormat("0x%x", static_cast<unsigned long>(sf.f_type));
  }
}

namespace {

std::string OsPrettyName() {
  auto text = ReadFileToString("/etc/os-release");
  if (!text.ok()) return "";
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    if (absl::ConsumePrefix(&line, "PRETTY_NAME=")) {
      line = absl::StripPrefix(absl::StripSuffix(line, "\""), "\"");
      return std::string(line);
    }
  }
  return "";
}

std::string ClockDiscipline() {
  // Cheap hints only; the controller measures the offset itself.
  if (::access("/run/chrony/chronyd.pid", F_OK) == 0 || ::access("/var/run/chrony", F_OK) == 0) {
    return "chrony running";
  }
  if (::access("/run/ntpd.pid", F_OK) == 0) return "ntpd running";
  if (::access("/run/systemd/timesync/synchronized", F_OK) == 0) {
    return "systemd-timesyncd synchronized";
  }
  return "unknown";
}

}  // namespace

v1::HostFacts GatherHostFacts(v1::Role role, const std::vector<std::string>& roots,
                              const std::string& instance_id) {
  v1::HostFacts f;
  char host[256] = {0};
  if (::gethostname(host, sizeof(host) - 1) == 0) f.set_hostname(host);
  f.set_role(role);
  f.set_agent_version(LOCKSTEP_VERSION);
  f.set_wire_version(kWireMajor);
  f.set_wire_minor(kWireMinor);
  (*f.mutable_extra())["build_commit"] = std::string(BuildCommit());
  struct utsname u;
  if (::uname(&u) == 0) {
    f.set_kernel(u.release);
    f.set_machine(u.machine);
  }
  f.set_os(OsPrettyName());
  long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  f.set_cores(cores > 0 ? static_cast<uint32_t>(cores) : 0);
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) f.set_memory_bytes(static_cast<uint64_t>(pages) * page);
  for (const std::string& r : roots) {
    v1::RootFacts* rf = f.add_roots();
    rf->set_path(r);
    rf->set_fs_type(FileSystemType(r));
    struct statvfs sv;
    if (::statvfs(r.c_str(), &sv) == 0) {
      rf->set_free_bytes(static_cast<uint64_t>(sv.f_bavail) * sv.f_frsize);
      rf->set_total_bytes(static_cast<uint64_t>(sv.f_blocks) * sv.f_frsize);
    }
  }
  f.set_clock_sync(ClockDiscipline());
  if (auto boot = ReadFileToString("/proc/sys/kernel/random/boot_id"); boot.ok()) {
    f.set_clock_id(std::string(absl::StripAsciiWhitespace(*boot)));
  }
  f.set_agent_instance(instance_id);
  f.set_pid(static_cast<uint32_t>(::getpid()));
  f.set_can_drop_caches(::geteuid() == 0 && ::access("/proc/sys/vm/drop_caches", W_OK) == 0);
  auto lustre = ReadFileToString("/sys/fs/lustre/version");
  if (!lustre.ok()) lustre = ReadFileToString("/proc/fs/lustre/version");
  if (lustre.ok()) {
    absl::string_view v = absl::StripAsciiWhitespace(*lustre);
    absl::ConsumePrefix(&v, "lustre: ");
    f.set_lustre_version(std::string(v));
  }
  f.set_agent_unix_ns(RealtimeNs());
  return f;
}

}  // namespace lockstep
