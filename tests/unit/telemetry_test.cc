#include "agent/telemetry.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "agent/fs/lustre_stats.h"
#include "agent/procfs.h"
#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// ---- Real-format texts ------------------------------------------------------

constexpr char kProcStat[] =
    "cpu  10132153 290696 3084719 46828483 16683 0 25195 0 175628 0\n"
    "cpu0 1393280 32966 572056 13343292 6130 0 17875 0 23933 0\n"
    "cpu1 1335807 36012 560316 11175633 2970 0 1938 0 20840 0\n"
    "cpu2 3730418 110882 984609 11169018 3867 0 3001 0 68311 0\n"
    "cpu3 3672648 110836 967738 11140540 3716 0 2381 0 62544 0\n"
    "intr 199292 35 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0\n"
    "ctxt 19006316\n"
    "btime 1540557223\n"
    "processes 62634\n"
    "procs_running 1\n"
    "procs_blocked 0\n"
    "softirq 4377291 0 1395466 4 140829 54281 0 26 1330003 0 1456682\n";

constexpr char kDiskStats[] =
    "   8       0 sda 1543 587 117452 1214 2044 1622 60984 2766 0 2720 4097 0 0 0 0 310 116\n"
    "   8       1 sda1 1410 587 108866 1109 2040 1622 60976 2763 0 2656 3872 0 0 0 0 0 0\n"
    "   7       0 loop0 46 0 2128 10 0 0 0 0 0 44 10 0 0 0 0 0 0\n"
    " 259       0 nvme0n1 249006 86 16214854 47812 1240361 786154 98125024 1173209 2 427172 "
    "1241036 0 0 0 0 43578 20014\n"
    " 253       0 dm-0 270 0 13448 64 0 0 0 0 0 84 64\n";  // 14 fields (pre-4.18)

constexpr char kNetDev[] =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
    "drop fifo colls carrier compressed\n"
    "    lo:  123456     100    0    0    0     0          0         0   123456     100    0  "
    "  0    0     0       0          0\n"
    "  eth0: 98765432   65432    1    2    0     0          0        12 12345678   23456    0 "
    "   3    0     0       0          0\n"
    "   ib0:1234567890123 4567 0    0    0     0          0         0 987654321098 3456    0 "
    "   0    0     0       0          0\n";

constexpr char kObdfilterStats[] =
    "snapshot_time             1671546960.190563011 secs.nsecs\n"
    "start_time                1671546839.264431839 secs.nsecs\n"
    "elapsed_time              120.926131172 secs.nsecs\n"
    "read_bytes                2350 samples [bytes] 4096 4194304 9854123456 41327829123456789\n"
    "write_bytes               6400 samples [bytes] 4096 4194304 26843545600 "
    "112589990684262400\n"
    "read                      2350 samples [usecs] 12 34567 1234567 987654321\n"
    "setattr                   2 samples [reqs]\n"
    "punch                     1 samples [reqs]\n"
    "sync                      8 samples [reqs]\n"
    "statfs                    123 samples [reqs]\n"
    "create                    4 samples [reqs]\n"
    "destroy                   64 samples [reqs]\n";

constexpr char kMdStats[] =
    "snapshot_time             1409777887.590023 secs.usecs\n"
    "open                      12 samples [reqs]\n"
    "close                     12 samples [reqs]\n"
    "mknod                     1 samples [reqs]\n"
    "unlink                    3 samples [reqs]\n"
    "mkdir                     2 samples [reqs]\n"
    "getattr                   40 samples [reqs]\n"
    "setattr                   5 samples [reqs]\n"
    "statfs                    20 samples [reqs]\n";

constexpr char kOscRpcStats[] =
    "snapshot_time:         1567004006.839125371 (secs.nsecs)\n"
    "read RPCs in flight:  0\n"
    "write RPCs in flight: 0\n"
    "pending write pages:  0\n"
    "pending read pages:   0\n"
    "\n"
    "\t\t\tread\t\t\twrite\n"
    "pages per rpc         rpcs   % cum % |       rpcs   % cum %\n"
    "1:\t\t         3  30  30   |          0   0   0\n"
    "2:\t\t         0   0  30   |          0   0   0\n"
    "256:\t\t         7  70 100   |        640 100 100\n"
    "\n"
    "\t\t\tread\t\t\twrite\n"
    "rpcs in flight        rpcs   % cum % |       rpcs   % cum %\n"
    "0:\t\t         0   0   0   |          0   0   0\n"
    "1:\t\t        10 100 100   |        320  50  50\n"
    "2:\t\t         0   0 100   |        320  50 100\n";

// ---- Parsers ----------------------------------------------------------------

TEST(TelemetryParse, ProcStat) {
  auto s = ParseProcStat(kProcStat);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->cores, 4u);
  EXPECT_EQ(s->cpu.user, 10132153u);
  EXPECT_EQ(s->cpu.nice, 290696u);
  EXPECT_EQ(s->cpu.system, 3084719u);
  EXPECT_EQ(s->cpu.idle, 46828483u);
  EXPECT_EQ(s->cpu.iowait, 16683u);
  EXPECT_EQ(s->cpu.softirq, 25195u);
  EXPECT_EQ(s->cpu.guest, 175628u);
  EXPECT_EQ(s->cpu.Total(), 10132153u + 290696u + 3084719u + 46828483u + 16683u + 25195u);
  EXPECT_FALSE(ParseProcStat("intr 1 2 3\n").ok());
  auto bad = ParseProcStat("cpu  1 2 x 4\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("cpu  1 2 x 4"));
}

TEST(TelemetryParse, CpuPercentOverTwoSamples) {
  CpuTimes a{100, 0, 100, 800, 0, 0, 0, 0, 0, 0};
  CpuTimes b{200, 0, 150, 850, 0, 0, 0, 0, 0, 0};  // +100 user, +50 sys, +50 idle
  CpuPercent p = CpuPercentBetween(a, b);
  EXPECT_DOUBLE_EQ(p.user, 50.0);
  EXPECT_DOUBLE_EQ(p.system, 25.0);
  EXPECT_DOUBLE_EQ(p.idle, 25.0);
  EXPECT_DOUBLE_EQ(p.iowait, 0.0);
  EXPECT_DOUBLE_EQ(p.BusyCores(4), 3.0);
  // No ticks: all zero, no division by zero.
  CpuPercent z = CpuPercentBetween(a, a);
  EXPECT_EQ(z.idle, 0.0);
  // A counter that went backwards counts as zero.
  CpuTimes c = a;
  c.user = 50;
  c.idle = 900;
  EXPECT_DOUBLE_EQ(CpuPercentBetween(a, c).idle, 100.0);
}

TEST(TelemetryParse, LoadAvgAndMemInfo) {
  auto l = ParseLoadAvg("0.52 0.58 0.59 3/1234 56789\n");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_DOUBLE_EQ(l->load1, 0.52);
  EXPECT_DOUBLE_EQ(l->load15, 0.59);
  EXPECT_EQ(l->running, 3u);
  EXPECT_EQ(l->threads, 1234u);
  EXPECT_FALSE(ParseLoadAvg("garbage").ok());

  auto m = ParseMemInfo(
      "MemTotal:       16318480 kB\n"
      "MemFree:          493148 kB\n"
      "Dirty:               124 kB\n"
      "Writeback:             8 kB\n"
      "HugePages_Total:       0\n");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->dirty_bytes, 124u * 1024);
  EXPECT_EQ(m->writeback_bytes, 8u * 1024);
  auto missing = ParseMemInfo("MemTotal: 1 kB\nDirty: 2 kB\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("Writeback"));
}

TEST(TelemetryParse, DiskStats) {
  auto d = ParseDiskStats(kDiskStats);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->size(), 5u);
  EXPECT_EQ((*d)[0].device, "sda");
  EXPECT_EQ((*d)[0].reads, 1543u);
  EXPECT_EQ((*d)[0].read_sectors, 117452u);
  EXPECT_EQ((*d)[0].read_ms, 1214u);
  EXPECT_EQ((*d)[0].writes, 2044u);
  EXPECT_EQ((*d)[0].write_sectors, 60984u);
  EXPECT_EQ((*d)[0].write_ms, 2766u);
  EXPECT_EQ((*d)[0].io_ms, 2720u);
  EXPECT_EQ((*d)[3].device, "nvme0n1");
  EXPECT_EQ((*d)[3].in_flight, 2u);
  EXPECT_EQ((*d)[4].device, "dm-0");
  EXPECT_EQ((*d)[4].io_ms, 84u);
  auto bad = ParseDiskStats("8 0 sda 1 2 3\n8 0 sdb 1 2\n");
  ASSERT_FALSE(bad.ok());
}

TEST(TelemetryParse, NetDev) {
  auto n = ParseNetDev(kNetDev);
  ASSERT_TRUE(n.ok()) << n.status();
  ASSERT_EQ(n->size(), 3u);
  EXPECT_EQ((*n)[1].iface, "eth0");
  EXPECT_EQ((*n)[1].rx_bytes, 98765432u);
  EXPECT_EQ((*n)[1].rx_packets, 65432u);
  EXPECT_EQ((*n)[1].rx_errs, 1u);
  EXPECT_EQ((*n)[1].rx_drop, 2u);
  EXPECT_EQ((*n)[1].tx_bytes, 12345678u);
  EXPECT_EQ((*n)[1].tx_packets, 23456u);
  EXPECT_EQ((*n)[1].tx_drop, 3u);
  // Large counters run into the colon.
  EXPECT_EQ((*n)[2].iface, "ib0");
  EXPECT_EQ((*n)[2].rx_bytes, 1234567890123u);
  EXPECT_EQ((*n)[2].tx_bytes, 987654321098u);
}

TEST(TelemetryParse, LustreObdfilterStats) {
  auto s = ParseLustreStats(kObdfilterStats);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_DOUBLE_EQ(s->snapshot_time_s, 1671546960.190563011);
  ASSERT_EQ(s->counters.size(), 9u);  // start_time / elapsed_time are not counters
  EXPECT_EQ(s->counters[0].name, "read_bytes");
  EXPECT_EQ(s->counters[0].unit, "bytes");
  EXPECT_EQ(s->counters[0].samples, 2350u);
  EXPECT_EQ(s->counters[0].sum, 9854123456u);
  EXPECT_EQ(s->counters[1].name, "write_bytes");
  EXPECT_EQ(s->counters[1].sum, 26843545600u);
  EXPECT_EQ(s->counters[2].unit, "usecs");
  EXPECT_EQ(s->counters[2].sum, 1234567u);
  EXPECT_EQ(s->counters[3].name, "setattr");
  EXPECT_EQ(s->counters[3].unit, "reqs");
  EXPECT_EQ(s->counters[3].samples, 2u);
  EXPECT_EQ(s->counters[3].sum, 0u);
}

TEST(TelemetryParse, LustreMdStatsAndLlite) {
  auto s = ParseLustreStats(kMdStats);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_DOUBLE_EQ(s->snapshot_time_s, 1409777887.590023);
  ASSERT_EQ(s->counters.size(), 8u);
  EXPECT_EQ(s->counters[5].name, "getattr");
  EXPECT_EQ(s->counters[5].samples, 40u);
  // llite stats: three values (no sumsq) and the historic "[regs]" unit.
  auto l = ParseLustreStats(
      "snapshot_time             1589386915.403463171 secs.nsecs\n"
      "read_bytes                10 samples [bytes] 0 1048576 5242880\n"
      "open                      5 samples [regs]\n");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->counters[0].sum, 5242880u);
  EXPECT_EQ(l->counters[1].unit, "regs");
  EXPECT_FALSE(ParseLustreStats("write_bytes x samples [bytes] 1 2 3\n").ok());
}

TEST(TelemetryParse, LustreRpcStats) {
  auto s = ParseLustreRpcStats(kOscRpcStats);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_DOUBLE_EQ(s->snapshot_time_s, 1567004006.839125371);
  ASSERT_EQ(s->counters.size(), 12u);
  EXPECT_EQ(s->counters[0].name, "read.pages_per_rpc.1");
  EXPECT_EQ(s->counters[0].samples, 3u);
  EXPECT_EQ(s->counters[5].name, "write.pages_per_rpc.256");
  EXPECT_EQ(s->counters[5].samples, 640u);
  EXPECT_EQ(s->counters[5].sum, 640u * 256);
  EXPECT_EQ(s->counters[9].name, "write.rpcs_in_flight.1");
  EXPECT_EQ(s->counters[9].samples, 320u);
}

// ---- Sampler on a fake proc root ---------------------------------------------

class TempDir {
 public:
  TempDir() {
    std::string templ = ::testing::TempDir() + "/telemetry_test.XXXXXX";
    char* p = ::mkdtemp(templ.data());
    EXPECT_NE(p, nullptr);
    path_ = templ;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream f(path, std::ios::trunc);
  f << text;
  ASSERT_TRUE(f.good()) << path;
}

struct FakeHost {
  uint64_t user, system, idle;
  uint64_t dirty_kb;
  uint64_t sda_reads, sda_read_sectors, sda_writes, sda_write_sectors, sda_io_ms;
  uint64_t eth0_rx, eth0_tx;
  uint64_t ost_write_samples, ost_write_sum, ost_punch;
};

void WriteFakeHost(const std::string& root, const FakeHost& h) {
  WriteFile(root + "/proc/stat",
            absl::StrFormat("cpu  %d 0 %d %d 0 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0 0 0\n"
                            "cpu1 0 0 0 0 0 0 0 0 0 0\ncpu2 0 0 0 0 0 0 0 0 0 0\n"
                            "cpu3 0 0 0 0 0 0 0 0 0 0\nctxt 1\n",
                            h.user, h.system, h.idle));
  WriteFile(root + "/proc/loadavg", "1.50 1.00 0.50 2/300 4242\n");
  WriteFile(root + "/proc/meminfo",
            absl::StrFormat("MemTotal:       16318480 kB\nDirty:  %d kB\nWriteback:   0 kB\n",
                            h.dirty_kb));
  WriteFile(root + "/proc/diskstats",
            absl::StrFormat("   8       0 sda %d 0 %d 10 %d 0 %d 20 0 %d 30 0 0 0 0 0 0\n"
                            "   7       0 loop0 1 0 8 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
                            h.sda_reads, h.sda_read_sectors, h.sda_writes,
                            h.sda_write_sectors, h.sda_io_ms));
  WriteFile(root + "/proc/net/dev",
            absl::StrFormat(
                "Inter-|   Receive                                                |  Transmit\n"
                " face |bytes    packets errs drop fifo frame compressed multicast|bytes    "
                "packets errs drop fifo colls carrier compressed\n"
                "    lo: 5 1 0 0 0 0 0 0 5 1 0 0 0 0 0 0\n"
                "  eth0: %d 10 0 0 0 0 0 0 %d 20 0 0 0 0 0 0\n",
                h.eth0_rx, h.eth0_tx));
  std::string stats = absl::StrFormat(
      "snapshot_time             1671546960.190563011 secs.nsecs\n"
      "write_bytes               %d samples [bytes] 4096 1048576 %d 0\n",
      h.ost_write_samples, h.ost_write_sum);
  if (h.ost_punch > 0) stats += absl::StrFormat("punch  %d samples [reqs]\n", h.ost_punch);
  WriteFile(root + "/lustre/obdfilter/lustre-OST0000/stats", stats);
}

TelemetryOptions FakeOptions(const std::string& root) {
  TelemetryOptions o;
  o.proc_root = root + "/proc";
  o.sys_root = root + "/sys";  // no block/: every non-loop disk counts
  o.fs_stats = {LustreStatsSource({root + "/lustre", root + "/lustre2"})};
  return o;
}

// The usual fake host of these tests: a little of everything, no Lustre punch.
const FakeHost kQuietHost{100, 100, 800, 0, 10, 1000, 20, 2000, 100, 1000, 2000, 10, 40960, 0};

// A sampler of kQuietHost written under `root`, its background thread
// started at a period of 50 ms; null (and a test failure) if it cannot be.
std::unique_ptr<TelemetrySampler> StartedQuietSampler(const std::string& root) {
  WriteFakeHost(root, kQuietHost);
  TelemetryOptions o = FakeOptions(root);
  o.interval_ms = 50;
  auto sampler = TelemetrySampler::Create(o);
  EXPECT_TRUE(sampler.ok()) << sampler.status();
  if (!sampler.ok()) return nullptr;
  absl::Status started = (*sampler)->Start();
  EXPECT_TRUE(started.ok()) << started;
  return started.ok() ? std::move(*sampler) : nullptr;
}

TEST(TelemetrySampler, KnownDeltasOverExplicitSamples) {
  TempDir dir;
  FakeHost h{100, 100, 800, 100, 10, 1000, 20, 2000, 100, 1000000, 2000000, 10, 40960, 0};
  WriteFakeHost(dir.path(), h);
  TelemetryOptions o = FakeOptions(dir.path());
  o.devices = {"/dev/sda", "sdz"};
  auto sampler = TelemetrySampler::Create(o);
  ASSERT_TRUE(sampler.ok()) << sampler.status();

  uint64_t w = (*sampler)->BeginWindow();
  // Interval 1: +100 user, +50 sys, +50 idle (4 cores: 3 busy cores).
  h.user += 100;
  h.system += 50;
  h.idle += 50;
  h.dirty_kb = 300;
  h.sda_reads += 5;
  h.sda_read_sectors += 2048;  // 1 MiB
  h.sda_writes += 7;
  h.sda_write_sectors += 4096;  // 2 MiB
  h.eth0_rx += 3000000;
  h.eth0_tx += 1000000;
  h.ost_write_samples += 5;
  h.ost_write_sum += 20480;
  h.ost_punch = 1;  // first appearance: counts from 0
  WriteFakeHost(dir.path(), h);
  ASSERT_TRUE((*sampler)->Sample().ok());
  // Interval 2: all idle.
  h.idle += 200;
  h.dirty_kb = 200;
  WriteFakeHost(dir.path(), h);
  auto s = (*sampler)->EndWindow(w);
  ASSERT_TRUE(s.ok()) << s.status();

  EXPECT_EQ(s->samples(), 3u);
  EXPECT_GT(s->interval_s(), 0.0);
  EXPECT_EQ(s->cpu().cores(), 4u);
  EXPECT_DOUBLE_EQ(s->cpu().user_pct().mean(), 25.0);   // 100 of 400 ticks
  EXPECT_DOUBLE_EQ(s->cpu().user_pct().max(), 50.0);
  EXPECT_DOUBLE_EQ(s->cpu().system_pct().mean(), 12.5);
  EXPECT_DOUBLE_EQ(s->cpu().idle_pct().mean(), 62.5);
  EXPECT_DOUBLE_EQ(s->cpu().idle_pct().max(), 100.0);
  EXPECT_DOUBLE_EQ(s->cpu().busy_cores().mean(), 1.5);
  EXPECT_DOUBLE_EQ(s->cpu().busy_cores().max(), 3.0);

  EXPECT_DOUBLE_EQ(s->memory().dirty_bytes().max(), 300.0 * 1024);
  EXPECT_DOUBLE_EQ(s->memory().dirty_bytes().mean(), 200.0 * 1024);
  EXPECT_DOUBLE_EQ(s->load().load1_end(), 1.5);
  EXPECT_EQ(s->load().running_max(), 2u);

  ASSERT_EQ(s->disks_size(), 1);
  const v1::DiskStats& d = s->disks(0);
  EXPECT_EQ(d.device(), "sda");
  EXPECT_EQ(d.read_bytes(), 1048576u);
  EXPECT_EQ(d.write_bytes(), 2097152u);
  EXPECT_EQ(d.read_ios(), 5u);
  EXPECT_EQ(d.write_ios(), 7u);
  EXPECT_NEAR(d.write_mb_s().mean(), 2097152 / 1e6 / s->interval_s(), 1e-6 * d.write_mb_s().mean());
  EXPECT_GE(d.write_mb_s().max(), d.write_mb_s().mean());
  EXPECT_LE(d.util_pct().max(), 100.0);

  ASSERT_EQ(s->nets_size(), 1);  // lo is left out
  EXPECT_EQ(s->nets(0).iface(), "eth0");
  EXPECT_EQ(s->nets(0).rx_bytes(), 3000000u);
  EXPECT_EQ(s->nets(0).tx_bytes(), 1000000u);

  ASSERT_EQ(s->lustre_sources_size(), 1);
  EXPECT_EQ(s->lustre_sources(0), "obdfilter.lustre-OST0000.stats");
  ASSERT_EQ(s->lustre_size(), 2);  // punch, write_bytes (sorted by name)
  EXPECT_EQ(s->lustre(0).name(), "punch");
  EXPECT_EQ(s->lustre(0).samples_delta(), 1u);
  EXPECT_EQ(s->lustre(1).source(), "obdfilter.lustre-OST0000.stats");
  EXPECT_EQ(s->lustre(1).name(), "write_bytes");
  EXPECT_EQ(s->lustre(1).unit(), "bytes");
  EXPECT_EQ(s->lustre(1).samples_delta(), 5u);
  EXPECT_EQ(s->lustre(1).sum_delta(), 20480u);

  // The missing device is a warning naming it, the file and the fix.
  ASSERT_EQ(s->warnings_size(), 1);
  EXPECT_THAT(s->warnings(0), HasSubstr("\"sdz\""));
  EXPECT_THAT(s->warnings(0), HasSubstr("diskstats"));
  EXPECT_THAT(s->warnings(0), HasSubstr("present: sda"));

  EXPECT_EQ((*sampler)->EndWindow(w).status().code(), absl::StatusCode::kNotFound);
}

TEST(TelemetrySampler, ShortWindowHasADeltaAndResetsAreWarned) {
  TempDir dir;
  FakeHost h = kQuietHost;
  WriteFakeHost(dir.path(), h);
  auto sampler = TelemetrySampler::Create(FakeOptions(dir.path()));
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  uint64_t w = (*sampler)->BeginWindow();
  h.user += 10;
  h.idle += 30;
  h.ost_write_samples = 2;  // stats cleared, then 2 writes
  h.ost_write_sum = 8192;
  WriteFakeHost(dir.path(), h);
  auto s = (*sampler)->EndWindow(w);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->samples(), 2u);
  EXPECT_DOUBLE_EQ(s->cpu().user_pct().mean(), 25.0);
  ASSERT_EQ(s->lustre_size(), 1);
  EXPECT_EQ(s->lustre(0).samples_delta(), 2u);
  EXPECT_EQ(s->lustre(0).sum_delta(), 8192u);
  ASSERT_EQ(s->warnings_size(), 1);
  EXPECT_THAT(s->warnings(0), HasSubstr("stats cleared"));
}

TEST(TelemetrySampler, OverlappingWindowsAndSameSourceUnderTwoRoots) {
  TempDir dir;
  FakeHost h = kQuietHost;
  WriteFakeHost(dir.path(), h);
  WriteFile(dir.path() + "/lustre2/obdfilter/lustre-OST0000/stats", "garbage\n");
  WriteFile(dir.path() + "/lustre2/osc/lustre-OST0000-osc-ffff8803/rpc_stats", kOscRpcStats);
  auto sampler = TelemetrySampler::Create(FakeOptions(dir.path()));
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  uint64_t outer = (*sampler)->BeginWindow();
  h.ost_write_samples += 1;
  WriteFakeHost(dir.path(), h);
  uint64_t inner = (*sampler)->BeginWindow();
  h.ost_write_samples += 2;
  WriteFakeHost(dir.path(), h);
  auto si = (*sampler)->EndWindow(inner);
  auto so = (*sampler)->EndWindow(outer);
  ASSERT_TRUE(si.ok() && so.ok());
  EXPECT_NE(inner, outer);
  ASSERT_EQ(si->lustre_size(), 1);
  EXPECT_EQ(si->lustre(0).samples_delta(), 2u);
  ASSERT_EQ(so->lustre_size(), 1);
  EXPECT_EQ(so->lustre(0).samples_delta(), 3u);
  EXPECT_EQ(so->samples(), 4u);  // begin, inner begin, inner end, end
  // The first root wins; the garbage copy under lustre2 is never read.
  EXPECT_THAT(so->lustre_sources(),
              ::testing::ElementsAre("obdfilter.lustre-OST0000.stats",
                                     "osc.lustre-OST0000-osc-ffff8803.rpc_stats"));
  EXPECT_EQ(so->warnings_size(), 0);
}

TEST(TelemetrySampler, BadOptionsNameTheValue) {
  TelemetryOptions o;
  o.interval_ms = 10;
  auto s = TelemetrySampler::Create(o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("10"));
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("50"));
  o.interval_ms = 1000;
  o.proc_root = "/nonexistent/proc";
  s = TelemetrySampler::Create(o);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("/nonexistent/proc"));
}

TEST(TelemetrySampler, BackgroundThreadOnFakeRoot) {
  TempDir dir;
  auto sampler = StartedQuietSampler(dir.path());
  ASSERT_NE(sampler, nullptr);
  EXPECT_EQ(sampler->Start().code(), absl::StatusCode::kFailedPrecondition);
  uint64_t w = sampler->BeginWindow();
  uint64_t base = sampler->SampleCount();
  ASSERT_TRUE(sampler->AwaitSampleCount(base + 3, 10000));
  auto s = sampler->EndWindow(w);
  sampler->Stop();
  sampler->Stop();  // idempotent
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_GE(s->samples(), 5u);  // begin + 3 background + end
  EXPECT_EQ(s->sample_interval_ms(), 50u);
  uint64_t after_stop = sampler->SampleCount();
  EXPECT_FALSE(sampler->AwaitSampleCount(after_stop + 1, 200));  // really stopped
}

// An idle agent (no phase, so no window) must not read /proc every period: on
// a host of many agents each one's scan of every process added up to the
// cores (512 agents on one machine took minutes to start).
TEST(TelemetrySampler, BackgroundThreadSamplesOnlyWhileAWindowIsOpen) {
  TempDir dir;
  auto sampler = StartedQuietSampler(dir.path());
  ASSERT_NE(sampler, nullptr);
  // Six periods with no window: no sample.
  EXPECT_FALSE(sampler->AwaitSampleCount(1, 300));
  uint64_t w = sampler->BeginWindow();
  EXPECT_EQ(sampler->SampleCount(), 1u);
  ASSERT_TRUE(sampler->AwaitSampleCount(3, 10000));  // the period resumed
  auto s = sampler->EndWindow(w);
  ASSERT_TRUE(s.ok()) << s.status();
  // Closed again: the count stays where EndWindow left it.
  uint64_t after_end = sampler->SampleCount();
  EXPECT_FALSE(sampler->AwaitSampleCount(after_end + 1, 300));
  // A second window wakes it again.
  uint64_t w2 = sampler->BeginWindow();
  ASSERT_TRUE(sampler->AwaitSampleCount(after_end + 3, 10000));
  ASSERT_TRUE(sampler->EndWindow(w2).ok());
}

// An agent's Start opens its window from the sample Prime() took at the end
// of Prepare: what the host did in between counts, no sample is read at the
// Start, and a stale primed sample (or none asked for) is not used.
TEST(TelemetrySampler, PrimedSampleStartsTheNextWindowWhileYoung) {
  TempDir dir;
  FakeHost h = kQuietHost;
  WriteFakeHost(dir.path(), h);
  auto sampler = TelemetrySampler::Create(FakeOptions(dir.path()));
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  (*sampler)->Prime();
  EXPECT_EQ((*sampler)->SampleCount(), 0u);  // feeds no window
  h.sda_writes += 7;
  h.sda_write_sectors += 4096;  // 2 MiB written after the prime
  WriteFakeHost(dir.path(), h);
  const uint64_t primed = (*sampler)->BeginWindow(absl::Seconds(60));
  EXPECT_EQ((*sampler)->SampleCount(), 0u);  // nothing read for it
  // The primed sample was that window's: the next one samples itself.
  const uint64_t fresh = (*sampler)->BeginWindow(absl::Seconds(60));
  EXPECT_EQ((*sampler)->SampleCount(), 1u);
  h.sda_writes += 1;
  h.sda_write_sectors += 2048;  // 1 MiB more, in both windows
  WriteFakeHost(dir.path(), h);
  auto a = (*sampler)->EndWindow(primed);
  auto b = (*sampler)->EndWindow(fresh);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(a->disks_size(), 1);
  ASSERT_EQ(b->disks_size(), 1);
  EXPECT_EQ(a->disks(0).write_bytes(), 3u << 20);
  EXPECT_EQ(b->disks(0).write_bytes(), 1u << 20);
  EXPECT_EQ(a->samples(), 3u);  // the primed one, the fresh window's first, its end

  // Older than asked for: the window samples itself.
  (*sampler)->Prime();
  h.sda_write_sectors += 2048;
  WriteFakeHost(dir.path(), h);
  const int64_t primed_at = MonotonicNs();
  while (MonotonicNs() - primed_at < 2'000'000) {
  }  // 2 ms on the monotonic clock, spun: the age bound below is 1 ms
  const uint64_t stale = (*sampler)->BeginWindow(absl::Milliseconds(1));
  auto c = (*sampler)->EndWindow(stale);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->disks_size(), 1);
  EXPECT_EQ(c->disks(0).write_bytes(), 0u);
}
TEST(TelemetrySampler, RealProcIsSane) {
  TelemetryOptions o;
  o.interval_ms = 50;
  auto sampler = TelemetrySampler::Create(o);
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  ASSERT_TRUE((*sampler)->Start().ok());
  uint64_t w = (*sampler)->BeginWindow();
  // Burn a little CPU so the window has ticks.
  int64_t until = MonotonicNs() + 150'000'000;
  volatile uint64_t x = 0;
  while (MonotonicNs() < until) x = x + 1;
  ASSERT_TRUE((*sampler)->AwaitSampleCount(2, 10000));
  auto s = (*sampler)->EndWindow(w);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_GE(s->samples(), 2u);
  EXPECT_GT(s->interval_s(), 0.1);
  if (std::getenv("LOCKSTEP_PRINT_TELEMETRY")) printf("%s\n", s->DebugString().c_str());
  const v1::CpuStats& c = s->cpu();
  EXPECT_GE(c.cores(), 1u);
  double sum = 0;
  for (const v1::MeanMax* m :
       {&c.user_pct(), &c.nice_pct(), &c.system_pct(), &c.iowait_pct(), &c.irq_pct(),
        &c.softirq_pct(), &c.steal_pct(), &c.idle_pct()}) {
    EXPECT_GE(m->mean(), 0.0);
    EXPECT_LE(m->mean(), 100.0);
    EXPECT_GE(m->max(), 0.0);
    EXPECT_LE(m->max(), 100.0);
    sum += m->mean();
  }
  EXPECT_NEAR(sum, 100.0, 0.01);
  EXPECT_GT(c.busy_cores().max(), 0.0);
  EXPECT_LE(c.busy_cores().max(), c.cores());
  EXPECT_GE(s->load().load1_end(), 0.0);
  for (const v1::DiskStats& d : s->disks()) {
    EXPECT_LE(d.util_pct().max(), 100.0) << d.device();
  }
}

}  // namespace
}  // namespace lockstep
