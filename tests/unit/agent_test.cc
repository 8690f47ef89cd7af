// The agent's machinery without gRPC: allowed roots, the phase runner on
// real files, sessions and leases.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>

#include <fstream>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "agent/agent_core.h"
#include "agent/phase_runner.h"
#include "agent/roots.h"
#include "common/clock.h"
#include "common/errors.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "common/wire_version.h"
#include "gtest/gtest.h"
#include "test_util.h"
#include "unit/run_phase.h"

namespace lockstep {
namespace {

using testing::RunNow;
using testing::RunSpec;

using ::testing::HasSubstr;
using ::testing::Not;
using testing::TempDir;

TEST(Roots, ResolvesInsideAndRefusesEscapes) {
  TempDir tmp;
  std::filesystem::create_directories(tmp / "root/sub");
  std::filesystem::create_directories(tmp / "outside");
  std::filesystem::create_directory_symlink(tmp / "outside", tmp / "root/link");
  auto roots = AllowedRoots::Create({tmp / "root"});
  ASSERT_OK(roots);
  EXPECT_EQ(*roots->Resolve("sub"), tmp / "root/sub");
  EXPECT_EQ(*roots->Resolve(tmp / "root/sub/.."), tmp / "root");

  auto dotdot = roots->Resolve("sub/../../outside");
  EXPECT_EQ(dotdot.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(dotdot.status().message(), HasSubstr("outside the agent's allowed roots"));
  EXPECT_EQ(KindOf(dotdot.status()), v1::PATH_REFUSED);
  auto link = roots->Resolve("link");
  EXPECT_EQ(link.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(link.status().message(), HasSubstr("resolves to " + tmp / "outside"));
  EXPECT_EQ(roots->Resolve("/etc").status().code(), absl::StatusCode::kPermissionDenied);
  auto missing = roots->Resolve("nope");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("does not exist"));
  EXPECT_EQ(KindOf(missing.status()), v1::ERROR_KIND_UNSPECIFIED);  // missing, not refused
  // Missing and outside the roots: refused, never "create it".
  for (const std::string& d : {std::string("/etc/lockstep-missing/x"), tmp / "outside/missing",
                               std::string("link/missing"), std::string("nope/../../../outside/n")}) {
    auto out = roots->Resolve(d);
    EXPECT_EQ(KindOf(out.status()), v1::PATH_REFUSED) << d;
    EXPECT_THAT(out.status().message(), Not(HasSubstr("create it"))) << d;
  }
  EXPECT_EQ(KindOf(roots->ResolveNew("/etc/lockstep-missing/md").status()), v1::PATH_REFUSED);
  EXPECT_EQ(KindOf(roots->ResolveNew("sub/..").status()), v1::PATH_REFUSED);
  EXPECT_FALSE(AllowedRoots::Create({tmp / "missing-root"}).ok());
  EXPECT_FALSE(AllowedRoots::Create({}).ok());
}

// Its path travels in protobuf strings: a root whose real path is not UTF-8
// (here reached through a link whose own name is) is refused at start.
TEST(Roots, ARootWhoseRealPathIsNotUtf8IsRefused) {
  TempDir tmp;
  std::filesystem::create_directories(tmp / "caf\xe9");
  std::filesystem::create_directory_symlink(tmp / "caf\xe9", tmp / "cafe");
  auto roots = AllowedRoots::Create({tmp / "cafe"});
  EXPECT_EQ(roots.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(roots.status().message(), HasSubstr("caf\\xe9, which is not UTF-8"));
  std::filesystem::create_directories(tmp / "caf\xc3\xa9");
  EXPECT_OK(AllowedRoots::Create({tmp / "caf\xc3\xa9"}));
}

// The agent runs as root and a plan may create, write and remove files
// anywhere below a root: a system directory as a root (also through a
// symlink that leads into /usr) is refused at Create, naming it and the
// fix, unless allowed; a directory of one's own and /dev/shm are not one.
TEST(AgentCore, ASystemDirectoryAsARootIsRefusedUnlessAllowed) {
  TempDir tmp;
  std::filesystem::create_directory_symlink("/usr/share", tmp / "share");
  AgentOptions o;
  o.telemetry = false;
  for (const std::string& root : {std::string("/"), std::string("/etc"), tmp / "share"}) {
    o.roots = {tmp.path(), root};
    auto core = AgentCore::Create(o);
    ASSERT_FALSE(core.ok()) << root;
    EXPECT_THAT(core.status().message(), HasSubstr("is a system directory")) << root;
    EXPECT_THAT(core.status().message(), HasSubstr("--allow_system_roots")) << root;
  }
  o.roots = {tmp.path(), tmp / "share"};
  o.allow_system_roots = true;
  EXPECT_OK(AgentCore::Create(o));
  o.allow_system_roots = false;
  o.roots = {tmp.path(), "/dev/shm"};
  EXPECT_OK(AgentCore::Create(o));
}

v1::PhaseSpec Spec(v1::PhaseKind kind, bool fpp) {
  v1::PhaseSpec s;
  s.set_phase_id("t0/r0/p");
  s.set_kind(kind);
  s.set_file_name("testfile");
  s.set_file_per_process(fpp);
  s.set_tasks(2);
  s.set_first_rank(0);
  s.set_total_tasks(2);
  s.set_transfer_bytes(64 * 1024);
  s.set_block_bytes(1024 * 1024);
  s.set_segments(2);
  s.set_pattern_seed(9);
  s.set_verify(kind == v1::READ);
  return s;
}

TEST(PhaseRunner, WritesThenReadsAndVerifiesBothLayouts) {
  for (bool fpp : {true, false}) {
    TempDir tmp;
    auto w = PhaseRunner::Prepare(Spec(v1::WRITE, fpp), tmp.path());
    ASSERT_OK(w);
    v1::PhaseResult wr = RunNow(w->get());
    ASSERT_TRUE(wr.ok()) << wr.error();
    ASSERT_EQ(wr.tasks_size(), 2);
    for (const auto& t : wr.tasks()) {
      EXPECT_EQ(t.bytes(), 2u * 1024 * 1024);
      EXPECT_EQ(t.ops(), 32u);
      EXPECT_EQ(t.latency().total_count(), 32u);
      EXPECT_LE(t.open_start_unix_ns(), t.open_stop_unix_ns());
      EXPECT_LE(t.open_stop_unix_ns(), t.rdwr_start_unix_ns());
      EXPECT_LE(t.rdwr_start_unix_ns(), t.first_io_unix_ns());
      EXPECT_LE(t.rdwr_stop_unix_ns(), t.close_start_unix_ns());
    }
    if (fpp) {
      EXPECT_EQ(std::filesystem::file_size(tmp / "testfile.00000000"), 2u << 20);
      EXPECT_EQ(std::filesystem::file_size(tmp / "testfile.00000001"), 2u << 20);
    } else {
      EXPECT_EQ(std::filesystem::file_size(tmp / "testfile"), 4u << 20);
    }
    auto r = PhaseRunner::Prepare(Spec(v1::READ, fpp), tmp.path());
    ASSERT_OK(r);
    v1::PhaseResult rr = RunNow(r->get());
    EXPECT_TRUE(rr.ok()) << rr.error();
    EXPECT_EQ(rr.tasks(0).bytes() + rr.tasks(1).bytes(), 4u << 20);
  }
}

// A controller holding a phase's result may send the next Prepare at once,
// and the agent refuses to replace a runner that is not Done() ("still
// running"): Done() must already hold when the result is handed out.
TEST(PhaseRunner, IsDoneWhenItsResultIsSent) {
  TempDir tmp;
  auto w = PhaseRunner::Prepare(Spec(v1::WRITE, true), tmp.path());
  ASSERT_OK(w);
  PhaseRunner* runner = w->get();
  absl::Notification got;
  bool done_at_result = false;
  ASSERT_OK(runner->Start(RealtimeNs() + 1'000'000, 0, 50, [&](const v1::PhaseEvent& e) {
    if (e.has_result()) {
      done_at_result = runner->Done();
      got.Notify();
    }
  }));
  ASSERT_TRUE(got.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_TRUE(done_at_result);
}

TEST(PhaseRunner, VerificationReportsFileAndOffsetOfACorruptByte) {
  TempDir tmp;
  auto w = PhaseRunner::Prepare(Spec(v1::WRITE, true), tmp.path());
  ASSERT_OK(w);
  ASSERT_TRUE(RunNow(w->get()).ok());
  {
    int fd = ::open((tmp / "testfile.00000001").c_str(), O_RDWR);
    char c;
    ASSERT_EQ(::pread(fd, &c, 1, 1500000), 1);
    c ^= 0x01;
    ASSERT_EQ(::pwrite(fd, &c, 1, 1500000), 1);
    ::close(fd);
  }
  auto r = PhaseRunner::Prepare(Spec(v1::READ, true), tmp.path());
  ASSERT_OK(r);
  v1::PhaseResult rr = RunNow(r->get());
  EXPECT_FALSE(rr.ok());
  EXPECT_THAT(rr.error(), HasSubstr("testfile.00000001"));
  EXPECT_THAT(rr.error(), HasSubstr("data differs at offset 1500000"));
  EXPECT_TRUE(rr.tasks(1).verify_failed());
  EXPECT_EQ(rr.tasks(1).error_kind(), v1::VERIFY_FAILED);
  EXPECT_EQ(rr.tasks(1).error_offset(), 1500000u);
}

// A missing file is refused before the start; a short one is read as IOR
// reads it, until the transfer that meets its end fails the task.
TEST(PhaseRunner, ReadRefusesMissingFilesAndFailsAtTheEndOfShortOnes) {
  TempDir tmp;
  auto missing = PhaseRunner::Prepare(Spec(v1::READ, true), tmp.path());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.status().message(), HasSubstr("testfile.00000000 of task 0 does not exist"));
  auto w = PhaseRunner::Prepare(Spec(v1::WRITE, true), tmp.path());
  ASSERT_OK(w);
  ASSERT_TRUE(RunNow(w->get()).ok());
  ::truncate((tmp / "testfile.00000001").c_str(), 1000);
  auto shortf = PhaseRunner::Prepare(Spec(v1::READ, true), tmp.path());
  ASSERT_OK(shortf);
  v1::PhaseResult rr = RunNow(shortf->get());
  EXPECT_FALSE(rr.ok());
  EXPECT_THAT(rr.error(), HasSubstr("testfile.00000001"));
  EXPECT_THAT(rr.error(), HasSubstr("file is short: end of file after 1000 of"));
  EXPECT_THAT(rr.error(), HasSubstr("smaller than the layout's 2097152 bytes"));
  // A verified read (IOR -R): a short file is a failed verification, whose
  // file the controller keeps; without verify it is an I/O error.
  EXPECT_EQ(rr.tasks(1).error_kind(), v1::VERIFY_FAILED);
  EXPECT_EQ(rr.tasks(1).error_offset(), 1000u);
  v1::PhaseSpec unverified = Spec(v1::READ, true);
  unverified.set_verify(false);
  auto plain = PhaseRunner::Prepare(unverified, tmp.path());
  ASSERT_OK(plain);
  v1::PhaseResult pr = RunNow(plain->get());
  EXPECT_THAT(pr.error(), HasSubstr("file is short"));
  EXPECT_EQ(pr.tasks(1).error_kind(), v1::IO_FAILED);
  // Task 0's file is whole; still reading when task 1 failed, it is stopped
  // by that failure, as IOR's MPI_Abort stops every rank. (Done before it,
  // on a loaded host, it has nothing to be stopped from: seen once in 600.)
  if (!rr.tasks(0).error().empty()) {
    EXPECT_THAT(rr.tasks(0).error(), HasSubstr("task 0 stopped: task 1: file is short"));
  }
}

TEST(PhaseRunner, AbortBeforeStartReleasesThreads) {
  TempDir tmp;
  auto w = PhaseRunner::Prepare(Spec(v1::WRITE, true), tmp.path());
  ASSERT_OK(w);
  (*w)->Abort("test");
  absl::Status started = (*w)->Start(RealtimeNs(), 0, 100, [](const v1::PhaseEvent&) {});
  EXPECT_EQ(started.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(KindOf(started), v1::STOPPED);
  w->reset();  // joins; hangs here if a task thread stayed parked
}

TEST(PhaseRunner, ARunnerReplacedBeforeItsStartSaysSuperseded) {
  TempDir tmp;
  auto w = PhaseRunner::Prepare(Spec(v1::WRITE, true), tmp.path());
  ASSERT_OK(w);
  (*w)->Abort("replaced by phase t0/r0/q", v1::SUPERSEDED);
  (*w)->Abort("a later reason does not win");
  absl::Status started = (*w)->Start(RealtimeNs(), 0, 100, [](const v1::PhaseEvent&) {});
  EXPECT_EQ(KindOf(started), v1::SUPERSEDED);
  EXPECT_THAT(started.message(), HasSubstr("replaced by phase t0/r0/q"));
}

TEST(PhaseRunner, AbortStopsARunningPhase) {
  TempDir tmp;
  v1::PhaseSpec s = Spec(v1::WRITE, true);
  s.set_transfer_bytes(4096);
  s.set_block_bytes(1ULL << 34);  // far more than the test will let it write
  auto w = PhaseRunner::Prepare(s, tmp.path());
  ASSERT_OK(w);
  absl::Notification progressed, done;
  v1::PhaseResult result;
  ASSERT_OK((*w)->Start(RealtimeNs(), 0, 50, [&](const v1::PhaseEvent& e) {
    if (e.has_progress() && e.progress().bytes() > 0 && !progressed.HasBeenNotified()) {
      progressed.Notify();
    }
    if (e.has_result()) {
      result = e.result();
      done.Notify();
    }
  }));
  ASSERT_TRUE(progressed.WaitForNotificationWithTimeout(absl::Seconds(10)));
  (*w)->Abort("operator said stop");
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(result.ok());
  EXPECT_THAT(result.error(), HasSubstr("operator said stop"));
  for (const v1::TaskResult& t : result.tasks()) {
    EXPECT_THAT(t.error(), HasSubstr("stopped: operator said stop"));
    EXPECT_EQ(t.error_kind(), v1::STOPPED);
  }
}

TEST(PhaseRunner, TheFirstRealFailureIsThePhaseErrorNotTheStoppedEchoes) {
  TempDir tmp;
  auto w = PhaseRunner::Prepare(Spec(v1::WRITE, true), tmp.path());
  ASSERT_OK(w);
  ASSERT_TRUE(RunNow(w->get()).ok());
  auto r = PhaseRunner::Prepare(Spec(v1::READ, true), tmp.path());
  ASSERT_OK(r);
  // Task 1's file turns short after Prepare checked it: its first read comes
  // up short, and task 0, if still running, stops.
  ::truncate((tmp / "testfile.00000001").c_str(), 4096);
  v1::PhaseResult rr = RunNow(r->get());
  EXPECT_FALSE(rr.ok());
  EXPECT_THAT(rr.error(), HasSubstr("task 1: file is short"));
  EXPECT_EQ(rr.tasks(1).error_kind(), v1::VERIFY_FAILED);  // a verified read: -R
  EXPECT_TRUE(rr.tasks(1).verify_failed());
  if (!rr.tasks(0).error().empty()) {
    EXPECT_EQ(rr.tasks(0).error_kind(), v1::STOPPED);
  }
}

// An agent on `root` that takes leases as short as 50 ms.
absl::StatusOr<std::unique_ptr<AgentCore>> ShortLeaseAgent(const std::string& root) {
  AgentOptions o;
  o.roots = {root};
  o.min_lease_ms = 50;
  return AgentCore::Create(o);
}

// Run run-1 of controller ctl-A, with a lease of `lease_ms`.
v1::AttachRequest AttachOfRunOne(uint32_t lease_ms) {
  v1::AttachRequest a;
  a.set_wire_major(kWireMajor);
  a.set_run_id("run-1");
  a.set_controller("ctl-A");
  a.set_lease_ms(lease_ms);
  return a;
}

// Phase t0/r0/p of `session`: Spec(WRITE, file per process) in the root.
v1::PrepareRequest WritePrepare(const std::string& session) {
  v1::PrepareRequest p;
  p.set_session_id(session);
  *p.mutable_spec() = Spec(v1::WRITE, true);  // 2 tasks x 2 segments x 16 transfers
  p.mutable_spec()->set_dir(".");
  return p;
}

// Starts prepared phase t0/r0/p of `session` now and waits for its result.
void StartNowAndWait(AgentCore* core, const std::string& session, v1::PhaseResult* result) {
  v1::StartRequest st;
  st.set_session_id(session);
  st.set_phase_id("t0/r0/p");
  st.set_start_at_unix_ns(RealtimeNs());
  absl::Notification done;
  ASSERT_OK(core->Start(st, [&](const v1::PhaseEvent& e) {
    if (!e.has_result()) return;
    *result = e.result();
    done.Notify();
  }));
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(20)));
}

TEST(AgentCore, OneControllerAtATimeAndLeaseExpiryCleansUp) {
  TempDir tmp;
  auto core = ShortLeaseAgent(tmp.path());
  ASSERT_OK(core);
  v1::AttachRequest a = AttachOfRunOne(300);
  auto first = (*core)->Attach(a);
  ASSERT_OK(first);
  a.set_controller("ctl-B");
  auto second = (*core)->Attach(a);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(), HasSubstr("busy: run run-1 from ctl-A since"));

  ASSERT_OK((*core)->Prepare(WritePrepare(first->session_id())));
  v1::StartRequest st;
  st.set_session_id(first->session_id());
  st.set_phase_id("t0/r0/p");
  st.set_start_at_unix_ns(RealtimeNs());
  absl::Notification done;
  ASSERT_OK((*core)->Start(st, [&](const v1::PhaseEvent& e) {
    if (e.has_result()) done.Notify();
  }));
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(std::filesystem::exists(tmp / "testfile.00000000"));
  // No heartbeat: the lease lapses, the agent forgets the session and
  // removes what the session wrote.
  EXPECT_EVENTUALLY([&] { EXPECT_EQ((*core)->State(), "idle"); });
  EXPECT_FALSE(std::filesystem::exists(tmp / "testfile.00000000"));
  EXPECT_FALSE(std::filesystem::exists(tmp / "testfile.00000001"));
  v1::HeartbeatRequest hb;
  hb.set_session_id(first->session_id());
  EXPECT_EQ((*core)->Heartbeat(hb).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_OK((*core)->Attach(a));  // a new controller may now take it
}

// While the watchdog removes the files of a session whose lease expired
// (outside the agent's lock), State() says so and a new Attach waits for it:
// otherwise the new controller's files, of the same names in the same
// directory, could be removed with the old ones (seen as
// OneControllerAtATimeAndLeaseExpiryCleansUp finding a file after "idle").
TEST(AgentCore, AttachWaitsUntilAnExpiredSessionsFilesAreRemoved) {
  TempDir tmp;
  absl::Notification in_hook, release;
  std::atomic<bool> hook_done{false};
  AgentOptions o;
  o.roots = {tmp.path()};
  o.min_lease_ms = 50;
  o.on_session_end = [&] {
    if (in_hook.HasBeenNotified()) return;  // a later session's end
    in_hook.Notify();
    release.WaitForNotificationWithTimeout(absl::Seconds(30));
    hook_done = true;
  };
  auto core = AgentCore::Create(o);
  ASSERT_OK(core);
  v1::AttachRequest a = AttachOfRunOne(100);
  ASSERT_OK((*core)->Attach(a));
  // No heartbeat: the lease lapses and the watchdog removes the leftovers.
  ASSERT_TRUE(in_hook.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ((*core)->State(), "removing leftovers");
  a.set_controller("ctl-B");
  a.set_lease_ms(60000);
  absl::Notification attach_done;
  bool attach_saw_hook_done = false;
  absl::StatusOr<v1::AttachReply> second;
  std::thread attacher([&] {
    second = (*core)->Attach(a);
    attach_saw_hook_done = hook_done.load();
    attach_done.Notify();
  });
  // It waits: not done while the removal is held.
  EXPECT_FALSE(attach_done.WaitForNotificationWithTimeout(absl::Milliseconds(500)));
  release.Notify();
  attacher.join();
  ASSERT_OK(second);
  EXPECT_TRUE(attach_saw_hook_done);
  EXPECT_EQ((*core)->State(), "attached");
}

// Wire minor 4: the controller's Prepare, CacheBarrier, Telemetry and
// Cleanup renew the lease as a heartbeat does (it then skips heartbeats to
// an agent that just answered one); Abort does not; Start does from minor 5
// (the next test). (Prepare is not called here: it renews in the same way,
// at its end.)
TEST(AgentCore, CacheTelemetryAndCleanupCallsRenewTheLease) {
  TempDir tmp;
  auto core = ShortLeaseAgent(tmp.path());
  ASSERT_OK(core);
  // 8x the calls' pace: a slow call on a loaded machine fits.
  auto attached = (*core)->Attach(AttachOfRunOne(800));
  ASSERT_OK(attached);
  const std::string session = attached->session_id();
  // 2.4 s of calls 100 ms apart, no heartbeat: three leases long.
  const int64_t end_mono_ns = MonotonicNs() + 2'400'000'000;
  for (int i = 0; MonotonicNs() < end_mono_ns; ++i) {
    switch (i % 3) {
      case 0: {
        v1::CacheRequest c;
        c.set_session_id(session);
        c.set_phase_id("t0/r0/p");
        ASSERT_OK((*core)->CacheBarrier(c));
        break;
      }
      case 1: {
        v1::TelemetryRequest t;
        t.set_session_id(session);
        t.set_phase_id("t0/r0/p");
        ASSERT_OK((*core)->Telemetry(t));
        break;
      }
      default: {
        v1::CleanupRequest c;
        c.set_session_id(session);
        *c.mutable_spec() = Spec(v1::WRITE, true);
        c.mutable_spec()->set_dir(".");
        ASSERT_OK((*core)->Cleanup(c));
        break;
      }
    }
    absl::SleepFor(absl::Milliseconds(100));  // the calls' pace, not a wait for state
  }
  v1::HeartbeatRequest hb;
  hb.set_session_id(session);
  EXPECT_OK((*core)->Heartbeat(hb));
  // Silence: the lease lapses as before.
  EXPECT_EVENTUALLY([&] { EXPECT_EQ((*core)->State(), "idle"); });
}

// Wire minor 5: a Start renews the lease on its arrival. Lease 3 s; the
// Start comes 1.8 s after the Prepare (the last renewal before it) and its
// phase runs ~1.9 s: without the renewal the lease lapses mid-phase (at 3 s)
// and the phase is aborted; with it the lease runs to 4.8 s at least (each
// margin ~1 s, for a loaded machine).
TEST(AgentCore, StartRenewsTheLease) {
  TempDir tmp;
  AgentOptions o;
  o.roots = {tmp.path()};
  o.min_lease_ms = 50;
  o.runner.test_delay_per_transfer = absl::Milliseconds(60);  // 32 transfers: ~1.9 s
  auto core = AgentCore::Create(o);
  ASSERT_OK(core);
  auto attached = (*core)->Attach(AttachOfRunOne(3000));
  ASSERT_OK(attached);
  ASSERT_OK((*core)->Prepare(WritePrepare(attached->session_id())));  // 32 transfers
  absl::SleepFor(absl::Milliseconds(1800));  // the controller's pace, not a wait for state
  v1::PhaseResult result;
  ASSERT_NO_FATAL_FAILURE(StartNowAndWait(core->get(), attached->session_id(), &result));
  EXPECT_TRUE(result.ok()) << result.error();
}

// The phase's telemetry window opens from the sample taken at the end of
// the cache barrier (after its sync and drop), not from Prepare's.
TEST(AgentCore, PhaseTelemetryStartsAtTheCacheBarrier) {
  TempDir tmp;
  auto core = ShortLeaseAgent(tmp.path());
  ASSERT_OK(core);
  auto attached = (*core)->Attach(AttachOfRunOne(5000));
  ASSERT_OK(attached);
  ASSERT_OK((*core)->Prepare(WritePrepare(attached->session_id())));
  const int64_t prepared_unix_ns = RealtimeNs();
  v1::CacheRequest c;
  c.set_session_id(attached->session_id());
  c.set_phase_id("t0/r0/p");
  c.set_sync(true);
  ASSERT_OK((*core)->CacheBarrier(c));
  v1::PhaseResult result;
  ASSERT_NO_FATAL_FAILURE(StartNowAndWait(core->get(), attached->session_id(), &result));
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_GE(result.telemetry().start_unix_ns(), prepared_unix_ns);
}

// A Cleanup's spec is weighed as a Prepare's: more tasks than the agent's
// limit is refused before any file goes (security review: one removal could
// walk billions of task file names).
TEST(AgentCore, ACleanupBeyondTheTaskLimitIsRefusedAndRemovesNothing) {
  TempDir tmp;
  AgentOptions o;
  o.roots = {tmp.path()};
  o.max_tasks = 4;
  o.telemetry = false;
  auto core = AgentCore::Create(o);
  ASSERT_OK(core);
  auto session = (*core)->Attach(AttachOfRunOne(30'000));
  ASSERT_OK(session);
  std::ofstream(tmp / "testfile.00000000") << "x";
  v1::CleanupRequest c;
  c.set_session_id(session->session_id());
  *c.mutable_spec() = Spec(v1::WRITE, true);
  c.mutable_spec()->set_dir(".");
  c.mutable_spec()->set_tasks(5);
  c.mutable_spec()->set_total_tasks(5);
  const auto refused = (*core)->Cleanup(c);
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("its limit is 4"));
  EXPECT_TRUE(std::filesystem::exists(tmp / "testfile.00000000"));
  c.mutable_spec()->set_tasks(4);
  c.mutable_spec()->set_total_tasks(4);
  const auto removed = (*core)->Cleanup(c);
  ASSERT_OK(removed);
  EXPECT_EQ(removed->removed(), 1u);
  EXPECT_FALSE(std::filesystem::exists(tmp / "testfile.00000000"));
}

TEST(AgentCore, LeaseExpiryKeepsReleasedFilesAndRemovesTheRest) {
  TempDir tmp;
  AgentOptions o;
  o.roots = {tmp.path()};
  o.min_lease_ms = 50;
  o.telemetry = false;
  auto core = AgentCore::Create(o);
  ASSERT_OK(core);
  auto session = (*core)->Attach(AttachOfRunOne(300));
  ASSERT_OK(session);
  auto write = [&](const std::string& name) {
    v1::PrepareRequest p;
    p.set_session_id(session->session_id());
    *p.mutable_spec() = Spec(v1::WRITE, true);
    p.mutable_spec()->set_dir(".");
    p.mutable_spec()->set_file_name(name);
    p.mutable_spec()->set_phase_id("t0/r0/" + name);
    ASSERT_OK((*core)->Prepare(p));
    v1::StartRequest st;
    st.set_session_id(session->session_id());
    st.set_phase_id("t0/r0/" + name);
    st.set_start_at_unix_ns(RealtimeNs());
    absl::Notification done;
    ASSERT_OK((*core)->Start(st, [&](const v1::PhaseEvent& e) {
      if (e.has_result()) done.Notify();
    }));
    ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  };
  write("kept");
  write("lost");
  // The controller keeps "kept" (keep = true) and releases it; then it dies.
  v1::CleanupRequest release;
  release.set_session_id(session->session_id());
  *release.mutable_spec() = Spec(v1::WRITE, true);
  release.mutable_spec()->set_dir(".");
  release.mutable_spec()->set_file_name("kept");
  release.set_release_only(true);
  ASSERT_OK((*core)->Cleanup(release));
  EXPECT_TRUE(std::filesystem::exists(tmp / "kept.00000000"));
  EXPECT_EVENTUALLY([&] { EXPECT_EQ((*core)->State(), "idle"); });
  EXPECT_TRUE(std::filesystem::exists(tmp / "kept.00000000"));
  EXPECT_TRUE(std::filesystem::exists(tmp / "kept.00000001"));
  EXPECT_FALSE(std::filesystem::exists(tmp / "lost.00000000"));
  EXPECT_FALSE(std::filesystem::exists(tmp / "lost.00000001"));
}

// mdtest creates its -d directory when missing and removes it at its end;
// the agent does it below its roots, and never outside them.
TEST(AgentCore, MdtestCreatesAMissingDirectoryAndRemovesItAtTheEnd) {
  TempDir tmp;
  AgentOptions o;
  o.roots = {tmp.path()};
  o.telemetry = false;
  auto core = AgentCore::Create(o);
  ASSERT_OK(core);
  v1::AttachRequest a = AttachOfRunOne(5000);
  auto session = (*core)->Attach(a);
  ASSERT_OK(session);
  int phases = 0;
  auto run = [&](v1::MdtestOp op, const std::string& dir) -> absl::Status {
    v1::PrepareRequest p;
    p.set_session_id(session->session_id());
    v1::PhaseSpec& s = *p.mutable_spec();
    s = Spec(v1::MDTEST, false);
    s.set_dir(dir);
    s.set_md_op(op);
    s.set_md_items(3);
    s.set_phase_id(absl::StrFormat("t0/r0/%d-%d", op, ++phases));
    auto prepared = (*core)->Prepare(p);
    if (!prepared.ok()) return prepared.status();
    v1::StartRequest st;
    st.set_session_id(session->session_id());
    st.set_phase_id(s.phase_id());
    st.set_start_at_unix_ns(RealtimeNs());
    absl::Notification done;
    bool ok = false;
    absl::Status started = (*core)->Start(st, [&](const v1::PhaseEvent& e) {
      if (e.has_result()) {
        ok = e.result().ok();
        done.Notify();
      }
    });
    if (!started.ok()) return started;
    if (!done.WaitForNotificationWithTimeout(absl::Seconds(10))) return absl::DeadlineExceededError("");
    return ok ? absl::OkStatus() : absl::InternalError("phase failed");
  };
  // Outside the roots and with a missing parent: refused, nothing made.
  EXPECT_EQ(run(v1::MD_TREE_CREATE, "/etc/lockstep-md").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(run(v1::MD_TREE_CREATE, "no/md").code(), absl::StatusCode::kNotFound);
  ASSERT_OK(run(v1::MD_TREE_CREATE, "md"));
  EXPECT_TRUE(std::filesystem::is_directory(tmp / "md/test-dir.0-0/mdtest_tree.0"));
  ASSERT_OK(run(v1::MD_FILE_CREATE, "md"));
  {
    // Each item is named by its path below the phase directory (as mdtest
    // does), never through a symlink: a tree directory swapped for one to
    // an outside directory fails the stat and the remove, and what is
    // outside stays.
    const std::string tree = tmp / "md/test-dir.0-0/mdtest_tree.0";
    TempDir outside;
    std::ofstream(outside / "file.mdtest.0.0") << "precious";
    std::filesystem::rename(tree, tree + ".moved");
    std::filesystem::create_directory_symlink(outside.path(), tree);
    EXPECT_FALSE(run(v1::MD_FILE_STAT, "md").ok());
    EXPECT_FALSE(run(v1::MD_FILE_REMOVE, "md").ok());
    EXPECT_EQ(ReadFileToString(outside / "file.mdtest.0.0").value_or(""), "precious");
    std::filesystem::remove(tree);
    std::filesystem::rename(tree + ".moved", tree);
  }
  ASSERT_OK(run(v1::MD_FILE_STAT, "md"));
  ASSERT_OK(run(v1::MD_FILE_REMOVE, "md"));
  ASSERT_OK(run(v1::MD_TREE_REMOVE, "md"));
  EXPECT_TRUE(std::filesystem::is_directory(tmp / "md"));  // until mdtest's end
  v1::DetachRequest d;
  d.set_session_id(session->session_id());
  ASSERT_OK((*core)->Detach(d));
  EXPECT_FALSE(std::filesystem::exists(tmp / "md"));
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));

  // A directory that existed stays.
  std::filesystem::create_directory(tmp / "kept");
  session = (*core)->Attach(a);
  ASSERT_OK(session);
  ASSERT_OK(run(v1::MD_TREE_CREATE, "kept"));
  ASSERT_OK(run(v1::MD_TREE_REMOVE, "kept"));
  d.set_session_id(session->session_id());
  ASSERT_OK((*core)->Detach(d));
  EXPECT_TRUE(std::filesystem::is_directory(tmp / "kept"));
  EXPECT_TRUE(std::filesystem::is_empty(tmp / "kept"));
}

TEST(Roots, ResolveNewNeedsAParentInsideTheRoots) {
  TempDir tmp;
  std::filesystem::create_directories(tmp / "root/sub");
  auto roots = AllowedRoots::Create({tmp / "root"});
  ASSERT_OK(roots);
  EXPECT_EQ(*roots->ResolveNew("md"), tmp / "root/md");
  EXPECT_EQ(*roots->ResolveNew("sub/md/"), tmp / "root/sub/md");
  EXPECT_EQ(*roots->ResolveNew(tmp / "root/md"), tmp / "root/md");
  EXPECT_EQ(roots->ResolveNew(tmp / "md").status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(roots->ResolveNew("sub/..").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(roots->ResolveNew("x/y").status().code(), absl::StatusCode::kNotFound);
}

TEST(AgentCore, ServersDoNotRunTasksAndDropCachesIsReported) {
  TempDir tmp;
  AgentOptions o;
  o.roots = {tmp.path()};
  o.role = v1::OSS;
  o.drop_caches_path = tmp / "no-such-dir/drop_caches";
  auto core = AgentCore::Create(o);
  ASSERT_OK(core);
  auto s = (*core)->Attach(AttachOfRunOne(10000));
  ASSERT_OK(s);
  auto prep = (*core)->Prepare(WritePrepare(s->session_id()));
  EXPECT_EQ(prep.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(prep.status().message(), HasSubstr("role oss; only client agents run I/O"));

  v1::CacheRequest c;
  c.set_session_id(s->session_id());

  c.set_phase_id("t0/r0/p");
  c.set_sync(true);
  c.set_drop_mode(3);
  auto warn = (*core)->CacheBarrier(c);
  ASSERT_OK(warn);
  EXPECT_TRUE(warn->synced());
  EXPECT_FALSE(warn->dropped());
  EXPECT_THAT(warn->warning(), HasSubstr("drop_caches"));
  c.set_required(true);
  EXPECT_EQ((*core)->CacheBarrier(c).status().code(), absl::StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace lockstep
