// Pure parsers for the kernel text files the telemetry sampler reads
// (Lustre's are agent/fs/lustre_stats.h). Each takes the file's text and returns counters; errors
// (InvalidArgument) quote the offending line. Callers add the file's path.
#ifndef LOCKSTEP_AGENT_PROCFS_H_
#define LOCKSTEP_AGENT_PROCFS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace lockstep {

// ---- /proc/stat -------------------------------------------------------------

// The aggregate "cpu" line, in USER_HZ ticks. guest/guest_nice are already
// included in user/nice, so Total() leaves them out.
struct CpuTimes {
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
           steal = 0, guest = 0, guest_nice = 0;
  uint64_t Total() const {
    return user + nice + system + idle + iowait + irq + softirq + steal;
  }
};

struct ProcStat {
  CpuTimes cpu;
  uint32_t cores = 0;  // "cpuN" lines (online CPUs)
};

absl::StatusOr<ProcStat> ParseProcStat(std::string_view text);

// Share of all cores' time spent in each state between two samples, in
// percent (sums to 100). All zero when no tick elapsed.
struct CpuPercent {
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
         steal = 0;
  // (100 - idle) × cores / 100.
  double BusyCores(uint32_t cores) const { return (100.0 - idle) * cores / 100.0; }
};

// `before` and `after` are two samples of the same host; a counter that went
// backwards (CPU hot-unplug) counts as 0.
CpuPercent CpuPercentBetween(const CpuTimes& before, const CpuTimes& after);

// ---- /proc/loadavg ----------------------------------------------------------

struct LoadAvgSample {
  double load1 = 0, load5 = 0, load15 = 0;
  uint32_t running = 0;  // "R" of "R/T"
  uint32_t threads = 0;  // "T"
};

absl::StatusOr<LoadAvgSample> ParseLoadAvg(std::string_view text);

// ---- /proc/meminfo ----------------------------------------------------------

struct MemInfoSample {
  uint64_t dirty_bytes = 0;
  uint64_t writeback_bytes = 0;
};

// Error when Dirty or Writeback is absent.
absl::StatusOr<MemInfoSample> ParseMemInfo(std::string_view text);

// ---- /proc/PID/stat ---------------------------------------------------------

inline constexpr uint32_t kPfKthread = 0x00200000;  // PF_KTHREAD in the flags field

// One process: its comm, kernel-thread flag and CPU time (all its threads,
// live and ended), in USER_HZ ticks.
struct ProcessTicks {
  uint32_t pid = 0;
  std::string comm;          // as the kernel keeps it (15 bytes at most)
  bool kernel_thread = false;
  uint64_t user_ticks = 0;   // utime
  uint64_t system_ticks = 0; // stime
  uint64_t start_ticks = 0;  // starttime, since boot: tells a reused pid apart
};

// "PID (COMM) STATE PPID ... FLAGS ... UTIME STIME ... STARTTIME ...": COMM
// may hold spaces and parentheses, so it ends at the last ')'.
absl::StatusOr<ProcessTicks> ParseProcPidStat(std::string_view text);

// ---- /proc/diskstats --------------------------------------------------------

inline constexpr uint64_t kDiskSectorBytes = 512;  // always, whatever the device

struct DiskCounters {
  std::string device;
  uint64_t reads = 0, read_sectors = 0, read_ms = 0;
  uint64_t writes = 0, write_sectors = 0, write_ms = 0;
  uint64_t in_flight = 0;
  uint64_t io_ms = 0;  // time the device had I/O in flight
};

// Accepts the 14-field (pre-4.18), 18-field and 20-field formats.
absl::StatusOr<std::vector<DiskCounters>> ParseDiskStats(std::string_view text);

// ---- /proc/net/dev ----------------------------------------------------------

struct NetCounters {
  std::string iface;
  uint64_t rx_bytes = 0, rx_packets = 0, rx_errs = 0, rx_drop = 0;
  uint64_t tx_bytes = 0, tx_packets = 0, tx_errs = 0, tx_drop = 0;
};

absl::StatusOr<std::vector<NetCounters>> ParseNetDev(std::string_view text);

// ---- for parsers of such text (here and in agent/fs) -------------------------

// The blank- or tab-separated fields of `line`, empty ones skipped.
std::vector<absl::string_view> TextFields(absl::string_view line);
// The lines of `text` that are not blank.
std::vector<absl::string_view> TextLines(absl::string_view text);
// InvalidArgument "WHAT: cannot parse line \"LINE\": WHY".
absl::Status BadTextLine(absl::string_view what, absl::string_view line, absl::string_view why);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_PROCFS_H_
