#include "controller/record/telemetry_summary.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/names.h"

namespace lockstep {
namespace {

// The scalar fields of a brief, for sums and maxima over hosts.
using Getter = double (v1::TelemetryBrief::*)() const;
using Setter = void (v1::TelemetryBrief::*)(double);
constexpr std::pair<Getter, Setter> kScalars[] = {
    {&v1::TelemetryBrief::interval_s, &v1::TelemetryBrief::set_interval_s},
    {&v1::TelemetryBrief::user_pct, &v1::TelemetryBrief::set_user_pct},
    {&v1::TelemetryBrief::system_pct, &v1::TelemetryBrief::set_system_pct},
    {&v1::TelemetryBrief::iowait_pct, &v1::TelemetryBrief::set_iowait_pct},
    {&v1::TelemetryBrief::disk_read_mb_s, &v1::TelemetryBrief::set_disk_read_mb_s},
    {&v1::TelemetryBrief::disk_write_mb_s, &v1::TelemetryBrief::set_disk_write_mb_s},
    {&v1::TelemetryBrief::net_rx_mb_s, &v1::TelemetryBrief::set_net_rx_mb_s},
    {&v1::TelemetryBrief::net_tx_mb_s, &v1::TelemetryBrief::set_net_tx_mb_s},
    {&v1::TelemetryBrief::dirty_bytes_max, &v1::TelemetryBrief::set_dirty_bytes_max},
    {&v1::TelemetryBrief::load1_max, &v1::TelemetryBrief::set_load1_max},
};

void Accumulate(const v1::TelemetryBrief& b, v1::TelemetryBrief* sum, v1::TelemetryBrief* max) {
  for (const auto& [get, set] : kScalars) {
    (sum->*set)((sum->*get)() + (b.*get)());
    (max->*set)(std::max((max->*get)(), (b.*get)()));
  }
  sum->set_cores(sum->cores() + b.cores());
  max->set_cores(std::max(max->cores(), b.cores()));
  sum->mutable_busy_cores()->set_mean(sum->busy_cores().mean() + b.busy_cores().mean());
  sum->mutable_busy_cores()->set_max(sum->busy_cores().max() + b.busy_cores().max());
  max->mutable_busy_cores()->set_mean(std::max(max->busy_cores().mean(), b.busy_cores().mean()));
  max->mutable_busy_cores()->set_max(std::max(max->busy_cores().max(), b.busy_cores().max()));
  sum->set_warnings(sum->warnings() + b.warnings());
  max->set_warnings(std::max(max->warnings(), b.warnings()));
}

// Four significant digits: more than the sampling resolves (10 ms CPU
// ticks, 1 s rates over windows of seconds), and a number of run.json is
// then 4-8 characters instead of up to 17 ("0.52083333333333337").
double Significant4(double v) {
  if (v == 0.0 || !std::isfinite(v)) return v;
  // Powers of ten up to 1e22 are exact, so dividing (or multiplying) by one
  // gives the double nearest the decimal, which prints short.
  const int digits = 3 - static_cast<int>(std::floor(std::log10(std::fabs(v))));
  if (digits >= 0) {
    const double scale = std::pow(10.0, std::min(digits, 22));
    return std::round(v * scale) / scale;
  }
  const double step = std::pow(10.0, std::min(-digits, 22));
  return std::round(v / step) * step;
}

void RoundBrief(v1::TelemetryBrief* b) {
  const double dirty_bytes = std::round(b->dirty_bytes_max());  // bytes: whole
  for (const auto& [get, set] : kScalars) (b->*set)(Significant4((b->*get)()));
  b->set_dirty_bytes_max(dirty_bytes);
  b->mutable_busy_cores()->set_mean(Significant4(b->busy_cores().mean()));
  b->mutable_busy_cores()->set_max(Significant4(b->busy_cores().max()));
}

}  // namespace

v1::TelemetryBrief BriefOf(const v1::TelemetrySummary& t) {
  v1::TelemetryBrief b;
  b.set_interval_s(t.interval_s());
  b.set_cores(t.cpu().cores());
  *b.mutable_busy_cores() = t.cpu().busy_cores();
  b.set_user_pct(t.cpu().user_pct().mean());
  b.set_system_pct(t.cpu().system_pct().mean());
  b.set_iowait_pct(t.cpu().iowait_pct().mean());
  for (const v1::DiskStats& d : t.disks()) {
    b.set_disk_read_mb_s(b.disk_read_mb_s() + d.read_mb_s().mean());
    b.set_disk_write_mb_s(b.disk_write_mb_s() + d.write_mb_s().mean());
  }
  for (const v1::NetStats& n : t.nets()) {
    b.set_net_rx_mb_s(b.net_rx_mb_s() + n.rx_mb_s().mean());
    b.set_net_tx_mb_s(b.net_tx_mb_s() + n.tx_mb_s().mean());
  }
  b.set_dirty_bytes_max(t.memory().dirty_bytes().max());
  b.set_load1_max(t.load().load1().max());
  b.set_warnings(static_cast<uint32_t>(t.warnings_size()));
  // 10 ms ticks: a tenth of a percent is all the precision there is.
  auto tenth = [](double pct) { return std::round(pct * 10.0) / 10.0; };
  for (int i = 0; i < t.top_processes_size() && i < kBriefTopProcesses; ++i) {
    // run.json keeps the group, its size and its CPU; the pid and the
    // user/system split stay in telemetry.pb.gz.
    const v1::ProcessCpu& full = t.top_processes(i);
    if (full.cpu_pct() < 1.0) break;  // largest first: the rest is noise
    v1::ProcessCpu* p = b.add_top_processes();
    p->set_name(full.name());
    p->set_processes(full.processes());
    p->set_kernel_thread(full.kernel_thread());
    p->set_cpu_pct(tenth(full.cpu_pct()));
  }
  *b.mutable_daemons() = t.daemons();
  RoundBrief(&b);
  return b;
}

std::string TopCpuText(const google::protobuf::RepeatedPtrField<v1::ProcessCpu>& top, int limit) {
  std::vector<std::string> parts;
  for (const v1::ProcessCpu& p : top) {
    if (static_cast<int>(parts.size()) >= limit || p.cpu_pct() < 1.0) break;  // largest first
    std::string part = absl::StrFormat("%s %.0f%%", p.name(), p.cpu_pct());
    if (p.cpu_pct() >= 95.0) {
      // 100 = one core: say how many it kept busy, as "lmdd 100% (1 CPU)".
      const double cores = std::max(1.0, std::round(p.cpu_pct() / 10.0) / 10.0);
      part += absl::StrFormat(" (%g CPU%s)", cores, cores == 1.0 ? "" : "s");
    }
    parts.push_back(std::move(part));
  }
  return absl::StrJoin(parts, ", ");
}

std::vector<v1::RoleTelemetry> SummarizeRoles(
    const v1::PhaseRecord& phase, const std::map<std::string, std::string>& host_by_address) {
  std::map<v1::Role, v1::RoleTelemetry> by_role;
  std::map<v1::Role, std::set<std::string>> hosts_seen;
  for (const v1::AgentPhaseRecord& a : phase.agents()) {
    if (!a.has_telemetry_brief()) continue;
    v1::RoleTelemetry& r = by_role[a.role()];
    r.set_role(a.role());
    r.set_agents(r.agents() + 1);
    auto host = host_by_address.find(a.address());
    const std::string& name = host == host_by_address.end() ? a.address() : host->second;
    if (!hosts_seen[a.role()].insert(name).second) continue;
    r.set_hosts(r.hosts() + 1);
    Accumulate(a.telemetry_brief(), r.mutable_mean(), r.mutable_max());
  }
  std::vector<v1::RoleTelemetry> out;
  for (auto& [role, r] : by_role) {
    v1::TelemetryBrief* mean = r.mutable_mean();  // a sum until here
    r.set_busy_cores_total(mean->busy_cores().mean());
    r.set_disk_mb_s_total(mean->disk_read_mb_s() + mean->disk_write_mb_s());
    r.set_net_mb_s_total(mean->net_rx_mb_s() + mean->net_tx_mb_s());
    const double n = std::max<uint32_t>(r.hosts(), 1);
    for (const auto& [get, set] : kScalars) (mean->*set)((mean->*get)() / n);
    mean->set_cores(static_cast<uint32_t>(mean->cores() / n));
    mean->mutable_busy_cores()->set_mean(mean->busy_cores().mean() / n);
    mean->mutable_busy_cores()->set_max(mean->busy_cores().max() / n);
    RoundBrief(mean);
    RoundBrief(r.mutable_max());
    r.set_busy_cores_total(Significant4(r.busy_cores_total()));
    r.set_disk_mb_s_total(Significant4(r.disk_mb_s_total()));
    r.set_net_mb_s_total(Significant4(r.net_mb_s_total()));
    out.push_back(std::move(r));
  }
  return out;
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

}  // namespace lockstep
