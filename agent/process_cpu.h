// Per-process CPU over a telemetry window, from /proc/PID/stat (utime,
// stime): which processes, kernel threads included, kept the host busy
// ("lmdd 100% (1 CPU), ptlrpcd 5%, pdflush 15%", as seed report 003 has it).
//
//   ProcessCpuWindow w;
//   w.Add(ScanProcesses("/proc"));   // the window's first sample: the baseline
//   ... w.Add(ScanProcesses("/proc")) at every later sample ...
//   std::vector<v1::ProcessCpu> top = w.Top(window_s, TicksPerSecond(), 10);
//
// A process counts from the baseline (or from its start, when it was born
// after it) to the last sample it was seen in: one that ends between two
// samples keeps what it had used at the earlier one, one that lives only
// between two samples is not seen. Not thread-safe: one owner per window.
#ifndef LOCKSTEP_AGENT_PROCESS_CPU_H_
#define LOCKSTEP_AGENT_PROCESS_CPU_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/procfs.h"
#include "lockstep/v1/telemetry.pb.h"

namespace lockstep {

// The group a process is shown under: its comm with per-CPU and instance
// suffixes folded away. The part before a '/' (kworker/u8:2 → kworker,
// jbd2/sda1-8 → jbd2, ksoftirqd/0); then trailing "_NN", "-NN", ".NN" and
// "-N:N" (ptlrpcd_00_01 → ptlrpcd, flush-8:0 → flush, kdamond.0 → kdamond)
// and, once one of those went,
// bare trailing digits too (ll_ost_io00_001 → ll_ost_io). A name that ends
// in digits without a separator stays (python3).
std::string FoldProcessName(std::string_view comm);

// Every process under `proc_root` (its numeric entries' stat files). A
// process that ends mid-scan, or whose stat does not parse, is left out.
std::vector<ProcessTicks> ScanProcesses(const std::string& proc_root);

// ScanProcesses(proc_root), shared by every sampler of this process: a scan
// younger than `max_age` is handed out again, and callers that arrive while
// one is being taken wait for it. With one agent per process every sample
// scans; a process hosting many agents (tests/tools/agent_swarm: 1,024 of them on one
// host) scans /proc a few times a second instead of once per agent per
// sample, which would take more CPU than the host has (a scan's cost:
// tests/bench/README.md, section 12). Thread-safe.
std::shared_ptr<const std::vector<ProcessTicks>> SharedProcessScan(const std::string& proc_root,
                                                                   int64_t max_age_ns);

// USER_HZ: the unit of utime and stime (sysconf(_SC_CLK_TCK), 100 on Linux).
double TicksPerSecond();

class ProcessCpuWindow {
 public:
  // Feeds one scan; the first one is the baseline.
  void Add(const std::vector<ProcessTicks>& scan);

  // The groups (FoldProcessName) that used CPU, by user + system time,
  // largest first, at most `limit`: cpu_pct = ticks / ticks_per_s /
  // window_s × 100 (100 = one core busy for the whole window), `pid` the
  // group's busiest process, `processes` how many the window saw in it.
  std::vector<v1::ProcessCpu> Top(double window_s, double ticks_per_s, size_t limit) const;

  // Processes seen so far (for tests and the cost note).
  size_t seen() const { return procs_.size(); }

 private:
  struct Seen {
    std::string comm;
    bool kernel_thread = false;
    uint64_t base_user = 0, base_system = 0;  // at the baseline, 0 when born after it
    uint64_t last_user = 0, last_system = 0;  // at the last scan that saw it
  };
  bool have_baseline_ = false;
  std::map<std::pair<uint32_t, uint64_t>, Seen> procs_;  // (pid, start ticks)
};

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_PROCESS_CPU_H_
