#include "agent/host_facts.h"

#include <dirent.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/fs/lustre_tools.h"
#include "common/build_info.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/fs_type.h"
#include "common/wire_version.h"

namespace lockstep {


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

// The entries of `dir`, sorted, without "." and "..".
std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// The first line of a sysfs file, trimmed ("" when unreadable).
std::string SysValue(const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return "";
  absl::string_view v = *text;
  v = v.substr(0, v.find('\n'));
  return std::string(absl::StripAsciiWhitespace(v));
}

// A number file ("32768\n"); 0 when unreadable or not a number ("max").
uint64_t SysNumber(const std::string& path) {
  uint64_t v = 0;
  return absl::SimpleAtoi(SysValue(path), &v) ? v : 0;
}

std::string CpuModel(const std::string& root) {
  auto text = ReadFileToString(root + "/proc/cpuinfo");
  if (!text.ok()) return "";
  // x86: "model name"; arm64: "Processor" or none; POWER: "cpu"; s390: "processor 0".
  for (const char* key : {"model name", "Processor", "cpu model", "cpu"}) {
    for (absl::string_view line : absl::StrSplit(*text, '\n')) {
      const size_t colon = line.find(':');
      if (colon == absl::string_view::npos) continue;
      if (absl::StripAsciiWhitespace(line.substr(0, colon)) != key) continue;
      absl::string_view v = absl::StripAsciiWhitespace(line.substr(colon + 1));
      if (!v.empty()) return std::string(v);
    }
  }
  return "";
}

std::string NicKind(const std::string& type) {
  if (type == "1") return "ether";
  if (type == "32") return "infiniband";
  return type.empty() ? "" : "arphrd " + type;
}

void GatherNics(const std::string& root, v1::HostFacts* facts) {
  const std::string base = root + "/sys/class/net/";
  for (const std::string& name : Entries(base)) {
    const std::string dir = base + name + "/";
    const std::string type = SysValue(dir + "type");
    if (type == "772" || name == "lo") continue;  // ARPHRD_LOOPBACK
    const std::string state = SysValue(dir + "operstate");
    if (state != "up" && state != "unknown") continue;
    v1::NicFacts* n = facts->add_nics();
    n->set_name(name);
    // "speed" is -1 (read as not a number) or unreadable when the link
    // does not say.
    n->set_speed_mbit_per_s(SysNumber(dir + "speed"));
    n->set_mtu(static_cast<uint32_t>(SysNumber(dir + "mtu")));
    n->set_kind(NicKind(type));
  }
}

void GatherBlockDevices(const std::string& root, v1::HostFacts* facts) {
  const std::string base = root + "/sys/block/";
  for (const std::string& name : Entries(base)) {
    if (absl::StartsWith(name, "loop") || absl::StartsWith(name, "ram") ||
        absl::StartsWith(name, "zram") || absl::StartsWith(name, "dm-")) {
      continue;
    }
    const std::string dir = base + name + "/";
    v1::BlockDeviceFacts* b = facts->add_block_devices();
    b->set_name(name);
    b->set_model(SysValue(dir + "device/model"));
    b->set_size_bytes(SysNumber(dir + "size") * 512);
    b->set_rotational(SysValue(dir + "queue/rotational") == "1");
  }
}

}  // namespace

void GatherThreadLimit(const std::string& root, v1::HostFacts* facts) {
  const std::string r = root == "/" ? "" : root;
  struct Limit {
    uint64_t limit;
    uint64_t in_use;
    std::string name;
  };
  std::vector<Limit> limits;
  // "0.00 0.01 0.05 2/345 6789": 345 threads on the system.
  uint64_t system_threads = 0;
  if (auto loadavg = ReadFileToString(r + "/proc/loadavg"); loadavg.ok()) {
    std::vector<absl::string_view> f = absl::StrSplit(*loadavg, ' ', absl::SkipEmpty());
    if (f.size() >= 4) {
      std::pair<absl::string_view, absl::string_view> run_total = absl::StrSplit(f[3], '/');
      (void)absl::SimpleAtoi(run_total.second, &system_threads);
    }
  }
  if (system_threads > 0) {
    if (uint64_t v = SysNumber(r + "/proc/sys/kernel/threads-max"); v > 0) {
      limits.push_back({v, system_threads, "kernel.threads-max"});
    }
    if (uint64_t v = SysNumber(r + "/proc/sys/kernel/pid_max"); v > 0) {
      limits.push_back({v, system_threads, "kernel.pid_max"});
    }
  }
  // cgroup v2: "0::/system.slice/lockstep-agent.service".
  if (auto cgroup = ReadFileToString(r + "/proc/self/cgroup"); cgroup.ok()) {
    for (absl::string_view line : absl::StrSplit(*cgroup, '\n')) {
      if (!absl::ConsumePrefix(&line, "0::")) continue;
      const std::string dir = absl::StrCat(r, "/sys/fs/cgroup", line);
      const uint64_t max = SysNumber(dir + "/pids.max");
      if (max > 0) {
        limits.push_back({max, SysNumber(dir + "/pids.current"),
                          absl::StrCat("pids.max of cgroup ", line)});
      }
    }
  }
  const Limit* tightest = nullptr;
  for (const Limit& l : limits) {
    const uint64_t room = l.limit > l.in_use ? l.limit - l.in_use : 0;
    if (tightest == nullptr ||
        room < (tightest->limit > tightest->in_use ? tightest->limit - tightest->in_use : 0)) {
      tightest = &l;
    }
  }
  if (tightest == nullptr) return;
  facts->set_thread_limit(tightest->limit);
  facts->set_threads_in_use(tightest->in_use);
  facts->set_thread_limit_name(tightest->name);
}

void GatherHardwareFacts(const std::string& root, v1::HostFacts* facts) {
  const std::string r = root == "/" ? "" : root;
  facts->set_cpu_model(CpuModel(r));
  GatherNics(r, facts);
  GatherBlockDevices(r, facts);
}

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
  if (absl::StatusOr<std::string> lustre = LustreVersionFromFiles(DefaultLustreVersionFiles());
      lustre.ok()) {
    f.set_lustre_version(*std::move(lustre));
  }
  GatherHardwareFacts("/", &f);
  GatherThreadLimit("/", &f);
  f.set_agent_unix_ns(RealtimeNs());
  return f;
}

}  // namespace lockstep
