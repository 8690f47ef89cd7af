// Fault tests: real lockstep-agent processes and the real `lockstep` binary
// (or, where a fault must land at an exact point between two phases, the
// real coordinator in-process). Each test asserts the outcome and exit code,
// how fast the fault was detected, the agents' state afterwards (idle: a new
// run succeeds) and that no benchmark file is left behind.
//
// Root-only parts (tmpfs mounts, network namespaces) skip with a reason.
// Measured detection times are printed as "[fault] NAME: ..." lines and
// recorded as test properties (ctest --output-on-failure, or the XML).
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/files.h"
#include "common/tls.h"
#include "controller/run/coordinator.h"
#include "controller/cli/exit_codes.h"
#include "controller/plan/plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/agent_process_util.h"
#include "lockstep/v1/agent.grpc.pb.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int kLeaseMs = 1000;
// Allowed on top of the lease for detection: one heartbeat period (lease/3),
// the controller's 100 ms poll, process exit, and a loaded 2-core builder.
// Sanitizer builds (tests/sanitize.sh) run several times slower: there the
// bound is loosened, since they check memory and thread safety, not timing.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kMarginMs = 6000;
#else
constexpr int kMarginMs = 1500;
#endif

double MsSince(Clock::time_point t0, Clock::time_point t1 = Clock::now()) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

// The last line a controller printed to stderr (its one-line verdict).
std::string LastLine(const std::string& err) {
  std::string e = err;
  while (!e.empty() && e.back() == '\n') e.pop_back();
  return e.substr(e.find_last_of('\n') == std::string::npos ? 0 : e.find_last_of('\n') + 1);
}

void Report(const std::string& what, double ms, const std::string& err = "") {
  if (!err.empty()) std::printf("[fault] %s: says \"%s\"\n", what.c_str(), LastLine(err).c_str());
  std::printf("[fault] %s: %.0f ms\n", what.c_str(), ms);
  std::fflush(stdout);
  ::testing::Test::RecordProperty(what, absl::StrFormat("%.0f ms", ms));
}

void Say(const std::string& what, const std::string& err) {
  std::printf("[fault] %s: says \"%s\"\n", what.c_str(), LastLine(err).c_str());
  std::fflush(stdout);
}

bool IsRoot() { return ::geteuid() == 0; }

// `lockstep ARGS...` in the background; a reaper thread records the instant
// it exits, so detection times do not depend on how often the test polls.
class Controller {
 public:
  Controller(const std::string& dir, const std::vector<std::string>& args)
      : out_path_(dir + "/ctl-" + std::to_string(counter_) + ".out"),
        err_path_(dir + "/ctl-" + std::to_string(counter_++) + ".err") {
    std::vector<std::string> argv = {BinDir() + "/lockstep"};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      FILE* o = std::freopen(out_path_.c_str(), "w", stdout);
      FILE* e = std::freopen(err_path_.c_str(), "w", stderr);
      (void)o;
      (void)e;
      std::vector<char*> a;
      for (auto& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      ::execv(a[0], a.data());
      ::_exit(127);
    }
    reaper_ = std::thread([this] {
      int status = 0;
      ::waitpid(pid_, &status, 0);
      absl::MutexLock lock(&mu_);
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      exited_at_ = Clock::now();
      exited_.Notify();
    });
  }
  ~Controller() {
    if (!exited_.HasBeenNotified()) ::kill(pid_, SIGKILL);
    reaper_.join();
  }

  // The exit code, or -1 if still running after `timeout`.
  int Wait(milliseconds timeout) {
    if (!exited_.WaitForNotificationWithTimeout(absl::FromChrono(timeout))) return -1;
    absl::MutexLock lock(&mu_);
    return exit_code_;
  }
  Clock::time_point exited_at() {
    absl::MutexLock lock(&mu_);
    return exited_at_;
  }
  void Signal(int sig) { ::kill(pid_, sig); }
  std::string out() const { return ReadFileToString(out_path_).value_or(""); }
  std::string err() const { return ReadFileToString(err_path_).value_or(""); }
  std::string Output() const { return "stdout:\n" + out() + "\nstderr:\n" + err(); }

 private:
  static inline int counter_ = 0;
  std::string out_path_, err_path_;
  pid_t pid_ = -1;
  std::thread reaper_;
  absl::Notification exited_;
  absl::Mutex mu_;
  int exit_code_ ABSL_GUARDED_BY(mu_) = -1;
  Clock::time_point exited_at_ ABSL_GUARDED_BY(mu_);
};

// What an agent says to a Heartbeat for a session it cannot know: "idle"
// (no session), "busy" (another session holds it), or the error.
std::string ProbeState(const std::string& address,
                       std::shared_ptr<grpc::ChannelCredentials> creds = nullptr,
                       const std::string& name_override = "") {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  ApplyTlsTargetNameOverride(name_override, &args);
  auto channel = grpc::CreateCustomChannel(
      address, creds ? creds : grpc::InsecureChannelCredentials(), args);
  auto stub = v1::Agent::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  v1::HeartbeatRequest req;
  req.set_session_id("probe-from-fault-test");
  v1::HeartbeatReply reply;
  grpc::Status s = stub->Heartbeat(&ctx, req, &reply);
  if (s.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
    if (s.error_message().rfind("no session", 0) == 0) return "idle";
    if (s.error_message().rfind("busy:", 0) == 0) return "busy";
  }
  return absl::StrFormat("code %d: %s", s.error_code(), s.error_message());
}

class FaultTest : public ::testing::Test {
 protected:
  // `n` agents, each with its own root and a data/ directory in it.
  void StartAgents(int n) {
    for (int i = 0; i < n; ++i) {
      roots_.push_back(tmp_ / absl::StrFormat("root%d", i));
      std::filesystem::create_directories(roots_.back() + "/data");
      agents_.push_back(std::make_unique<AgentProcess>(roots_.back()));
      ASSERT_TRUE(agents_.back()->ok());
    }
  }

  std::string AgentTables(const std::vector<int>& which) {
    std::string s;
    for (int i : which) {
      s += absl::StrFormat("[[agent]]\naddress = \"%s\"\n", agents_[i]->address());
    }
    return s;
  }
  std::string AllAgents() {
    std::vector<int> all;
    for (size_t i = 0; i < agents_.size(); ++i) all.push_back(static_cast<int>(i));
    return AgentTables(all);
  }

  std::string WritePlan(const std::string& body) {
    std::string path = tmp_ / absl::StrFormat("plan%d.toml", plans_++);
    std::ofstream(path) << body;
    return path;
  }

  std::string RunHeader(int lease_ms = kLeaseMs) {
    return absl::StrFormat("[run]\nname = \"fault\"\nlease_ms = %d\nconnect_timeout_ms = 3000\n",
                           lease_ms);
  }

  // A write phase that runs for tens of seconds unless stopped: 1 GiB per
  // task, fsync after each 256 KiB (~5 ms each here), so the bytes written
  // before a fault stay small.
  static std::string BigWritePhase(const std::string& name = "w",
                                   const std::string& file = "testfile") {
    return absl::StrFormat(
        "[[phase]]\nname = \"%s\"\nkind = \"write\"\ndir = \"data\"\nfile_name = \"%s\"\n"
        "file_per_process = true\ntransfer_size = \"256k\"\nblock_size = \"1g\"\n"
        "fsync_per_transfer = true\n",
        name, file);
  }
  static std::string SmallWritePhase(const std::string& name = "w",
                                     const std::string& file = "testfile") {
    return absl::StrFormat(
        "[[phase]]\nname = \"%s\"\nkind = \"write\"\ndir = \"data\"\nfile_name = \"%s\"\n"
        "file_per_process = true\ntransfer_size = \"64k\"\nblock_size = \"256k\"\n",
        name, file);
  }

  std::vector<std::string> RunArgs(const std::string& plan) {
    return {"run", "--insecure", "--history=false", "--out", tmp_ / "results", plan};
  }

  // Polls until every listed agent has a task file with data in it.
  bool WaitForData(const std::vector<int>& which, milliseconds timeout = milliseconds(15000)) {
    return Eventually(
        [&] {
          for (int i : which) {
            bool any = false;
            for (const auto& f : ListFiles(roots_[i] + "/data")) {
              std::error_code ec;
              any |= std::filesystem::file_size(roots_[i] + "/data/" + f, ec) > 0;
            }
            if (!any) return false;
          }
          return true;
        },
        timeout);
  }

  bool DataEmpty(int i) { return ListFiles(roots_[i] + "/data").empty(); }

  // A short write+remove run on `which` succeeds and leaves nothing.
  void ExpectNewRunSucceeds(const std::vector<int>& which) {
    CommandResult r = RunLockstep(RunArgs(WritePlan(RunHeader() + AgentTables(which) +
                                                    SmallWritePhase())));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    for (int i : which) EXPECT_TRUE(DataEmpty(i)) << roots_[i];
  }

  TempDir tmp_;
  std::vector<std::string> roots_;
  std::vector<std::unique_ptr<AgentProcess>> agents_;
  int plans_ = 0;
};

// ---- agents and controllers that die or hang ---------------------------------

TEST_F(FaultTest, AgentKilledMidPhaseIsNamedAndSurvivorsCleanUp) {
  StartAgents(3);
  Controller ctl(tmp_.path(), RunArgs(WritePlan(RunHeader() + AllAgents() + BigWritePhase())));
  ASSERT_TRUE(WaitForData({0, 1, 2})) << ctl.Output();
  const std::string victim = agents_[1]->address();
  const auto t0 = Clock::now();
  agents_[1]->Kill(SIGKILL);

  ASSERT_EQ(ctl.Wait(milliseconds(kLeaseMs + 10000)), kExitAgentLost) << ctl.Output();
  const double detect_ms = MsSince(t0, ctl.exited_at());
  Report("agent SIGKILL: controller exit after kill", detect_ms, ctl.err());
  EXPECT_LT(detect_ms, kLeaseMs + kMarginMs);
  EXPECT_THAT(ctl.err(), HasSubstr("agent " + victim + " lost during t0/r0/w"));
  v1::RunRecord rec = ReadRunJson(RunDirFromOutput(ctl.out()));
  EXPECT_EQ(rec.status(), "failed");
  ASSERT_EQ(rec.agents_size(), 3);
  EXPECT_EQ(rec.agents(1).status(), "lost");
  EXPECT_EQ(rec.agents(0).status(), "ok");

  // Survivors: idle at once (detached) and their files removed by the controller.
  for (int i : {0, 2}) {
    EXPECT_EQ(ProbeState(agents_[i]->address()), "idle");
    EXPECT_TRUE(DataEmpty(i)) << absl::StrJoin(ListFiles(roots_[i] + "/data"), " ");
  }
  // The dead agent could not clean up; its rank's file is all that is left,
  // and the next write of that rank on that root removes it (IOR semantics).
  EXPECT_EQ(ListFiles(roots_[1] + "/data"), std::vector<std::string>{"testfile.00000001"});
  agents_[1] = std::make_unique<AgentProcess>(roots_[1]);
  ASSERT_TRUE(agents_[1]->ok());
  ExpectNewRunSucceeds({0, 1, 2});
}

TEST_F(FaultTest, OnAgentLossContinueGoesOnWithoutTheLostAgent) {
  StartAgents(3);
  // ~1 s per repetition here: 64 MiB per task in 256 KiB transfers, each fsynced.
  std::string phase = BigWritePhase();
  phase.replace(phase.find("block_size = \"1g\""), 17, "block_size = \"64m\"");
  Controller ctl(tmp_.path(),
                 RunArgs(WritePlan(RunHeader() + "repetitions = 3\non_agent_loss = \"continue\"\n" +
                                   AllAgents() + phase)));
  ASSERT_TRUE(WaitForData({0, 1, 2})) << ctl.Output();
  const std::string victim = agents_[1]->address();
  agents_[1]->Kill(SIGKILL);

  ASSERT_EQ(ctl.Wait(milliseconds(60000)), kExitAgentLost) << ctl.Output();
  EXPECT_THAT(ctl.out(), HasSubstr("continuing without it"));
  EXPECT_THAT(ctl.err(), HasSubstr("agent " + victim + " lost"));
  v1::RunRecord rec = ReadRunJson(RunDirFromOutput(ctl.out()));
  EXPECT_EQ(rec.status(), "partial");
  EXPECT_EQ(rec.agents(1).status(), "lost");
  ASSERT_EQ(rec.tests_size(), 1);
  int after = 0;
  for (const v1::PhaseRecord& p : rec.tests(0).phases()) {
    if (p.repetition() == 0) {
      EXPECT_FALSE(p.ok());
      continue;
    }
    // Repetitions 1 and 2 ran on the two survivors, marked partial.
    EXPECT_TRUE(p.ok()) << p.error();
    EXPECT_TRUE(p.partial());
    EXPECT_EQ(p.spec().total_tasks(), 2u);
    EXPECT_EQ(p.agents_size(), 2);
    EXPECT_EQ(p.row().bytes(), 2u * 64 * 1024 * 1024);
    ++after;
  }
  EXPECT_EQ(after, 2);
  ASSERT_EQ(rec.tests(0).summary_size(), 1);
  EXPECT_EQ(rec.tests(0).summary(0).repetitions(), 2u);
  for (int i : {0, 2}) {
    EXPECT_EQ(ProbeState(agents_[i]->address()), "idle");
    EXPECT_TRUE(DataEmpty(i)) << absl::StrJoin(ListFiles(roots_[i] + "/data"), " ");
  }
}

TEST_F(FaultTest, AgentStoppedMidPhaseCountsAsLostAndCleansUpWhenResumed) {
  StartAgents(3);
  Controller ctl(tmp_.path(), RunArgs(WritePlan(RunHeader() + AllAgents() + BigWritePhase())));
  ASSERT_TRUE(WaitForData({0, 1, 2})) << ctl.Output();
  const std::string victim = agents_[2]->address();
  const auto t0 = Clock::now();
  agents_[2]->Kill(SIGSTOP);

  ASSERT_EQ(ctl.Wait(milliseconds(kLeaseMs + 10000)), kExitAgentLost) << ctl.Output();
  const double detect_ms = MsSince(t0, ctl.exited_at());
  Report("agent SIGSTOP: controller exit after stop", detect_ms, ctl.err());
  EXPECT_LT(detect_ms, kLeaseMs + kMarginMs);
  EXPECT_THAT(ctl.err(), HasSubstr("agent " + victim + " lost during t0/r0/w: no heartbeat answer"));
  v1::RunRecord rec = ReadRunJson(RunDirFromOutput(ctl.out()));
  ASSERT_EQ(rec.agents_size(), 3);
  EXPECT_EQ(rec.agents(2).status(), "lost");
  // Only the hung agent is lost: the others kept their leases throughout.
  EXPECT_EQ(rec.agents(0).status(), "ok");
  EXPECT_EQ(rec.agents(1).status(), "ok");
  for (int i : {0, 1}) {
    EXPECT_EQ(ProbeState(agents_[i]->address()), "idle");
    EXPECT_TRUE(DataEmpty(i)) << roots_[i];
  }

  // Stopped, it could not run its watchdog; resumed, the lease has long
  // expired: it aborts its task and removes its file.
  EXPECT_FALSE(DataEmpty(2));
  const auto t1 = Clock::now();
  agents_[2]->Kill(SIGCONT);
  EXPECT_TRUE(Eventually([&] { return DataEmpty(2); }, milliseconds(kLeaseMs + 5000)))
      << absl::StrJoin(ListFiles(roots_[2] + "/data"), " ");
  Report("agent SIGSTOP: files removed after SIGCONT", MsSince(t1));
  EXPECT_TRUE(Eventually([&] { return ProbeState(agents_[2]->address()) == "idle"; },
                         milliseconds(kLeaseMs + 5000)))
      << ProbeState(agents_[2]->address());
  ExpectNewRunSucceeds({0, 1, 2});
}

TEST_F(FaultTest, ControllerKilledMidPhaseAgentsCleanUpWithinTheLease) {
  StartAgents(3);
  Controller ctl(tmp_.path(), RunArgs(WritePlan(RunHeader() + AllAgents() + BigWritePhase())));
  ASSERT_TRUE(WaitForData({0, 1, 2})) << ctl.Output();
  const auto t0 = Clock::now();
  ctl.Signal(SIGKILL);
  ASSERT_EQ(ctl.Wait(milliseconds(5000)), 128 + SIGKILL);
  ASSERT_TRUE(Eventually([&] { return DataEmpty(0) && DataEmpty(1) && DataEmpty(2); },
                         milliseconds(kLeaseMs + 5000)));
  const double clean_ms = MsSince(t0);
  Report("controller SIGKILL: all agents' files removed after kill", clean_ms);
  EXPECT_LT(clean_ms, kLeaseMs + kMarginMs);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(ProbeState(agents_[i]->address()), "idle");
  ExpectNewRunSucceeds({0, 1, 2});
}

TEST_F(FaultTest, InterruptedControllerAbortsCleansUpAndExits130) {
  StartAgents(2);
  Controller ctl(tmp_.path(), RunArgs(WritePlan(RunHeader() + AllAgents() + BigWritePhase())));
  ASSERT_TRUE(WaitForData({0, 1})) << ctl.Output();
  const auto t0 = Clock::now();
  ctl.Signal(SIGTERM);
  ASSERT_EQ(ctl.Wait(milliseconds(10000)), kExitInterrupted) << ctl.Output();
  Report("controller SIGTERM: exit 130 after signal", MsSince(t0, ctl.exited_at()));
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(ProbeState(agents_[i]->address()), "idle");
    EXPECT_TRUE(DataEmpty(i));
  }
}

// In-process coordinator: the restart must land exactly between two phases,
// which only the controller's own report line marks (it is printed after
// phase w1 and before w2 is prepared).
TEST_F(FaultTest, AgentRestartedBetweenPhasesIsLostWithAClearMessage) {
  StartAgents(2);
  const std::string victim = agents_[1]->address();
  auto plan = ParsePlan(RunHeader(1500) + AllAgents() + SmallWritePhase("w1", "first") +
                            SmallWritePhase("w2", "second"),
                        "restart.toml");
  ASSERT_OK(plan);
  RunOptions options;
  options.out_dir = tmp_ / "results";
  options.insecure = true;
  bool restarted = false;
  Clock::time_point t0;
  options.print = [&](const std::string& text) {
    if (restarted || text.rfind("write ", 0) != 0) return;
    restarted = true;
    agents_[1]->Kill(SIGKILL);
    agents_[1] = std::make_unique<AgentProcess>(roots_[1],
                                                std::vector<std::string>{"--listen", victim});
    ASSERT_TRUE(agents_[1]->ok());
    // Hold the coordinator until its channel has reached the new process
    // (the heartbeater's next round is refused there), so the next call is
    // answered by the restarted agent rather than failing to connect.
    ASSERT_TRUE(Eventually(
        [&] {
          return ReadFileToString(agents_[1]->log_path()).value_or("").find("Heartbeat from") !=
                 std::string::npos;
        },
        milliseconds(5000)));
    t0 = Clock::now();
  };
  RunOutcome outcome = RunPlan(*plan, options);
  ASSERT_TRUE(restarted);
  Report("agent restart between phases: run end after restart", MsSince(t0), outcome.error);
  EXPECT_EQ(outcome.failure, RunFailure::kAgentLost) << outcome.error;
  EXPECT_THAT(outcome.error, HasSubstr("agent " + victim + " lost before t0/r0/w2"));
  EXPECT_THAT(outcome.error, HasSubstr("no session: this agent is idle (restarted"));
  EXPECT_EQ(outcome.record.agents(1).status(), "lost");
  EXPECT_EQ(ProbeState(agents_[0]->address()), "idle");
  EXPECT_EQ(ProbeState(agents_[1]->address()), "idle");
  EXPECT_TRUE(DataEmpty(0)) << absl::StrJoin(ListFiles(roots_[0] + "/data"), " ");
  // The old process wrote rank 1's w1 file; the new one never knew of it.
  EXPECT_TRUE(DataEmpty(1)) << absl::StrJoin(ListFiles(roots_[1] + "/data"), " ");
}

TEST_F(FaultTest, SecondControllerIsToldWhoHoldsTheAgents) {
  StartAgents(2);
  Controller first(tmp_.path(), RunArgs(WritePlan(RunHeader() + AllAgents() + BigWritePhase())));
  ASSERT_TRUE(WaitForData({0, 1})) << first.Output();
  CommandResult second = RunLockstep(
      RunArgs(WritePlan(RunHeader() + AllAgents() + SmallWritePhase("w", "other"))));
  EXPECT_EQ(second.exit_code, kExitConnect) << second.out << second.err;
  Say("second controller", second.err);
  EXPECT_THAT(second.err, HasSubstr("busy: run "));
  EXPECT_THAT(second.err, HasSubstr(" pid "));
  EXPECT_THAT(second.err, HasSubstr(" since 20"));
  // The first run is unharmed by the refusal; stop it and nothing is left.
  EXPECT_EQ(first.Wait(milliseconds(200)), -1) << "the first run ended early";
  first.Signal(SIGINT);
  EXPECT_EQ(first.Wait(milliseconds(10000)), kExitInterrupted) << first.Output();
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(DataEmpty(i));
    EXPECT_EQ(ProbeState(agents_[i]->address()), "idle");
  }
}

// ---- paths -------------------------------------------------------------------

TEST_F(FaultTest, PathEscapesAreRefusedBeforeAnyFileIsCreated) {
  StartAgents(2);
  TempDir outside;
  std::filesystem::create_symlink(outside.path(), roots_[0] + "/data/link");
  std::filesystem::create_symlink(outside.path(), roots_[1] + "/data/link");
  for (const char* dir : {"data/../..", "data/link", "../root1/data", "data/link/.."}) {
    std::string phase = SmallWritePhase();
    phase.replace(phase.find("dir = \"data\""), 12, absl::StrFormat("dir = \"%s\"", dir));
    CommandResult r = RunLockstep(RunArgs(WritePlan(RunHeader() + AllAgents() + phase)));
    EXPECT_EQ(r.exit_code, kExitUsage) << dir << "\n" << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr("is outside the agent's allowed roots")) << dir;
    Say(absl::StrFormat("path escape dir=%s", dir), r.err);
    if (std::string(dir) == "data/link") {
      EXPECT_THAT(r.err, HasSubstr("(resolves to " + outside.path() + ")"));
    }
    EXPECT_TRUE(ListFiles(outside.path()).empty()) << dir;
  }
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(ListFiles(roots_[i] + "/data"), std::vector<std::string>{"link"});
    EXPECT_EQ(ProbeState(agents_[i]->address()), "idle");
  }
}

// ---- resources ---------------------------------------------------------------

TEST_F(FaultTest, EnospcOnASmallTmpfsNamesErrnoFileAndOffset) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to mount a tmpfs (mount -t tmpfs -o size=8m)";
  StartAgents(2);
  const std::string small = roots_[1] + "/data";
  if (::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=8m") != 0) {
    GTEST_SKIP() << "mount -t tmpfs on " << small << " failed: " << std::strerror(errno);
  }
  struct Unmount {
    std::string dir;
    ~Unmount() { ::umount2(dir.c_str(), MNT_DETACH); }
  } unmount{small};
  // 2 tasks x 16 MiB into 8 MiB.
  std::string phase = SmallWritePhase();
  phase.replace(phase.find("block_size = \"256k\""), 19, "block_size = \"16m\"");
  phase += "tasks_per_agent = 2\n";
  const std::string plan = WritePlan(RunHeader() + AllAgents() + phase);
  // The pre-flight check refuses with the numbers...
  CommandResult pre = RunLockstep(RunArgs(plan));
  EXPECT_EQ(pre.exit_code, kExitIoError) << pre.out << pre.err;
  EXPECT_THAT(pre.err, HasSubstr("needs 32 MiB in " + small));
  EXPECT_THAT(pre.err, HasSubstr("only 8 MiB is free"));
  EXPECT_THAT(pre.err, HasSubstr("--force"));
  EXPECT_TRUE(DataEmpty(0) && DataEmpty(1));
  // ...and with --force the disk fills mid-phase.
  std::vector<std::string> args = RunArgs(plan);
  args.insert(args.begin() + 1, "--force");
  CommandResult r = RunLockstep(args);
  EXPECT_EQ(r.exit_code, kExitIoError) << r.out << r.err;
  Say("ENOSPC", r.err);
  EXPECT_THAT(r.err, HasSubstr("No space left on device (errno 28)"));
  EXPECT_THAT(r.err, HasSubstr("write to " + small + "/testfile.0000000"));
  EXPECT_THAT(r.err, HasSubstr(" at offset "));
  EXPECT_THAT(r.err, HasSubstr("agent " + agents_[1]->address()));
  v1::RunRecord rec = ReadRunJson(RunDirFromOutput(r.out));
  bool saw_errno = false;
  for (const auto& t : rec.tests()) {
    for (const auto& p : t.phases()) {
      for (const auto& a : p.agents()) {
        for (const auto& task : a.tasks()) saw_errno |= task.error_errno() == ENOSPC;
      }
    }
  }
  EXPECT_TRUE(saw_errno) << "no task carries error_errno 28 in run.json";
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(DataEmpty(i)) << absl::StrJoin(ListFiles(roots_[i] + "/data"), " ");
    EXPECT_EQ(ProbeState(agents_[i]->address()), "idle");
  }
}

// ---- TLS -----------------------------------------------------------------------

class TlsFaultTest : public FaultTest {
 protected:
  void SetUp() override {
    // Two CAs: a/ is the agents', b/ a stranger's. Agents are dialed as 127.0.0.1.
    for (const char* ca : {"a", "b"}) {
      CommandResult r = RunLockstep({"certs", "init", "--dir", tmp_ / ca, "--agent",
                                     "agent,127.0.0.1", "--controller", "controller"});
      ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    }
    // Expired: valid for one day, ten days ago.
    ASSERT_OK(IssueCertificate(tmp_ / "a", tmp_ / "a/expired", "controller", {}, -10 * 86400, 1));
    roots_.push_back(tmp_ / "root0");
    std::filesystem::create_directories(roots_[0] + "/data");
    agents_.push_back(std::make_unique<AgentProcess>(
        roots_[0],
        std::vector<std::string>{"--tls_ca", tmp_ / "a/ca.pem", "--tls_cert",
                                 tmp_ / "a/agent-agent.pem", "--tls_key",
                                 tmp_ / "a/agent-agent.key"},
        /*insecure=*/false));
    ASSERT_TRUE(agents_[0]->ok());
  }

  CommandResult RunTls(const std::vector<std::string>& tls_flags) {
    std::vector<std::string> args = {"run", "--history=false", "--out", tmp_ / "results"};
    args.insert(args.end(), tls_flags.begin(), tls_flags.end());
    args.push_back(WritePlan("[run]\nconnect_timeout_ms = 1000\n" + AllAgents() +
                             SmallWritePhase()));
    return RunLockstep(args);
  }

  std::shared_ptr<grpc::ChannelCredentials> Raw(const std::string& ca, const std::string& cert,
                                                const std::string& key) {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = *ReadFileToString(ca);
    if (!cert.empty()) {
      o.pem_cert_chain = *ReadFileToString(cert);
      o.pem_private_key = *ReadFileToString(key);
    }
    return grpc::SslCredentials(o);
  }

  // After every refusal: the agent was never taken and the right controller works.
  void ExpectAgentUntouched() {
    EXPECT_TRUE(DataEmpty(0));
    auto good = Raw(tmp_ / "a/ca.pem", tmp_ / "a/controller.pem", tmp_ / "a/controller.key");
    EXPECT_EQ(ProbeState(agents_[0]->address(), good), "idle");
  }
};

TEST_F(TlsFaultTest, RightCertificatesWork) {
  CommandResult r = RunTls({"--tls_dir", tmp_ / "a"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  ExpectAgentUntouched();
}

TEST_F(TlsFaultTest, ControllerFromAnotherCaIsRefused) {
  const auto t0 = Clock::now();
  CommandResult r = RunTls({"--tls_dir", tmp_ / "b"});
  Report("TLS wrong CA: controller exit", MsSince(t0), r.err);
  EXPECT_EQ(r.exit_code, kExitConnect) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("agent " + agents_[0]->address() +
                               " accepts TCP connections but the gRPC handshake did not complete"));
  EXPECT_THAT(r.err, HasSubstr("the TLS settings do not match"));
  // The agent refuses too, whatever the client trusts.
  auto foreign = Raw(tmp_ / "a/ca.pem", tmp_ / "b/controller.pem", tmp_ / "b/controller.key");
  EXPECT_THAT(ProbeState(agents_[0]->address(), foreign), HasSubstr("code 14"));
  ExpectAgentUntouched();
}

TEST_F(TlsFaultTest, ControllerWithoutCertificateIsRefused) {
  // The CLI will not even try without a certificate...
  CommandResult r = RunTls({"--tls_ca", tmp_ / "a/ca.pem"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.out << r.err;
  Say("no controller certificate", r.err);
  // ...and a client that does (trusting the right CA) fails the handshake.
  EXPECT_THAT(ProbeState(agents_[0]->address(), Raw(tmp_ / "a/ca.pem", "", "")),
              HasSubstr("code 14"));
  ExpectAgentUntouched();
}

TEST_F(TlsFaultTest, ExpiredControllerCertificateIsRefused) {
  CommandResult r = RunTls({"--tls_ca", tmp_ / "a/ca.pem", "--tls_cert", tmp_ / "a/expired.pem",
                            "--tls_key", tmp_ / "a/expired.key"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("expired"));
  Say("expired controller certificate", r.err);
  // Bypassing the controller's own check, the agent refuses it in the handshake.
  auto expired = Raw(tmp_ / "a/ca.pem", tmp_ / "a/expired.pem", tmp_ / "a/expired.key");
  EXPECT_THAT(ProbeState(agents_[0]->address(), expired), HasSubstr("code 14"));
  ExpectAgentUntouched();
}

TEST_F(TlsFaultTest, PlaintextToATlsAgentIsRefused) {
  const auto t0 = Clock::now();
  CommandResult r = RunTls({"--insecure"});
  Report("TLS plaintext to TLS agent: controller exit", MsSince(t0), r.err);
  EXPECT_EQ(r.exit_code, kExitConnect) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("accepts TCP connections but the gRPC handshake did not complete"));
  EXPECT_THAT(ProbeState(agents_[0]->address()), HasSubstr("code 14"));
  ExpectAgentUntouched();
}

// ---- network -------------------------------------------------------------------

// The agent in its own network namespace behind a veth pair; the link is set
// down mid-phase. Non-loopback, so TLS.
TEST_F(FaultTest, NetworkCutMidPhase) {
  if (!IsRoot()) GTEST_SKIP() << "needs root for a network namespace (ip netns add)";
  if (::access("/usr/sbin/ip", X_OK) != 0 && ::access("/sbin/ip", X_OK) != 0) {
    GTEST_SKIP() << "no ip(8)";
  }
  const std::string ip = ::access("/usr/sbin/ip", X_OK) == 0 ? "/usr/sbin/ip" : "/sbin/ip";
  const int tag = ::getpid() % 200 + 20;
  const std::string ns = absl::StrFormat("lsfault%d", ::getpid());
  const std::string host_if = absl::StrFormat("lsh%d", ::getpid());
  const std::string ns_if = absl::StrFormat("lsn%d", ::getpid());
  const std::string host_ip = absl::StrFormat("10.213.%d.1", tag);
  const std::string agent_ip = absl::StrFormat("10.213.%d.2", tag);
  auto sh = [&](const std::vector<std::string>& argv) {
    std::vector<std::string> a = {ip};
    a.insert(a.end(), argv.begin(), argv.end());
    CommandResult r = RunCommand(a);
    return r.exit_code == 0 ? std::string() : absl::StrJoin(a, " ") + ": " + r.err;
  };
  if (std::string e = sh({"netns", "add", ns}); !e.empty()) GTEST_SKIP() << e;
  struct Cleanup {
    std::function<void()> f;
    ~Cleanup() { f(); }
  } cleanup{[&] {
    sh({"link", "del", host_if});
    sh({"netns", "del", ns});
  }};
  for (const auto& cmd : std::vector<std::vector<std::string>>{
           {"link", "add", host_if, "type", "veth", "peer", "name", ns_if},
           {"link", "set", ns_if, "netns", ns},
           {"addr", "add", host_ip + "/30", "dev", host_if},
           {"link", "set", host_if, "up"},
           {"-n", ns, "addr", "add", agent_ip + "/30", "dev", ns_if},
           {"-n", ns, "link", "set", ns_if, "up"},
           {"-n", ns, "link", "set", "lo", "up"}}) {
    std::string e = sh(cmd);
    ASSERT_TRUE(e.empty()) << e;
  }
  CommandResult certs = RunLockstep({"certs", "init", "--dir", tmp_ / "pki", "--agent",
                                     "agent," + agent_ip});
  ASSERT_EQ(certs.exit_code, 0) << certs.err;
  roots_.push_back(tmp_ / "root0");
  std::filesystem::create_directories(roots_[0] + "/data");
  agents_.push_back(std::make_unique<AgentProcess>(
      roots_[0],
      std::vector<std::string>{"--listen", agent_ip + ":0", "--tls_ca", tmp_ / "pki/ca.pem",
                               "--tls_cert", tmp_ / "pki/agent-agent.pem", "--tls_key",
                               tmp_ / "pki/agent-agent.key"},
      /*insecure=*/false, std::vector<std::string>{ip, "netns", "exec", ns}));
  ASSERT_TRUE(agents_[0]->ok());
  std::vector<std::string> args = {"run", "--history=false", "--tls_dir", tmp_ / "pki", "--out",
                                   tmp_ / "results",
                                   WritePlan(RunHeader() + AllAgents() + BigWritePhase())};
  Controller ctl(tmp_.path(), args);
  ASSERT_TRUE(WaitForData({0})) << ctl.Output();
  const auto t0 = Clock::now();
  ASSERT_EQ(sh({"link", "set", host_if, "down"}), "");
  ASSERT_EQ(ctl.Wait(milliseconds(kLeaseMs + 10000)), kExitAgentLost) << ctl.Output();
  const double detect_ms = MsSince(t0, ctl.exited_at());
  Report("network cut: controller exit after link down", detect_ms, ctl.err());
  EXPECT_LT(detect_ms, kLeaseMs + kMarginMs);
  EXPECT_THAT(ctl.err(), HasSubstr("agent " + agents_[0]->address() + " lost during t0/r0/w"));
  // The agent, cut off, lets the lease lapse and removes its file.
  EXPECT_TRUE(Eventually([&] { return DataEmpty(0); }, milliseconds(kLeaseMs + 5000)));
  Report("network cut: agent's files removed after link down", MsSince(t0));
  ASSERT_EQ(sh({"link", "set", host_if, "up"}), "");
  auto creds = MakeChannelCredentials(
      {tmp_ / "pki/ca.pem", tmp_ / "pki/controller.pem", tmp_ / "pki/controller.key"});
  ASSERT_OK(creds);
  EXPECT_TRUE(Eventually([&] { return ProbeState(agents_[0]->address(), *creds) == "idle"; },
                         milliseconds(5000)))
      << ProbeState(agents_[0]->address(), *creds);
}

}  // namespace
}  // namespace lockstep::testing
