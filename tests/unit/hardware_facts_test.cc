// The hardware an agent reports (agent/host_facts.h GatherHardwareFacts),
// read from a fake /proc and /sys tree laid out as the kernel does.
#include <string>

#include "absl/strings/str_format.h"
#include "agent/host_facts.h"
#include "common/files.h"
#include "gtest/gtest.h"
#include "unit/results_fixtures.h"

namespace lockstep {
namespace {

void Put(const std::string& path, const std::string& text) {
  ASSERT_TRUE(MakeDirectories(path.substr(0, path.rfind('/')), 0755).ok()) << path;
  ASSERT_TRUE(WriteFileAtomically(path, text).ok()) << path;
}

TEST(HardwareFacts, ReadsCpuNicsAndBlockDevicesFromTheTreeUnderRoot) {
  const std::string root = testing::TempDir("sysfs");
  Put(root + "/proc/cpuinfo",
      "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7763 64-Core "
      "Processor\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7763 64-Core Processor\n");
  // eth0 up at 25 Gb/s, ib0 up, lo and a down interface left out.
  Put(root + "/sys/class/net/eth0/type", "1\n");
  Put(root + "/sys/class/net/eth0/operstate", "up\n");
  Put(root + "/sys/class/net/eth0/speed", "25000\n");
  Put(root + "/sys/class/net/eth0/mtu", "9000\n");
  Put(root + "/sys/class/net/ib0/type", "32\n");
  Put(root + "/sys/class/net/ib0/operstate", "up\n");
  Put(root + "/sys/class/net/ib0/speed", "200000\n");
  Put(root + "/sys/class/net/ib0/mtu", "4092\n");
  Put(root + "/sys/class/net/lo/type", "772\n");
  Put(root + "/sys/class/net/lo/operstate", "unknown\n");
  Put(root + "/sys/class/net/eth1/type", "1\n");
  Put(root + "/sys/class/net/eth1/operstate", "down\n");
  // A virtual NIC whose speed reads -1.
  Put(root + "/sys/class/net/veth0/type", "1\n");
  Put(root + "/sys/class/net/veth0/operstate", "up\n");
  Put(root + "/sys/class/net/veth0/speed", "-1\n");
  Put(root + "/sys/class/net/veth0/mtu", "1500\n");
  Put(root + "/sys/block/nvme0n1/size", "7501476528\n");
  Put(root + "/sys/block/nvme0n1/queue/rotational", "0\n");
  Put(root + "/sys/block/nvme0n1/device/model", "SAMSUNG MZQL23T8HCLS-00A07     \n");
  Put(root + "/sys/block/sda/size", "35156656128\n");
  Put(root + "/sys/block/sda/queue/rotational", "1\n");
  Put(root + "/sys/block/sda/device/model", "ST18000NM000J\n");
  Put(root + "/sys/block/loop0/size", "8\n");
  Put(root + "/sys/block/dm-0/size", "8\n");

  v1::HostFacts f;
  GatherHardwareFacts(root, &f);
  EXPECT_EQ(f.cpu_model(), "AMD EPYC 7763 64-Core Processor");
  ASSERT_EQ(f.nics_size(), 3);  // eth0, ib0, veth0 (sorted)
  EXPECT_EQ(f.nics(0).name(), "eth0");
  EXPECT_EQ(f.nics(0).speed_mbit_per_s(), 25000u);
  EXPECT_EQ(f.nics(0).mtu(), 9000u);
  EXPECT_EQ(f.nics(0).kind(), "ether");
  EXPECT_EQ(f.nics(1).name(), "ib0");
  EXPECT_EQ(f.nics(1).kind(), "infiniband");
  EXPECT_EQ(f.nics(1).speed_mbit_per_s(), 200000u);
  EXPECT_EQ(f.nics(2).speed_mbit_per_s(), 0u);  // -1: unknown
  ASSERT_EQ(f.block_devices_size(), 2);
  EXPECT_EQ(f.block_devices(0).name(), "nvme0n1");
  EXPECT_EQ(f.block_devices(0).model(), "SAMSUNG MZQL23T8HCLS-00A07");
  EXPECT_EQ(f.block_devices(0).size_bytes(), 7501476528ull * 512);
  EXPECT_FALSE(f.block_devices(0).rotational());
  EXPECT_EQ(f.block_devices(1).name(), "sda");
  EXPECT_TRUE(f.block_devices(1).rotational());
}

TEST(HardwareFacts, AnEmptyTreeLeavesTheFactsEmpty) {
  v1::HostFacts f;
  GatherHardwareFacts(testing::TempDir("sysfs-empty"), &f);
  EXPECT_EQ(f.cpu_model(), "");
  EXPECT_EQ(f.nics_size(), 0);
  EXPECT_EQ(f.block_devices_size(), 0);
}

// "LIMIT, IN_USE in use (NAME)" as GatherThreadLimit reads the tree under `root`.
std::string LimitAt(const std::string& root) {
  v1::HostFacts f;
  GatherThreadLimit(root, &f);
  return absl::StrFormat("%u, %u in use (%s)", f.thread_limit(), f.threads_in_use(),
                         f.thread_limit_name());
}

// The tightest of threads-max, pid_max (against the system's threads) and
// the agent's cgroup pids.max (against its pids.current) is reported.
TEST(ThreadLimit, TheLimitWithTheLeastRoomIsReported) {
  const std::string root = testing::TempDir("threads");
  Put(root + "/proc/loadavg", "0.52 0.58 0.59 3/31000 12345\n");
  Put(root + "/proc/sys/kernel/threads-max", "1030000\n");
  Put(root + "/proc/sys/kernel/pid_max", "32768\n");
  EXPECT_EQ(LimitAt(root), "32768, 31000 in use (kernel.pid_max)");
  // A cgroup of 2,000 pids with 1,500 in use has less room left (500).
  const std::string cgroup = root + "/sys/fs/cgroup/system.slice/lockstep-agent.service";
  Put(root + "/proc/self/cgroup", "0::/system.slice/lockstep-agent.service\n");
  Put(cgroup + "/pids.max", "2000\n");
  Put(cgroup + "/pids.current", "1500\n");
  EXPECT_EQ(LimitAt(root),
            "2000, 1500 in use (pids.max of cgroup /system.slice/lockstep-agent.service)");
  // "max": no cgroup limit; pid_max binds again.
  Put(cgroup + "/pids.max", "max\n");
  EXPECT_EQ(LimitAt(root), "32768, 31000 in use (kernel.pid_max)");
  // Nothing readable: nothing said.
  EXPECT_EQ(LimitAt(testing::TempDir("threads-empty")), "0, 0 in use ()");
  // This host: some limit, and threads in use below it.
  v1::HostFacts here;
  GatherThreadLimit("/", &here);
  if (here.thread_limit() > 0) {
    EXPECT_LT(here.threads_in_use(), here.thread_limit());
  }
}

TEST(HardwareFacts, TheRealHostsCpuModelIsReadWhenItsCpuinfoNamesOne) {
  auto cpuinfo = ReadFileToString("/proc/cpuinfo");
  if (!cpuinfo.ok() || cpuinfo->find("model name") == std::string::npos) {
    GTEST_SKIP() << "/proc/cpuinfo has no model name line here";
  }
  v1::HostFacts f;
  GatherHardwareFacts("/", &f);
  EXPECT_FALSE(f.cpu_model().empty());
  EXPECT_NE(cpuinfo->find(f.cpu_model()), std::string::npos) << f.cpu_model();
}

}  // namespace
}  // namespace lockstep
