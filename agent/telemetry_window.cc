// A telemetry window's accumulation and summary (agent/telemetry_window.h):
// the per-source feeders of each sample and the TelemetrySummary of a window.
#include "agent/telemetry_window.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"

namespace lockstep {
namespace {

using DiskAcc = TelemetryWindow::DiskAcc;
using NetAcc = TelemetryWindow::NetAcc;
using FsStatAcc = TelemetryWindow::FsStatAcc;

// The summary keeps this many process groups (the brief fewer).
constexpr size_t kTopProcesses = 10;

// Counter delta between two samples; a counter that went backwards was reset
// (device re-added, Lustre stats cleared), so everything since counts.
uint64_t Delta(uint64_t before, uint64_t after, bool* reset) {
  if (after >= before) return after - before;
  *reset = true;
  return after;
}

void SetMeanMax(double mean, double max, v1::MeanMax* out) {
  out->set_mean(mean);
  out->set_max(max);
}

double MbPerS(uint64_t bytes, int64_t ns) {
  return ns > 0 ? static_cast<double>(bytes) / 1e6 / (static_cast<double>(ns) / 1e9) : 0.0;
}

// fn(name, before, after) for each name that both `before` and `after` (the
// disks, interfaces or stats sources of two consecutive samples) hold.
template <typename Map, typename Fn>
void ForEachInBoth(const Map& before, const Map& after, Fn fn) {
  for (const auto& [name, now] : after) {
    auto it = before.find(name);
    if (it != before.end()) fn(name, it->second, now);
  }
}

// Levels (memory, load, disk queue depth) count from the first sample on.
void FeedLevels(const HostSample& s, TelemetryWindow* w) {
  for (const std::string& warning : s.warnings) w->Warn(warning);
  ++w->samples;
  if (s.have_mem) {
    w->dirty.Add(static_cast<double>(s.mem.dirty_bytes));
    w->writeback.Add(static_cast<double>(s.mem.writeback_bytes));
  }
  if (s.have_load) {
    w->load1.Add(s.load.load1);
    w->running_max = std::max(w->running_max, s.load.running);
  }
  for (const auto& [name, d] : s.disks) {
    w->disks[name].in_flight_max = std::max(w->disks[name].in_flight_max, d.in_flight);
  }
  for (const auto& [source, counters] : s.fs_stats) w->sources.insert(source);
  if (s.processes) w->processes.Add(*s.processes);
}

void FeedCpu(const HostSample& p, const HostSample& s, TelemetryWindow* w) {
  const CpuTimes &a = p.stat.cpu, &b = s.stat.cpu;
  CpuTimes& c = w->cpu_delta;
  // Per-CPU time may step back on hot-unplug; not worth a warning.
  bool reset = false;
  c.user += Delta(a.user, b.user, &reset);
  c.nice += Delta(a.nice, b.nice, &reset);
  c.system += Delta(a.system, b.system, &reset);
  c.idle += Delta(a.idle, b.idle, &reset);
  c.iowait += Delta(a.iowait, b.iowait, &reset);
  c.irq += Delta(a.irq, b.irq, &reset);
  c.softirq += Delta(a.softirq, b.softirq, &reset);
  c.steal += Delta(a.steal, b.steal, &reset);
  if (b.Total() <= a.Total()) return;
  CpuPercent pct = CpuPercentBetween(a, b);
  CpuPercent& m = w->cpu_max;
  m.user = std::max(m.user, pct.user);
  m.nice = std::max(m.nice, pct.nice);
  m.system = std::max(m.system, pct.system);
  m.idle = std::max(m.idle, pct.idle);
  m.iowait = std::max(m.iowait, pct.iowait);
  m.irq = std::max(m.irq, pct.irq);
  m.softirq = std::max(m.softirq, pct.softirq);
  m.steal = std::max(m.steal, pct.steal);
  w->busy_cores_max = std::max(w->busy_cores_max, pct.BusyCores(s.stat.cores));
}

// Disks present in both samples.
void FeedDisks(const HostSample& p, const HostSample& s, int64_t interval_duration_ns,
               TelemetryWindow* w) {
  ForEachInBoth(p.disks, s.disks, [&](const std::string& name, const DiskCounters& o,
                                       const DiskCounters& d) {
    DiskAcc& acc = w->disks[name];
    bool reset = false;
    uint64_t reads = Delta(o.reads, d.reads, &reset);
    uint64_t rsec = Delta(o.read_sectors, d.read_sectors, &reset);
    uint64_t rms = Delta(o.read_ms, d.read_ms, &reset);
    uint64_t writes = Delta(o.writes, d.writes, &reset);
    uint64_t wsec = Delta(o.write_sectors, d.write_sectors, &reset);
    uint64_t wms = Delta(o.write_ms, d.write_ms, &reset);
    uint64_t io_ms = Delta(o.io_ms, d.io_ms, &reset);
    if (reset) {
      w->Warn(absl::StrFormat("block device %s: /proc/diskstats counters went backwards "
                              "(device re-added?); counted from the reset",
                              name));
    }
    acc.delta.reads += reads;
    acc.delta.read_sectors += rsec;
    acc.delta.read_ms += rms;
    acc.delta.writes += writes;
    acc.delta.write_sectors += wsec;
    acc.delta.write_ms += wms;
    acc.delta.io_ms += io_ms;
    acc.present_ns += interval_duration_ns;
    if (interval_duration_ns > 0) {
      acc.util_max =
          std::max(acc.util_max, std::min(100.0, io_ms * 1e6 * 100.0 / interval_duration_ns));
      acc.read_mb_s_max = std::max(acc.read_mb_s_max,
                                   MbPerS(rsec * kDiskSectorBytes, interval_duration_ns));
      acc.write_mb_s_max = std::max(acc.write_mb_s_max,
                                    MbPerS(wsec * kDiskSectorBytes, interval_duration_ns));
    }
  });
}

// Network interfaces present in both samples.
void FeedNets(const HostSample& p, const HostSample& s, int64_t interval_duration_ns,
              TelemetryWindow* w) {
  ForEachInBoth(p.nets, s.nets, [&](const std::string& name, const NetCounters& o,
                                     const NetCounters& n) {
    NetAcc& acc = w->nets[name];
    bool reset = false;
    uint64_t rx = Delta(o.rx_bytes, n.rx_bytes, &reset);
    uint64_t tx = Delta(o.tx_bytes, n.tx_bytes, &reset);
    acc.delta.rx_bytes += rx;
    acc.delta.tx_bytes += tx;
    acc.delta.rx_packets += Delta(o.rx_packets, n.rx_packets, &reset);
    acc.delta.tx_packets += Delta(o.tx_packets, n.tx_packets, &reset);
    acc.delta.rx_errs += Delta(o.rx_errs, n.rx_errs, &reset) + Delta(o.rx_drop, n.rx_drop, &reset);
    acc.delta.tx_errs += Delta(o.tx_errs, n.tx_errs, &reset) + Delta(o.tx_drop, n.tx_drop, &reset);
    if (reset) {
      w->Warn(absl::StrFormat("interface %s: /proc/net/dev counters went backwards "
                              "(interface re-created?); counted from the reset",
                              name));
    }
    acc.present_ns += interval_duration_ns;
    if (interval_duration_ns > 0) {
      acc.rx_mb_s_max = std::max(acc.rx_mb_s_max, MbPerS(rx, interval_duration_ns));
      acc.tx_mb_s_max = std::max(acc.tx_mb_s_max, MbPerS(tx, interval_duration_ns));
    }
  });
}

// The file systems' counters present in both samples.
void FeedFsStats(const HostSample& p, const HostSample& s, TelemetryWindow* w) {
  ForEachInBoth(p.fs_stats, s.fs_stats, [&](const std::string& source, const auto& previous,
                                             const auto& counters) {
    for (const auto& [name, stat] : counters) {
      auto cit = previous.find(name);
      // A counter missing from the previous sample had 0 samples then (Lustre
      // prints only counters that have been hit).
      FsStat before;
      if (cit != previous.end()) before = cit->second;
      bool reset = false;
      uint64_t ds = Delta(before.samples, stat.samples, &reset);
      uint64_t dsum = reset ? stat.sum : Delta(before.sum, stat.sum, &reset);
      if (reset) {
        w->Warn(absl::StrFormat("%s: counters went backwards (stats cleared?); counted from "
                                "the reset",
                                source));
      }
      if (ds == 0 && dsum == 0) continue;
      FsStatAcc& acc = w->fs_stats[{source, name}];
      acc.unit = stat.unit;
      acc.samples += ds;
      acc.sum += dsum;
    }
  });
}

}  // namespace

// Adds sample `s` to the window: levels from every sample, rates and counter
// deltas from each pair of consecutive samples.
void FeedTelemetryWindow(const HostSample& s, TelemetryWindow* w) {
  FeedLevels(s, w);
  if (!w->has_prev) {
    w->has_prev = true;
    w->prev = s;
    w->first_mono_ns = s.mono_ns;
    w->first_unix_ns = s.unix_ns;
    return;
  }
  const HostSample& p = w->prev;
  const int64_t interval_duration_ns = s.mono_ns - p.mono_ns;
  FeedCpu(p, s, w);
  FeedDisks(p, s, interval_duration_ns, w);
  FeedNets(p, s, interval_duration_ns, w);
  FeedFsStats(p, s, w);
  w->prev = s;
}

v1::TelemetrySummary SummarizeTelemetryWindow(const TelemetryWindow& w, uint32_t interval_ms) {
  v1::TelemetrySummary out;
  const HostSample& last = w.prev;
  int64_t window_ns = w.has_prev ? last.mono_ns - w.first_mono_ns : 0;
  out.set_interval_s(static_cast<double>(window_ns) / 1e9);
  out.set_samples(w.samples);
  out.set_sample_interval_ms(interval_ms);
  out.set_start_unix_ns(w.first_unix_ns);
  out.set_end_unix_ns(last.unix_ns);

  v1::CpuStats* cpu = out.mutable_cpu();
  cpu->set_cores(last.stat.cores);
  CpuPercent mean = CpuPercentBetween(CpuTimes{}, w.cpu_delta);
  const CpuPercent& mx = w.cpu_max;
  SetMeanMax(mean.user, mx.user, cpu->mutable_user_pct());
  SetMeanMax(mean.nice, mx.nice, cpu->mutable_nice_pct());
  SetMeanMax(mean.system, mx.system, cpu->mutable_system_pct());
  SetMeanMax(mean.iowait, mx.iowait, cpu->mutable_iowait_pct());
  SetMeanMax(mean.irq, mx.irq, cpu->mutable_irq_pct());
  SetMeanMax(mean.softirq, mx.softirq, cpu->mutable_softirq_pct());
  SetMeanMax(mean.steal, mx.steal, cpu->mutable_steal_pct());
  SetMeanMax(mean.idle, mx.idle, cpu->mutable_idle_pct());
  SetMeanMax(w.cpu_delta.Total() ? mean.BusyCores(last.stat.cores) : 0.0, w.busy_cores_max,
             cpu->mutable_busy_cores());

  v1::LoadAvg* load = out.mutable_load();
  load->set_load1_end(last.load.load1);
  load->set_load5_end(last.load.load5);
  load->set_load15_end(last.load.load15);
  SetMeanMax(w.load1.mean(), w.load1.max, load->mutable_load1());
  load->set_running_max(w.running_max);

  SetMeanMax(w.dirty.mean(), w.dirty.max, out.mutable_memory()->mutable_dirty_bytes());
  SetMeanMax(w.writeback.mean(), w.writeback.max,
             out.mutable_memory()->mutable_writeback_bytes());

  for (const auto& [name, acc] : w.disks) {
    v1::DiskStats* d = out.add_disks();
    d->set_device(name);
    d->set_read_bytes(acc.delta.read_sectors * kDiskSectorBytes);
    d->set_write_bytes(acc.delta.write_sectors * kDiskSectorBytes);
    d->set_read_ios(acc.delta.reads);
    d->set_write_ios(acc.delta.writes);
    double util_mean =
        acc.present_ns > 0 ? std::min(100.0, acc.delta.io_ms * 1e6 * 100.0 / acc.present_ns) : 0;
    SetMeanMax(util_mean, acc.util_max, d->mutable_util_pct());
    SetMeanMax(MbPerS(d->read_bytes(), acc.present_ns), acc.read_mb_s_max,
               d->mutable_read_mb_s());
    SetMeanMax(MbPerS(d->write_bytes(), acc.present_ns), acc.write_mb_s_max,
               d->mutable_write_mb_s());
    d->set_read_await_ms(acc.delta.reads
                             ? static_cast<double>(acc.delta.read_ms) / acc.delta.reads
                             : 0.0);
    d->set_write_await_ms(acc.delta.writes
                              ? static_cast<double>(acc.delta.write_ms) / acc.delta.writes
                              : 0.0);
    d->set_in_flight_max(acc.in_flight_max);
  }
  for (const auto& [name, acc] : w.nets) {
    v1::NetStats* n = out.add_nets();
    n->set_iface(name);
    n->set_rx_bytes(acc.delta.rx_bytes);
    n->set_tx_bytes(acc.delta.tx_bytes);
    n->set_rx_packets(acc.delta.rx_packets);
    n->set_tx_packets(acc.delta.tx_packets);
    n->set_rx_errors(acc.delta.rx_errs);
    n->set_tx_errors(acc.delta.tx_errs);
    SetMeanMax(MbPerS(acc.delta.rx_bytes, acc.present_ns), acc.rx_mb_s_max,
               n->mutable_rx_mb_s());
    SetMeanMax(MbPerS(acc.delta.tx_bytes, acc.present_ns), acc.tx_mb_s_max,
               n->mutable_tx_mb_s());
  }
  for (const auto& [key, acc] : w.fs_stats) {  // the wire calls them Lustre's
    v1::LustreCounter* c = out.add_lustre();
    c->set_source(key.first);
    c->set_name(key.second);
    c->set_unit(acc.unit);
    c->set_samples_delta(acc.samples);
    c->set_sum_delta(acc.sum);
  }
  for (const std::string& s : w.sources) out.add_lustre_sources(s);
  for (v1::ProcessCpu& p : w.processes.Top(out.interval_s(), TicksPerSecond(), kTopProcesses)) {
    *out.add_top_processes() = std::move(p);
  }
  for (const std::string& s : w.warnings) out.add_warnings(s);
  return out;
}

}  // namespace lockstep
