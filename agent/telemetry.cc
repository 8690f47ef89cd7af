#include "agent/telemetry.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/process_cpu.h"
#include "agent/procfs.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/log.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

struct HostSample {
  int64_t mono_ns = 0;
  int64_t unix_ns = 0;
  ProcStat stat;
  bool have_load = false;
  LoadAvgSample load;
  bool have_mem = false;
  MemInfoSample mem;
  std::map<std::string, DiskCounters> disks;  // selected devices only
  std::map<std::string, NetCounters> nets;    // selected interfaces only
  FsStatCounters fs_stats;  // agent/fs/fs_stats.h
  // Every process's CPU ticks (shared: each open window keeps the sample).
  std::shared_ptr<const std::vector<ProcessTicks>> processes;
  std::vector<std::string> warnings;
};

// The summary keeps this many process groups (the brief fewer).
constexpr size_t kTopProcesses = 10;

// Counter delta between two samples; a counter that went backwards was reset
// (device re-added, Lustre stats cleared), so everything since counts.
uint64_t Delta(uint64_t before, uint64_t after, bool* reset) {
  if (after >= before) return after - before;
  *reset = true;
  return after;
}

struct MeanMaxAcc {
  double sum = 0;
  double max = 0;
  uint32_t n = 0;
  void Add(double v) {
    sum += v;
    if (n == 0 || v > max) max = v;
    ++n;
  }
  double mean() const { return n ? std::min(sum / n, max) : 0.0; }  // no FP excess
};

void SetMeanMax(double mean, double max, v1::MeanMax* out) {
  out->set_mean(mean);
  out->set_max(max);
}

struct DiskAcc {
  DiskCounters delta;
  int64_t present_ns = 0;
  double util_max = 0, read_mb_s_max = 0, write_mb_s_max = 0;
  uint64_t in_flight_max = 0;
};

struct NetAcc {
  NetCounters delta;
  int64_t present_ns = 0;
  double rx_mb_s_max = 0, tx_mb_s_max = 0;
};

struct FsStatAcc {
  std::string unit;
  uint64_t samples = 0;
  uint64_t sum = 0;
};

struct Window {
  bool has_prev = false;
  HostSample prev;
  int64_t first_mono_ns = 0;
  int64_t first_unix_ns = 0;
  uint32_t samples = 0;
  CpuTimes cpu_delta;  // summed over intervals
  CpuPercent cpu_max;
  double busy_cores_max = 0;
  MeanMaxAcc dirty, writeback, load1;
  uint32_t running_max = 0;
  std::map<std::string, DiskAcc> disks;
  std::map<std::string, NetAcc> nets;
  std::map<std::pair<std::string, std::string>, FsStatAcc> fs_stats;
  std::set<std::string> sources;
  ProcessCpuWindow processes;
  std::vector<std::string> warnings;
  std::set<std::string> warning_set;

  void Warn(const std::string& w) {
    if (warning_set.insert(w).second) warnings.push_back(w);
  }
};

double MbPerS(uint64_t bytes, int64_t ns) {
  return ns > 0 ? static_cast<double>(bytes) / 1e6 / (static_cast<double>(ns) / 1e9) : 0.0;
}

// Levels (memory, load, disk queue depth) count from the first sample on.
void FeedLevels(const HostSample& s, Window* w) {
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

void FeedCpu(const HostSample& p, const HostSample& s, Window* w) {
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
void FeedDisks(const HostSample& p, const HostSample& s, int64_t interval_duration_ns, Window* w) {
  for (const auto& [name, d] : s.disks) {
    auto it = p.disks.find(name);
    if (it == p.disks.end()) continue;
    const DiskCounters& o = it->second;
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
      acc.util_max = std::max(acc.util_max, std::min(100.0, io_ms * 1e6 * 100.0 / interval_duration_ns));
      acc.read_mb_s_max = std::max(acc.read_mb_s_max, MbPerS(rsec * kDiskSectorBytes, interval_duration_ns));
      acc.write_mb_s_max = std::max(acc.write_mb_s_max, MbPerS(wsec * kDiskSectorBytes, interval_duration_ns));
    }
  }
}

// Network interfaces present in both samples.
void FeedNets(const HostSample& p, const HostSample& s, int64_t interval_duration_ns, Window* w) {
  for (const auto& [name, n] : s.nets) {
    auto it = p.nets.find(name);
    if (it == p.nets.end()) continue;
    const NetCounters& o = it->second;
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
  }
}

// The file systems' counters present in both samples.
void FeedFsStats(const HostSample& p, const HostSample& s, Window* w) {
  for (const auto& [source, counters] : s.fs_stats) {
    auto pit = p.fs_stats.find(source);
    if (pit == p.fs_stats.end()) continue;
    for (const auto& [name, stat] : counters) {
      auto cit = pit->second.find(name);
      // A counter missing from the previous sample had 0 samples then (Lustre
      // prints only counters that have been hit).
      FsStat before;
      if (cit != pit->second.end()) before = cit->second;
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
  }
}

// Adds sample `s` to the window: levels from every sample, rates and counter
// deltas from each pair of consecutive samples.
void Feed(const HostSample& s, Window* w) {
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

v1::TelemetrySummary Summarize(const Window& w, uint32_t interval_ms) {
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

std::string DeviceName(const std::string& name) {
  return std::string(absl::StripPrefix(name, "/dev/"));
}

bool IsVirtualDisk(const std::string& name) {
  return absl::StartsWith(name, "loop") || absl::StartsWith(name, "ram") ||
         absl::StartsWith(name, "zram");
}

}  // namespace

class TelemetrySampler::Impl {
 public:
  explicit Impl(TelemetryOptions options) : options_(std::move(options)) {
    for (std::string& d : options_.devices) d = DeviceName(d);
  }

  ~Impl() { Stop(); }

  absl::Status Start() {
    absl::MutexLock run(&run_mu_);
    if (thread_.joinable()) {
      return absl::FailedPreconditionError("telemetry sampler: Start() while already running");
    }
    {
      absl::MutexLock l(&mu_);
      stop_ = false;
    }
    thread_ = std::thread([this] { Loop(); });
    return absl::OkStatus();
  }

  void Stop() {
    absl::MutexLock run(&run_mu_);
    if (!thread_.joinable()) return;
    {
      absl::MutexLock l(&mu_);
      stop_ = true;
      wake_.SignalAll();
    }
    thread_.join();
  }

  absl::Status Sample() {
    absl::MutexLock order(&sample_mu_);
    return SampleLocked();
  }

  void Prime() {
    absl::MutexLock order(&sample_mu_);
    absl::StatusOr<HostSample> s = Collect();
    absl::MutexLock l(&mu_);
    primed_.reset();
    if (s.ok()) primed_ = std::move(*s);  // a failed one: the next window samples itself
  }

  uint64_t BeginWindow(absl::Duration primed_max_age) {
    absl::MutexLock order(&sample_mu_);
    if (primed_max_age > absl::ZeroDuration()) {
      absl::MutexLock l(&mu_);
      if (primed_ && MonotonicNs() - primed_->mono_ns <= absl::ToInt64Nanoseconds(primed_max_age)) {
        // Only this window starts at the primed sample: the open ones have
        // newer samples already.
        uint64_t id = next_id_++;
        Feed(*primed_, &windows_[id]);
        primed_.reset();  // one window's
        wake_.SignalAll();
        return id;
      }
    }
    uint64_t id = 0;
    absl::Status s = SampleLocked(&id);
    if (!s.ok()) {
      // No baseline: the window's first good sample becomes it.
      absl::MutexLock l(&mu_);
      windows_[id].Warn(std::string(s.message()));
    }
    return id;
  }

  absl::StatusOr<v1::TelemetrySummary> EndWindow(uint64_t id) {
    absl::MutexLock order(&sample_mu_);
    {
      absl::MutexLock l(&mu_);
      if (!windows_.contains(id)) {
        return absl::NotFoundError(absl::StrFormat(
            "telemetry window %d is not open (never begun, or already ended)", id));
      }
    }
    absl::Status s = SampleLocked();
    Window w;
    {
      absl::MutexLock l(&mu_);
      auto node = windows_.extract(id);
      w = std::move(node.mapped());
    }
    if (!s.ok()) w.Warn(std::string(s.message()));
    return Summarize(w, options_.interval_ms);
  }

  uint64_t SampleCount() const {
    absl::MutexLock l(&mu_);
    return sample_count_;
  }

  bool AwaitSampleCount(uint64_t count, int64_t timeout_ms) const {
    auto reached = [this, count]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return sample_count_ >= count;
    };
    absl::MutexLock l(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Milliseconds(timeout_ms));
  }

  const TelemetryOptions& options() const { return options_; }

 private:
  // Collects one sample and feeds every open window. Serialised by
  // sample_mu_, so windows see samples in time order.
  // With `open_window`, also opens a window (even when the sample fails) and
  // makes this sample its first.
  absl::Status SampleLocked(uint64_t* open_window = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(sample_mu_) {
    absl::StatusOr<HostSample> s = Collect();
    absl::MutexLock l(&mu_);
    if (open_window != nullptr) {
      *open_window = next_id_++;
      windows_[*open_window];
      wake_.SignalAll();  // the background loop waits while no window is open
    }
    if (!s.ok()) return s.status();
    for (auto& [id, w] : windows_) Feed(*s, &w);
    ++sample_count_;
    return absl::OkStatus();
  }

  std::string Path(const std::string& root, std::string_view rel) const {
    return absl::StrFormat("%s/%s", root, rel);
  }

  absl::StatusOr<HostSample> Collect() ABSL_EXCLUSIVE_LOCKS_REQUIRED(sample_mu_) {
    HostSample s;
    s.mono_ns = MonotonicNs();
    s.unix_ns = RealtimeNs();
    const std::string& proc = options_.proc_root;

    std::string stat_path = Path(proc, "stat");
    ASSIGN_OR_RETURN(std::string stat_text, ReadFileToString(stat_path));
    absl::StatusOr<ProcStat> stat = ParseProcStat(stat_text);
    if (!stat.ok()) return Annotate(stat.status(), stat_path);
    s.stat = *stat;

    auto read_parse = [&](std::string_view rel, auto parse, auto* out, bool* have) {
      std::string path = Path(proc, rel);
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

  void SelectDisks(std::vector<DiskCounters>& disks, HostSample* s)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(sample_mu_) {
    if (!options_.devices.empty()) {
      for (const std::string& want : options_.devices) {
        auto it = std::find_if(disks.begin(), disks.end(),
                               [&](const DiskCounters& d) { return d.device == want; });
        if (it != disks.end()) {
          s->disks[want] = *it;
          continue;
        }
        std::vector<std::string> present;
        for (const DiskCounters& d : disks) {
          if (!IsVirtualDisk(d.device)) present.push_back(d.device);
        }
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
  bool IsWholeDisk(const std::string& device) ABSL_EXCLUSIVE_LOCKS_REQUIRED(sample_mu_) {
    auto [it, added] = whole_disk_.try_emplace(device, true);
    if (added) {
      std::error_code ec;
      const fs::path block = fs::path(options_.sys_root) / "block";
      it->second = !fs::is_directory(block, ec) || fs::exists(block / device, ec);
    }
    return it->second;
  }

  void SelectNets(std::vector<NetCounters>& nets, HostSample* s) const {
    if (!options_.ifaces.empty()) {
      for (const std::string& want : options_.ifaces) {
        auto it = std::find_if(nets.begin(), nets.end(),
                               [&](const NetCounters& n) { return n.iface == want; });
        if (it != nets.end()) {
          s->nets[want] = *it;
          continue;
        }
        std::vector<std::string> present;
        for (const NetCounters& n : nets) present.push_back(n.iface);
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

  void CollectFsStats(HostSample* s) const {
    for (const FsStatsSource& source : options_.fs_stats) source(&s->fs_stats, &s->warnings);
  }

  void Loop() {
    const int64_t interval_ns = static_cast<int64_t>(options_.interval_ms) * 1000000;
    int64_t next_ns = MonotonicNs() + interval_ns;
    std::string last_error;
    for (;;) {
      {
        absl::MutexLock l(&mu_);
        for (;;) {
          if (stop_) return;
          if (windows_.empty()) {
            // Nothing to feed: an idle agent reads nothing (a host of many
            // agents, each scanning every process every second, would spend
            // its cores on /proc). The next window's own first sample is
            // its baseline; the period restarts from there.
            wake_.Wait(&mu_);
            next_ns = MonotonicNs() + interval_ns;
            continue;
          }
          int64_t now = MonotonicNs();
          if (now >= next_ns) break;
          wake_.WaitWithTimeout(&mu_, absl::Nanoseconds(next_ns - now));
        }
      }
      absl::Status s = Sample();
      if (!s.ok() && std::string(s.message()) != last_error) {
        last_error = std::string(s.message());
        LogWarning("telemetry sample failed: %s", last_error);
      }
      next_ns += interval_ns;
      int64_t now = MonotonicNs();
      if (next_ns <= now) next_ns = now + interval_ns;  // fell behind: skip, don't burst
    }
  }

  TelemetryOptions options_;

  absl::Mutex run_mu_;  // Start/Stop
  std::thread thread_ ABSL_GUARDED_BY(run_mu_);

  absl::Mutex sample_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // one sample at a time, in order
  std::map<std::string, bool> whole_disk_ ABSL_GUARDED_BY(sample_mu_);  // IsWholeDisk's answers

  mutable absl::Mutex mu_;
  absl::CondVar wake_;
  uint64_t sample_count_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, Window> windows_ ABSL_GUARDED_BY(mu_);
  std::optional<HostSample> primed_ ABSL_GUARDED_BY(mu_);  // Prime()'s, for one BeginWindow
};

absl::StatusOr<std::unique_ptr<TelemetrySampler>> TelemetrySampler::Create(
    TelemetryOptions options) {
  if (options.interval_ms < kMinIntervalMs) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "telemetry interval_ms %d is below the minimum of %d ms; use %d or more",
        options.interval_ms, kMinIntervalMs, kMinIntervalMs));
  }
  std::string stat_path = options.proc_root + "/stat";
  absl::StatusOr<std::string> text = ReadFileToString(stat_path);
  if (!text.ok()) {
    return Annotate(text.status(),
                    absl::StrFormat("telemetry proc_root \"%s\" unusable (set proc_root to a "
                                    "mounted procfs)",
                                    options.proc_root));
  }
  absl::StatusOr<ProcStat> stat = ParseProcStat(*text);
  if (!stat.ok()) return Annotate(stat.status(), stat_path);
  return std::unique_ptr<TelemetrySampler>(
      new TelemetrySampler(std::make_unique<Impl>(std::move(options))));
}

TelemetrySampler::TelemetrySampler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TelemetrySampler::~TelemetrySampler() = default;
absl::Status TelemetrySampler::Start() { return impl_->Start(); }
void TelemetrySampler::Stop() { impl_->Stop(); }
absl::Status TelemetrySampler::Sample() { return impl_->Sample(); }
void TelemetrySampler::Prime() { impl_->Prime(); }
uint64_t TelemetrySampler::BeginWindow(absl::Duration primed_max_age) {
  return impl_->BeginWindow(primed_max_age);
}
absl::StatusOr<v1::TelemetrySummary> TelemetrySampler::EndWindow(uint64_t window_id) {
  return impl_->EndWindow(window_id);
}
uint64_t TelemetrySampler::SampleCount() const { return impl_->SampleCount(); }
bool TelemetrySampler::AwaitSampleCount(uint64_t count, int64_t timeout_ms) const {
  return impl_->AwaitSampleCount(count, timeout_ms);
}
const TelemetryOptions& TelemetrySampler::options() const { return impl_->options(); }

}  // namespace lockstep
