// The reader of one host sample (agent/telemetry_sources.h): the kernel's
// text files through agent/procfs.h's parsers, the block devices and
// interfaces the options select, the file systems' stats sources and the
// shared process scan.
#include "agent/telemetry_sources.h"

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/process_cpu.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

std::string ProcPath(const std::string& root, std::string_view rel) {
  return absl::StrFormat("%s/%s", root, rel);
}

bool IsVirtualDisk(const std::string& name) {
  return absl::StartsWith(name, "loop") || absl::StartsWith(name, "ram") ||
         absl::StartsWith(name, "zram");
}

// Of `all`, the counters that each name in `wanted` names (by their `name`
// field), copied into *selected under that name. Returns the names `all`
// lacks, in the order of `wanted`.
template <typename Counters>
std::vector<std::string> SelectNamed(const std::vector<std::string>& wanted,
                                     const std::vector<Counters>& all,
                                     std::string Counters::*name,
                                     std::map<std::string, Counters>* selected) {
  std::vector<std::string> missing;
  for (const std::string& want : wanted) {
    auto it = std::find_if(all.begin(), all.end(),
                           [&](const Counters& c) { return c.*name == want; });
    if (it != all.end()) {
      (*selected)[want] = *it;
    } else {
      missing.push_back(want);
    }
  }
  return missing;
}

}  // namespace

absl::StatusOr<HostSample> HostSampleReader::Read() {
  HostSample s;
  s.mono_ns = MonotonicNs();
  s.unix_ns = RealtimeNs();
  const std::string& proc = options_.proc_root;

  std::string stat_path = ProcPath(proc, "stat");
  ASSIGN_OR_RETURN(std::string stat_text, ReadFileToString(stat_path));
  absl::StatusOr<ProcStat> stat = ParseProcStat(stat_text);
  if (!stat.ok()) return Annotate(stat.status(), stat_path);
  s.stat = *stat;

  auto read_parse = [&](std::string_view rel, auto parse, auto* out, bool* have) {
    std::string path = ProcPath(proc, rel);
    absl::StatusOr<std::string> text = ReadFileToString(path);
    if (!text.ok()) {
      s.warnings.push_back(std::string(text.status().message()));
      return;
    }
    auto parsed = parse(*text);
    if (!parsed.ok()) {
      s.warnings.push_back(absl::StrFormat("%s: %s", path, parsed.status().message()));
      return;
    }
    *out = std::move(*parsed);
    if (have != nullptr) *have = true;
  };
  read_parse("loadavg", ParseLoadAvg, &s.load, &s.have_load);
  read_parse("meminfo", ParseMemInfo, &s.mem, &s.have_mem);

  std::vector<DiskCounters> disks;
  read_parse("diskstats", ParseDiskStats, &disks, nullptr);
  SelectDisks(disks, &s);

  std::vector<NetCounters> nets;
  read_parse("net/dev", ParseNetDev, &nets, nullptr);
  SelectNets(nets, &s);

  CollectFsStats(&s);
  if (options_.process_cpu) {
    // Fresh enough for a sample: window ends of the agents of one process
    // (a swarm) that fall within this share one scan.
    s.processes = SharedProcessScan(proc, /*max_age_ns=*/100'000'000);
  }
  return s;
}

void HostSampleReader::SelectDisks(std::vector<DiskCounters>& disks, HostSample* s) {
  if (!options_.devices.empty()) {
    const std::vector<std::string> missing =
        SelectNamed(options_.devices, disks, &DiskCounters::device, &s->disks);
    if (missing.empty()) return;
    std::vector<std::string> present;
    for (const DiskCounters& d : disks) {
      if (!IsVirtualDisk(d.device)) present.push_back(d.device);
    }
    for (const std::string& want : missing) {
      s->warnings.push_back(absl::StrFormat(
          "block device \"%s\" is not in %s/diskstats (present: %s); fix the telemetry "
          "devices list",
          want, options_.proc_root, absl::StrJoin(present, ", ")));
    }
    return;
  }
  for (DiskCounters& d : disks) {
    if (IsVirtualDisk(d.device) || !IsWholeDisk(d.device)) continue;
    s->disks[d.device] = std::move(d);
  }
}

// Whole disks only (partitions would count the same bytes twice): those
// in <sys_root>/block, or every one without it. Asked once per name: what
// a device is does not change while the agent runs, and a sample must
// stay cheap.
bool HostSampleReader::IsWholeDisk(const std::string& device) {
  auto [it, added] = whole_disk_.try_emplace(device, true);
  if (added) {
    std::error_code ec;
    const fs::path block = fs::path(options_.sys_root) / "block";
    it->second = !fs::is_directory(block, ec) || fs::exists(block / device, ec);
  }
  return it->second;
}

void HostSampleReader::SelectNets(std::vector<NetCounters>& nets, HostSample* s) const {
  if (!options_.ifaces.empty()) {
    const std::vector<std::string> missing =
        SelectNamed(options_.ifaces, nets, &NetCounters::iface, &s->nets);
    if (missing.empty()) return;
    std::vector<std::string> present;
    for (const NetCounters& n : nets) present.push_back(n.iface);
    for (const std::string& want : missing) {
      s->warnings.push_back(absl::StrFormat(
          "network interface \"%s\" is not in %s/net/dev (present: %s); fix the telemetry "
          "ifaces list",
          want, options_.proc_root, absl::StrJoin(present, ", ")));
    }
    return;
  }
  for (NetCounters& n : nets) {
    if (n.iface == "lo") continue;
    s->nets[n.iface] = std::move(n);
  }
}

void HostSampleReader::CollectFsStats(HostSample* s) const {
  for (const FsStatsSource& source : options_.fs_stats) source(&s->fs_stats, &s->warnings);
}

}  // namespace lockstep
