#include "controller/run/phase_results.h"

#include <algorithm>
#include <initializer_list>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "common/names.h"
#include "controller/record/telemetry_summary.h"

namespace lockstep {

void ToControllerClock(int64_t offset_ns, v1::TaskResult* task) {
  using Get = int64_t (v1::TaskResult::*)() const;
  using Set = void (v1::TaskResult::*)(int64_t);
  for (auto [get, set] : std::initializer_list<std::pair<Get, Set>>{
           {&v1::TaskResult::open_start_unix_ns, &v1::TaskResult::set_open_start_unix_ns},
           {&v1::TaskResult::open_stop_unix_ns, &v1::TaskResult::set_open_stop_unix_ns},
           {&v1::TaskResult::rdwr_start_unix_ns, &v1::TaskResult::set_rdwr_start_unix_ns},
           {&v1::TaskResult::rdwr_stop_unix_ns, &v1::TaskResult::set_rdwr_stop_unix_ns},
           {&v1::TaskResult::close_start_unix_ns, &v1::TaskResult::set_close_start_unix_ns},
           {&v1::TaskResult::close_stop_unix_ns, &v1::TaskResult::set_close_stop_unix_ns},
           {&v1::TaskResult::first_io_unix_ns, &v1::TaskResult::set_first_io_unix_ns},
           {&v1::TaskResult::release_unix_ns, &v1::TaskResult::set_release_unix_ns},
           {&v1::TaskResult::readback_start_unix_ns, &v1::TaskResult::set_readback_start_unix_ns},
           {&v1::TaskResult::readback_stop_unix_ns, &v1::TaskResult::set_readback_stop_unix_ns},
           {&v1::TaskResult::stonewall_stop_unix_ns,
            &v1::TaskResult::set_stonewall_stop_unix_ns}}) {
    if ((task->*get)() != 0) (task->*set)((task->*get)() - offset_ns);
  }
}

namespace {

// The agent's host name for lines that name a host; its address when unknown.
std::string HostOrAddress(const std::string& address,
                          const std::map<std::string, std::string>& host_by_address) {
  auto host = host_by_address.find(address);
  return host == host_by_address.end() || host->second.empty() ? address : host->second;
}

// One line per host with the busiest processes of its window:
//   "  n01 top cpu: lockstep-agent 100% (1 CPU), kworker 5%"
void AddTopCpuLines(const v1::PhaseRecord& phase,
                    const std::map<std::string, std::string>& host_by_address,
                    std::vector<std::string>* lines) {
  std::set<std::string> hosts_seen;
  for (const v1::AgentPhaseRecord& a : phase.agents()) {
    if (!a.has_telemetry() || a.telemetry().interval_s() < 0.2) continue;  // 10 ms ticks
    const std::string name = HostOrAddress(a.address(), host_by_address);
    if (!hosts_seen.insert(name).second) continue;
    const std::string top = TopCpuText(a.telemetry().top_processes(), kTopCpuLineProcesses);
    if (!top.empty()) lines->push_back(absl::StrFormat("  %s top cpu: %s", name, top));
  }
}

// One line per file-system daemon a server agent serves:
//   "  osd0 osd.0: cpu 78%, rss 412 MiB; 64 writes, 128.0 MB in (w 12.3 ms); 0 reads"
//   "  mds0 mds.a: cpu 3%, rss 88 MiB; 2000 requests (reply 1.21 ms)"
// and what went wrong with it ("osd.1 (pid 4242) is not running ...").
void AddDaemonLines(const v1::PhaseRecord& phase,
                    const std::map<std::string, std::string>& host_by_address,
                    std::vector<std::string>* lines) {
  for (const v1::AgentPhaseRecord& a : phase.agents()) {
    const std::string name = HostOrAddress(a.address(), host_by_address);
    for (const v1::DaemonStats& d : a.telemetry().daemons()) {
      std::string line = absl::StrFormat("  %s %s: cpu %.0f%%, rss %.0f MiB", name, d.name(),
                                         d.cpu_pct(), d.rss_bytes() / 1048576.0);
      // Counters from both ends of the window, or none: a daemon that died
      // or stopped answering shows its warning instead of zeros.
      const bool counted = d.running() && d.warning().empty();
      if (counted && absl::StartsWith(d.name(), "osd.")) {
        absl::StrAppendFormat(&line, "; %u writes, %.1f MB in", d.write_ops(), d.in_bytes() / 1e6);
        if (d.write_ops() > 0) absl::StrAppendFormat(&line, " (w %.2f ms)", d.write_latency_ms());
        absl::StrAppendFormat(&line, "; %u reads, %.1f MB out", d.read_ops(), d.out_bytes() / 1e6);
        if (d.read_ops() > 0) absl::StrAppendFormat(&line, " (r %.2f ms)", d.read_latency_ms());
      } else if (counted && absl::StartsWith(d.name(), "mds.")) {
        absl::StrAppendFormat(&line, "; %u requests", d.ops());
        if (d.ops() > 0) absl::StrAppendFormat(&line, " (reply %.2f ms)", d.op_latency_ms());
      }
      if (!d.warning().empty()) absl::StrAppendFormat(&line, "; WARNING: %s", d.warning());
      lines->push_back(std::move(line));
    }
  }
}

}  // namespace

std::vector<std::string> TelemetryLines(
    const v1::PhaseRecord& phase, const std::map<std::string, std::string>& host_by_address) {
  struct Acc {
    int n = 0;
    double busy_cores = 0, cores = 0, user = 0, sys = 0, iowait = 0;
    double disk_mb_s = 0, net_mb_s = 0;
  };
  std::map<v1::Role, Acc> by_role;
  std::map<v1::Role, std::set<std::string>> hosts_seen;
  for (const v1::AgentPhaseRecord& a : phase.agents()) {
    // /proc/stat has 10 ms ticks: over a shorter window the shares mean little.
    if (!a.has_telemetry() || a.telemetry().samples() == 0 || a.telemetry().interval_s() < 0.2) {
      continue;
    }
    // Several agents on one host see the same host: count it once.
    auto host = host_by_address.find(a.address());
    const std::string hostname = host == host_by_address.end() ? "" : host->second;
    if (!hosts_seen[a.role()].insert(hostname).second) continue;
    const v1::TelemetrySummary& t = a.telemetry();
    Acc& acc = by_role[a.role()];
    ++acc.n;
    acc.busy_cores += t.cpu().busy_cores().mean();
    acc.cores += t.cpu().cores();
    acc.user += t.cpu().user_pct().mean();
    acc.sys += t.cpu().system_pct().mean();
    acc.iowait += t.cpu().iowait_pct().mean();
    for (const auto& d : t.disks()) acc.disk_mb_s += d.read_mb_s().mean() + d.write_mb_s().mean();
    for (const auto& n : t.nets()) acc.net_mb_s += n.rx_mb_s().mean() + n.tx_mb_s().mean();
  }
  std::vector<std::string> lines;
  for (const auto& [role, acc] : by_role) {
    lines.push_back(absl::StrFormat(
        "  %s (%d host%s): cpu %.0f%% user, %.0f%% sys, %.0f%% iowait; busy %.1f of %.0f cores; "
        "disk %.1f MB/s, net %.1f MB/s",
        role == v1::CLIENT ? "clients" : RoleName(role), acc.n, acc.n == 1 ? "" : "s",
        acc.user / acc.n, acc.sys / acc.n, acc.iowait / acc.n, acc.busy_cores, acc.cores,
        acc.disk_mb_s, acc.net_mb_s));
  }
  AddTopCpuLines(phase, host_by_address, &lines);
  AddDaemonLines(phase, host_by_address, &lines);
  return lines;
}

int64_t StartSkewUncertaintyNs(std::vector<int64_t> clock_uncertainties_ns) {
  if (clock_uncertainties_ns.size() < 2) return 0;
  std::sort(clock_uncertainties_ns.rbegin(), clock_uncertainties_ns.rend());
  return clock_uncertainties_ns[0] + clock_uncertainties_ns[1];
}

}  // namespace lockstep
