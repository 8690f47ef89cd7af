// agent/fs/: the file-system interface's pure parts (CephFS layouts, the
// refusals), FileSystemFor on this machine's own directories, and the Ceph
// daemon monitor against a fake admin socket (a real Unix socket server
// speaking Ceph's framing: the command and a NUL, a 4-byte big-endian length
// and the answer).
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "agent/fs/admin_socket.h"
#include "agent/fs/ceph_daemons.h"
#include "agent/fs/cephfs.h"
#include "agent/fs/file_system.h"
#include "agent/fs/lustre_tools.h"
#include "agent/fs/root_mounts.h"
#include "agent/phase_runner.h"
#include "common/files.h"
#include "common/fs_type.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "unit/run_phase.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using ::lockstep::testing::TempDir;

TEST(CephLayout, ParsesTheVxattrText) {
  v1::FsLayout l = ParseCephLayout("stripe_unit=65536 stripe_count=4 object_size=4194304 pool=cephfs_data");
  EXPECT_EQ(l.stripe_unit_bytes(), 65536u);
  EXPECT_EQ(l.stripe_count(), 4);
  EXPECT_EQ(l.object_size_bytes(), 4194304u);
  EXPECT_EQ(l.pool(), "cephfs_data");
  EXPECT_EQ(l.stripe_index(), -1);
}

TEST(CephFsSettings, RefusesWhatCephFsDoesNotHaveNamingKeyValueAndDirectory) {
  CephFs fs("ceph-fuse");
  v1::PhaseSpec spec;
  spec.set_set_stripe(true);
  spec.set_stripe_index(2);
  absl::Status s = fs.CheckSettings(spec, "/mnt/c/d");
  EXPECT_THAT(s.message(), HasSubstr("stripe_index = 2: the file system of /mnt/c/d is cephfs"));
  spec.set_stripe_index(-1);
  spec.set_stripe_count(-1);
  EXPECT_THAT(fs.CheckSettings(spec, "/d").message(), HasSubstr("stripe_count = -1"));
  spec.set_stripe_count(4);
  spec.set_stripe_size_bytes(65536 * 3);
  spec.set_object_size_bytes(1 << 20);
  EXPECT_THAT(fs.CheckSettings(spec, "/d").message(),
              HasSubstr("object_size = 1048576: the file system of /d is cephfs, which needs an "
                        "object_size that is a multiple of the stripe_unit (stripe_size = 196608)"));
  spec.set_stripe_size_bytes(65536);
  EXPECT_OK(fs.CheckSettings(spec, "/d"));
  v1::PhaseSpec crc;
  crc.set_checksums(v1::CHECKSUMS_OFF);
  EXPECT_THAT(fs.CheckSettings(crc, "/d").message(),
              HasSubstr("checksums = false: the file system of /d is cephfs (ceph-fuse), which "
                        "switches client data CRCs (ms_crc_data) only when the client mounts"));
  // Declared as refused: layouts yes, checksums no.
  EXPECT_TRUE(fs.Capabilities().layouts());
  EXPECT_FALSE(fs.Capabilities().checksums());
  EXPECT_TRUE(fs.Capabilities().shared());
}

TEST(FileSystemFor, ALocalDirectoryIsPosixAndRefusesLayouts) {
  TempDir tmp;
  LustreTools tools;
  FileSystemContext ctx{.lustre = &tools};
  auto fs = FileSystemFor(tmp.path(), ctx);
  ASSERT_OK(fs.status());
  EXPECT_EQ((*fs)->Name(), "posix");
  v1::PhaseSpec spec;
  spec.set_set_stripe(true);
  spec.set_stripe_count(2);
  absl::Status s = (*fs)->CheckSettings(spec, tmp.path());
  EXPECT_THAT(s.message(), HasSubstr("the file system of " + tmp.path()));
  EXPECT_THAT(s.message(), HasSubstr("not Lustre or CephFS"));
  EXPECT_TRUE(absl::IsNotFound(FileSystemFor(tmp.path() + "/missing", ctx).status()));
  // What it declares to the controller (RootFacts.capabilities) matches
  // what it refuses: no layout, no checksums, one host's files.
  const v1::FsCapabilities can = (*fs)->Capabilities();
  EXPECT_FALSE(can.layouts());
  EXPECT_FALSE(can.checksums());
  EXPECT_FALSE(can.shared());
  // The test hook that makes any directory Lustre makes it declare so.
  ctx.lustre_any_fs = true;
  auto lustre = FileSystemFor(tmp.path(), ctx);
  ASSERT_OK(lustre.status());
  EXPECT_EQ((*lustre)->Name(), "lustre");
  EXPECT_TRUE((*lustre)->Capabilities().layouts());
  EXPECT_TRUE((*lustre)->Capabilities().checksums());
  EXPECT_TRUE((*lustre)->Capabilities().shared());
}

// mdtest's items by full path where the file system looks each name up
// itself (agent/workloads/mdtest.cc): network, cluster and FUSE file systems;
// never the local ones, whose dentry cache answers. The same rows say which
// are shared; one table names them all (common/fs_type.h).
TEST(FsKind, NetworkClusterAndFuseFileSystemsRevalidateNamesAndAreShared) {
  for (uint64_t magic : {0x65735546ull, 0x00c36400ull, 0x0BD00BD0ull, 0x6969ull, 0xFF534D42ull,
                         0x47504653ull, 0x19830326ull}) {
    const FsKind* kind = FsKindOf(magic);
    ASSERT_NE(kind, nullptr) << std::hex << magic;
    EXPECT_TRUE(kind->names_revalidated) << kind->name;
    EXPECT_TRUE(kind->shared) << kind->name;
  }
  for (uint64_t magic : {0xEF53ull, 0x58465342ull, 0x01021994ull, 0x9123683Eull, 0x794C7630ull}) {
    const FsKind* kind = FsKindOf(magic);
    ASSERT_NE(kind, nullptr) << std::hex << magic;
    EXPECT_FALSE(kind->names_revalidated) << kind->name;
    EXPECT_FALSE(kind->shared) << kind->name;
  }
  // A type not in the table: named in hex, nothing assumed.
  EXPECT_EQ(FsKindOf(0x12345678), nullptr);
  EXPECT_EQ(FsTypeName(0x12345678), "0x12345678");
  // The names the table gives are the names it finds by (and CephFS's
  // other spelling, as older agents reported it).
  EXPECT_EQ(FsTypeName(0x19830326), "beegfs");
  EXPECT_EQ(FsTypeName(0x00c36400), "ceph");
  ASSERT_NE(FsKindNamed("cephfs"), nullptr);
  EXPECT_EQ(FsKindNamed("cephfs")->magic, kCephSuperMagic);
  EXPECT_EQ(FsKindNamed("beegfs")->magic, 0x19830326u);
  EXPECT_EQ(FsKindNamed("ext5"), nullptr);
}

TEST(AdminSocketPath, ExpandsCephsMetavariables) {
  EXPECT_EQ(AdminSocketPath("/var/run/ceph/$cluster-$name.asok", "ceph", "osd.12"),
            "/var/run/ceph/ceph-osd.12.asok");
  EXPECT_EQ(AdminSocketPath("/r/$type/$id.asok", "c", "mds.a"), "/r/mds/a.asok");
}

// A Ceph daemon's admin socket, answering from a table; counts commands.
class FakeAdminSocket {
 public:
  FakeAdminSocket(const std::string& path, std::string perf_dump, std::string pid_file)
      : path_(path), perf_dump_(std::move(perf_dump)), pid_file_(std::move(pid_file)) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(fd_, 8), 0);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeAdminSocket() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  std::atomic<int> cache_drops{0};
  std::atomic<int> bench_commands{0};
  std::atomic<bool> refuse_bench{false};
  std::atomic<uint64_t> op_w{10};

 private:
  void Serve() {
    while (!stop_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string cmd;
      char ch;
      while (::read(c, &ch, 1) == 1 && ch != '\0') cmd.push_back(ch);
      std::string answer = "{}";
      if (cmd.find("perf dump") != std::string::npos) {
        answer = absl::StrReplaceAll(perf_dump_, {{"OPS", std::to_string(op_w.load())}});
      } else if (cmd.find("pid_file") != std::string::npos) {
        answer = absl::StrFormat(R"({"pid_file": "%s"})", pid_file_);
      } else if (cmd.find("version") != std::string::npos) {
        answer = R"({"version": "16.2.15", "release": "pacific"})";
      } else if (cmd.find("cache drop") != std::string::npos) {
        cache_drops.fetch_add(1);
      } else if (cmd.find(R"("bench")") != std::string::npos) {
        bench_commands.fetch_add(1);
        // As Ceph 16 answers `ceph tell osd.0 bench 4194304 1048576`, or its refusal.
        answer = refuse_bench ? "bench count 4194304 > osd_bench_small_size_max_iops"
                              : R"({"bytes_written": 4194304, "blocksize": 1048576,
                                   "elapsed_sec": 0.25, "bytes_per_sec": 16777216,
                                   "iops": 16})";
      }
      unsigned char len[4] = {static_cast<unsigned char>(answer.size() >> 24),
                              static_cast<unsigned char>(answer.size() >> 16),
                              static_cast<unsigned char>(answer.size() >> 8),
                              static_cast<unsigned char>(answer.size())};
      (void)!::write(c, len, 4);
      (void)!::write(c, answer.data(), answer.size());
      ::close(c);
    }
  }
  std::string path_, perf_dump_, pid_file_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(CephDaemons, CountersCpuCachesAndDeathThroughTheAdminSocket) {
  TempDir tmp;
  // This test process stands in for the daemon: its pid, its /proc.
  const std::string pid_file = tmp.path() + "/osd.0.pid";
  ASSERT_OK(WriteFileAtomically(pid_file, absl::StrFormat("%d\n", ::getpid())));
  auto sock = std::make_unique<FakeAdminSocket>(
      tmp.path() + "/osd.0.asok",
      R"({"osd": {"op": OPS, "op_w": 0, "op_r": 2, "op_in_bytes": 1048576, "op_out_bytes": 0,
                  "op_w_latency": {"avgcount": 10, "sum": 0.5}}})",
      pid_file);
  CephDaemonOptions o;
  o.daemons = {"osd.0"};
  o.admin_socket = tmp.path() + "/$name.asok";
  CephDaemons daemons(o);
  auto facts = daemons.Facts();
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0].version(), "16.2.15");
  EXPECT_EQ(facts[0].pid(), static_cast<uint32_t>(::getpid()));
  EXPECT_TRUE(daemons.Down().empty());

  const uint64_t w = daemons.BeginWindow();
  sock->op_w.store(25);  // 15 more ops during the "phase"
  auto stats = daemons.EndWindow(w);
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].name(), "osd.0");
  EXPECT_TRUE(stats[0].running());
  EXPECT_EQ(stats[0].ops(), 15u);
  EXPECT_GT(stats[0].rss_bytes(), 0u);
  EXPECT_EQ(stats[0].warning(), "");

  int64_t ns = 0;
  auto dropped = daemons.DropCaches(&ns);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_THAT(dropped[0].line, ::testing::MatchesRegex("osd\\.0 [0-9]+ ms"));
  EXPECT_TRUE(dropped[0].dropped);
  EXPECT_EQ(sock->cache_drops.load(), 1);

  // The daemon goes away: its socket first, then (another pid) its process.
  sock.reset();
  ASSERT_OK(WriteFileAtomically(pid_file, "999999999\n"));
  dropped = daemons.DropCaches(&ns);
  EXPECT_THAT(dropped[0].line, HasSubstr("osd.0: cache not dropped: admin socket"));
  EXPECT_FALSE(dropped[0].dropped);
  const uint64_t w2 = daemons.BeginWindow();
  stats = daemons.EndWindow(w2);
  EXPECT_THAT(stats[0].warning(), HasSubstr("osd.0 (pid 999999999) is not running"));
  EXPECT_THAT(daemons.Down(), ::testing::ElementsAre("osd.0 (pid 999999999) is not running"));
}

TEST(CephDaemons, ANamedDaemonThatIsMissingIsAWarningNotAnError) {
  TempDir tmp;
  CephDaemonOptions o;
  o.daemons = {"mds.z"};
  o.admin_socket = tmp.path() + "/$name.asok";
  CephDaemons daemons(o);
  auto facts = daemons.Facts();
  EXPECT_THAT(facts[0].warning(), HasSubstr("mds.z is configured ([ceph] daemons) but did not answer"));
  EXPECT_THAT(daemons.Down(), ::testing::ElementsAre(HasSubstr("mds.z: no pid known")));
  const uint64_t w = daemons.BeginWindow();
  auto stats = daemons.EndWindow(w);
  EXPECT_FALSE(stats[0].running());
  EXPECT_THAT(stats[0].warning(), HasSubstr("mds.z: no pid known and no answer"));
}

// The backend kind's osd_bench (agent/workloads/backend.h): one task per OSD
// of the agent's config, each the OSD's own bench through its admin socket.
TEST(CephDaemons, OsdBenchThroughTheAdminSocketAsABackendPhase) {
  TempDir tmp;
  const std::string pid_file = tmp.path() + "/osd.pid";
  ASSERT_OK(WriteFileAtomically(pid_file, absl::StrFormat("%d\n", ::getpid())));
  FakeAdminSocket osd0(tmp.path() + "/osd.0.asok", "{}", pid_file);
  FakeAdminSocket osd3(tmp.path() + "/osd.3.asok", "{}", pid_file);
  CephDaemonOptions o;
  o.daemons = {"osd.0", "mds.a", "osd.3"};
  o.admin_socket = tmp.path() + "/$name.asok";
  CephDaemons daemons(o);
  EXPECT_THAT(daemons.Osds(), ::testing::ElementsAre("osd.0", "osd.3"));
  auto bench = daemons.BenchOsd("osd.0", 4 << 20, 1 << 20, absl::Seconds(5));
  ASSERT_OK(bench);
  EXPECT_EQ(bench->bytes, 4u << 20);
  EXPECT_EQ(bench->block_bytes, 1u << 20);
  EXPECT_DOUBLE_EQ(bench->seconds, 0.25);
  EXPECT_DOUBLE_EQ(bench->bytes_per_sec, 16777216);
  EXPECT_THAT(daemons.BenchOsd("osd.7", 1, 1, absl::Seconds(1)).status().message(),
              HasSubstr("osd.7 is not among this agent's [ceph] daemons"));

  v1::PhaseSpec s = testing::BackendPhaseSpec("osd_bench", 2);
  RunnerOptions options;
  options.ceph_daemons = &daemons;
  auto runner = PhaseRunner::Prepare(s, tmp.path(), options);
  ASSERT_OK(runner);
  v1::PrepareReply reply;
  (*runner)->DescribePrepared(&reply);
  EXPECT_THAT(reply.backend_targets(), ::testing::ElementsAre("osd.0", "osd.3"));
  const v1::PhaseResult r = testing::RunNow(runner->get());
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r.tasks_size(), 2);
  EXPECT_EQ(r.tasks(0).backend().target(), "osd.0");
  EXPECT_EQ(r.tasks(1).backend().target(), "osd.3");
  EXPECT_EQ(r.tasks(1).backend().write_ns(), 250'000'000);
  EXPECT_EQ(r.tasks(1).bytes(), 4u << 20);
  EXPECT_EQ(osd0.bench_commands.load(), 2);  // the one above and the phase's
  EXPECT_EQ(osd3.bench_commands.load(), 1);

  // An OSD that refuses its bench fails its task with the OSD's words.
  osd3.refuse_bench = true;
  runner = PhaseRunner::Prepare(s, tmp.path(), options);
  ASSERT_OK(runner);
  const v1::PhaseResult refused = testing::RunNow(runner->get());
  EXPECT_FALSE(refused.ok());
  EXPECT_THAT(refused.error(), HasSubstr("osd.3 refused its bench of 4194304 bytes"));
  EXPECT_THAT(refused.error(), HasSubstr("osd_bench_small_size_max_iops"));

  // Tasks that are not one per OSD: the controller and agent disagree.
  s.set_tasks(1);
  s.set_total_tasks(1);
  EXPECT_THAT(PhaseRunner::Prepare(s, tmp.path(), options).status().message(),
              HasSubstr("1 tasks for the 2 targets of host"));
}

TEST(RootMounts, ARootWhoseMountIsGoneIsRefusedNamingHostAndRoot) {
  TempDir tmp;
  const std::string root = tmp.path() + "/mnt";
  ASSERT_EQ(::mkdir(root.c_str(), 0755), 0);
  if (::mount("lockstep-test", root.c_str(), "tmpfs", 0, "size=1m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root): " << std::strerror(errno);
  }
  RootMounts mounts({root});
  EXPECT_OK(mounts.Check(root + "/d", "client1"));
  EXPECT_OK(mounts.Check("relative/d", "client1"));
  ASSERT_EQ(::umount(root.c_str()), 0);
  absl::Status s = mounts.Check(root + "/d", "client1");
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("on client1 the root " + root + " was on tmpfs when the "
                                     "agent started and is now on"));
  EXPECT_THAT(s.message(), HasSubstr("its mount is gone"));
  EXPECT_OK(mounts.Check("/elsewhere", "client1"));  // no root holds it: Resolve refuses it
}

}  // namespace
}  // namespace lockstep
