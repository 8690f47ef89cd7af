// The Ceph daemons a server agent serves (its config's [ceph] daemons:
// "osd.0", "mds.a"), reached through their admin sockets (admin_socket.h)
// and /proc: their version and pid for HostFacts, their CPU and perf
// counters over a telemetry window, their caches in a cache barrier, and
// whether they still run, for every heartbeat.
//
// A daemon that is missing, dead or hung is never an error of the agent: it
// becomes a warning that names the daemon, its pid or socket and why, in
// the facts, the window's DaemonStats and the heartbeat.
//
// Thread-safe.
#ifndef LOCKSTEP_AGENT_FS_CEPH_DAEMONS_H_
#define LOCKSTEP_AGENT_FS_CEPH_DAEMONS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lockstep/v1/agent.pb.h"
#include "lockstep/v1/telemetry.pb.h"

namespace lockstep {

struct CephDaemonOptions {
  std::vector<std::string> daemons;  // "osd.0", "mds.a", "mon.a", ...
  // Ceph's admin_socket option, with its metavariables ($cluster, $name,
  // $type, $id); Ceph's default.
  std::string admin_socket = "/var/run/ceph/$cluster-$name.asok";
  std::string cluster = "ceph";
  std::string proc_root = "/proc";
  // Per admin-socket command; a daemon hung longer is reported as hung.
  absl::Duration timeout = absl::Seconds(5);
  // For the version and pid lookups of Facts() (Attach, `lockstep agents`)
  // and Down() (heartbeats): a hung daemon must not hold those up.
  absl::Duration quick_timeout = absl::Seconds(1);
  // MDS "cache drop": how long the MDS may take to recall client caps.
  uint32_t mds_cache_drop_timeout_s = 10;
};

class CephDaemons {
 public:
  explicit CephDaemons(CephDaemonOptions options);
  ~CephDaemons();
  CephDaemons(const CephDaemons&) = delete;
  CephDaemons& operator=(const CephDaemons&) = delete;

  bool empty() const { return options_.daemons.empty(); }
  const CephDaemonOptions& options() const { return options_; }

  // Name, version ("version" command), pid and socket of each daemon.
  std::vector<v1::DaemonFacts> Facts();

  // A snapshot of every daemon's counters and CPU now; returns its id.
  uint64_t BeginWindow();
  // A second snapshot and the deltas since BeginWindow(id), one per daemon,
  // in config order. An unknown id gives an empty list.
  std::vector<v1::DaemonStats> EndWindow(uint64_t id);

  // Each daemon's "cache drop" (OSD: BlueStore's onode and buffer caches;
  // MDS: its metadata cache, recalling client caps first): "osd.0 12 ms",
  // or "osd.0: cache not dropped: <why>". `duration_ns`: the whole drop.
  struct CacheDrop {
    std::string line;
    bool dropped = false;
  };
  std::vector<CacheDrop> DropCaches(int64_t* duration_ns);

  // Daemons that are not running or are stopped (SIGSTOP), from /proc only
  // (no socket call: heartbeats must not wait on a hung daemon):
  // "osd.0 (pid 4242) is not running". Empty when all run.
  std::vector<std::string> Down();

  // The OSDs among the daemons, in config order ("osd.0", "osd.3").
  std::vector<std::string> Osds() const;
  // One OSD's own write bench, as `ceph tell osd.N bench BYTES BLOCK` runs it
  // ("bench" through its admin socket): what it wrote and how fast, as the
  // OSD timed it (bytes_written, blocksize, elapsed_sec, bytes_per_sec,
  // iops). Errors name the OSD and its socket: NotFound for a daemon not in
  // the config, what the OSD answered when it refused (its limits:
  // osd_bench_max_block_size, osd_bench_duration × the rate caps).
  struct OsdBench {
    uint64_t bytes = 0;
    uint64_t block_bytes = 0;
    double seconds = 0;
    double bytes_per_sec = 0;
    double iops = 0;
  };
  // OK when `daemon`'s admin socket answers ("version"): the agent may use
  // it. Otherwise the socket and why, with what to grant.
  absl::Status Answers(const std::string& daemon);
  absl::StatusOr<OsdBench> BenchOsd(const std::string& osd, uint64_t bytes, uint64_t block_bytes,
                                    absl::Duration timeout);

  // One daemon at one instant (cumulative counters).
  struct Snapshot {
    bool answered = false;   // the admin socket gave a perf dump
    std::string warning;     // why not, or why the pid is unknown
    uint32_t pid = 0;
    bool alive = false;
    uint64_t cpu_ticks = 0;  // utime + stime
    uint64_t rss_bytes = 0;
    int64_t mono_ns = 0;
    double ops = 0, write_ops = 0, read_ops = 0, in_bytes = 0, out_bytes = 0;
    double write_lat_s = 0, write_lat_n = 0, read_lat_s = 0, read_lat_n = 0;
    double op_lat_s = 0, op_lat_n = 0;
  };

 private:
  Snapshot Take(size_t i);
  uint32_t PidOf(size_t i);  // from the daemon's pid_file; 0 when unknown

  const CephDaemonOptions options_;
  absl::Mutex mu_;
  std::vector<std::string> pid_files_ ABSL_GUARDED_BY(mu_);  // per daemon, once known
  std::vector<uint32_t> last_pids_ ABSL_GUARDED_BY(mu_);
  uint64_t next_window_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, std::vector<Snapshot>> windows_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_FS_CEPH_DAEMONS_H_
