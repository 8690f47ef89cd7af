// TestCluster: real lockstep-agent processes and the real `lockstep` binary
// for integration and fault tests, in the spirit of Kudu's
// ExternalMiniCluster.
//
//   TestCluster cluster;                       // a temporary root, no agent yet
//   ASSERT_OK(cluster.Start(3));               // three agents on loopback
//   RunResult r = cluster.Run(cluster.WritePlan(
//       cluster.Plan().AddPhase(PlanPhase("w", "write"))));
//   ASSERT_EQ(r.exit_code, 0) << r.Output();
//   EXPECT_EQ(r.Record().status(), "complete");
//   cluster.Kill(1);                           // SIGKILL; Stop/Continue; Restart
//
// What it owns
// - A temporary root (path()), removed with everything in it when the
//   cluster is destroyed: agent i's allowed root agent<i>/ (with the
//   ClusterOptions::dirs made in it, "data" by default), its log
//   agent<i>-<generation>.log (its stderr), written plans plan<N>.toml, the
//   controller's --out directory results/, and with TLS the CA and
//   certificates in pki/.
// - The agent processes. Each listens on port 0 of its host (127.0.0.1, or
//   its namespace's address) and is ready once it printed "listening on
//   HOST:PORT", so no port is guessed. They are stopped when the cluster is
//   destroyed (SIGCONT, SIGTERM, SIGKILL after 5 s); on a failed test their
//   logs' last lines are printed first.
// - With namespaces: a controller namespace and one namespace per agent,
//   joined by a veth pair each (10.213.<i+1>.1 on the controller's side,
//   .2 on the agent's); the test's own network namespace gets no address,
//   link or route. Deleted after the agents stop; namespaces left by a dead
//   earlier test process are removed by Start(). Every controller command
//   and AgentState() run in the controller namespace.
//
// Agents are numbered in the order they were started (Start(), then
// AddAgent()); an index stays the same agent across Kill and Restart.
// Addresses are those of the current processes: build plans after a
// Restart(i, Port::kNew).
//
// An agent index out of range fails the test and aborts (a bug in the test).
//
// Thread safety: none. Call from one thread at a time (the test's thread, or
// a callback the test's thread is blocked in, such as an in-process
// coordinator's print callback). Objects it returns (RunResult,
// ControllerProcess, PlanBuilder) hold no pointer to it; a ControllerProcess
// writes its output below path(), so destroy it before the cluster (declare
// it after).
#ifndef LOCKSTEP_TESTS_INTEGRATION_TEST_CLUSTER_H_
#define LOCKSTEP_TESTS_INTEGRATION_TEST_CLUSTER_H_

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/tls.h"
#include "integration/plan_builder.h"
#include "integration/process_util.h"
#include "lockstep/v1/results.pb.h"
#include "test_util.h"

namespace lockstep::testing {

// What a finished `lockstep` command left: exit code, output and the run
// directory it named ("# Results : DIR/"), if any.
struct RunResult : CommandResult {
  std::string run_dir;  // "" when the output names none

  // run_dir/run.json parsed; a missing or unreadable file fails the test
  // (ADD_FAILURE) and gives an empty record.
  v1::RunRecord Record() const { return ReadRunJson(run_dir); }
  // "exit N\nstdout:\n...\nstderr:\n..." for failure messages.
  std::string Output() const;
};

// A `lockstep` command in the background, for tests that act while it runs.
// A reaper thread waits for it and records the instant it exited, so
// measured times do not depend on how often the test looks. Destruction
// SIGKILLs it if it still runs and joins the reaper. Wait, exited_at and
// Signal may be called from any thread. Destroy it before the cluster that
// started it (its output files are in the cluster's root).
class ControllerProcess {
 public:
  // Starts `argv` (no shell) with stdout and stderr to `out_path`/`err_path`.
  ControllerProcess(const std::vector<std::string>& argv, std::string out_path,
                    std::string err_path);
  ~ControllerProcess();
  ControllerProcess(const ControllerProcess&) = delete;
  ControllerProcess& operator=(const ControllerProcess&) = delete;

  // The exit code (128 + signal if killed), or -1 if it still runs after `timeout`.
  int Wait(std::chrono::milliseconds timeout);
  // When the reaper saw it exit; only meaningful once Wait returned a code.
  std::chrono::steady_clock::time_point exited_at();
  void Signal(int sig);
  pid_t pid() const { return pid_; }
  std::string out() const;  // its stdout so far
  std::string err() const;  // its stderr so far
  std::string Output() const { return "stdout:\n" + out() + "\nstderr:\n" + err(); }
  // Once it has exited (Wait returned a code): the result as Run() gives it.
  RunResult Result();

 private:
  std::string out_path_, err_path_;
  pid_t pid_ = -1;
  std::thread reaper_;
  absl::Notification exited_;
  absl::Mutex mu_;
  int exit_code_ ABSL_GUARDED_BY(mu_) = -1;
  std::chrono::steady_clock::time_point exited_at_ ABSL_GUARDED_BY(mu_);
};

// One agent to start.
struct AgentSpec {
  // "client", "oss" or "mds": passed as --role and written as role = in
  // plans. Empty: neither (the agent's default, a client).
  std::string role;
  // More lockstep-agent flags, e.g. {"--test_delay_per_transfer_us", "2000"}.
  std::vector<std::string> flags;
};

struct ClusterOptions {
  std::vector<AgentSpec> agents;  // started by Start(), as agents 0..n-1
  // Made in every agent's root before it starts (relative paths).
  std::vector<std::string> dirs = {"data"};
  // Mutual TLS: Start() makes a CA and the controller's certificate in
  // pki_dir() (`lockstep certs init --controller controller`), each agent
  // gets its own (`lockstep certs issue --agent agent<i>,HOST`, in
  // pki/agent-agent<i>.*) and the --tls_* flags; controller commands get
  // --tls_dir pki/. Off: --insecure on both sides (loopback only).
  bool tls = false;
  // Each agent in its own network namespace (see the file comment); needs
  // root and ip(8) (NamespacesUnavailable() says whether they are there).
  // Implies tls: the agents' addresses are not loopback.
  bool namespaces = false;
};

class TestCluster {
 public:
  enum class Port { kSame, kNew };

  // Makes the temporary root; starts nothing.
  TestCluster();
  ~TestCluster();
  TestCluster(const TestCluster&) = delete;
  TestCluster& operator=(const TestCluster&) = delete;

  // Why a namespaced cluster cannot run here ("" if it can): not root, or
  // no ip(8). For GTEST_SKIP.
  static std::string NamespacesUnavailable();

  // Starts options.agents (and the namespaces and certificates they need).
  // Once per cluster. An error names what failed (an agent's error includes
  // its log path); agents started before it keep running until destruction.
  absl::Status Start(ClusterOptions options);
  absl::Status Start(int agents) { return Start({.agents = std::vector<AgentSpec>(agents)}); }
  // Starts one more agent with the options given to Start (or the defaults
  // if Start was not called); its index is size() - 1 once it returns OK.
  absl::Status AddAgent(const AgentSpec& spec = {});

  // ---- agents (index 0 .. size()-1) ----------------------------------------
  int size() const { return static_cast<int>(agents_.size()); }
  const std::string& address(int i) const;   // HOST:PORT as the controller dials it
  const std::string& root(int i) const;      // its --root
  const std::string& role(int i) const;      // as given in its AgentSpec
  int pid(int i) const;                      // -1 after Kill
  const std::string& log_path(int i) const;  // stderr of its current process
  // root(i)/rel, and the names of the entries in it, sorted.
  std::string dir(int i, const std::string& rel = "data") const;
  std::vector<std::string> Files(int i, const std::string& rel = "data") const;
  // Sum of the sizes of the regular files directly in dir(i, rel).
  uint64_t FileBytes(int i, const std::string& rel = "data") const;

  // ---- faults -----------------------------------------------------------------
  void Kill(int i);      // SIGKILL, reaped at once; root and address are kept
  void Stop(int i);      // SIGSTOP: it neither answers nor runs its watchdog
  void Continue(int i);  // SIGCONT
  // A new process for agent i on the same root (killing the old one if it
  // still runs): on the same address (kSame), or on a new port (kNew).
  absl::Status Restart(int i, Port port = Port::kSame);
  // Namespaces only: sets the controller's end of agent i's link down / up.
  absl::Status CutLink(int i);
  absl::Status RestoreLink(int i);
  // Namespaces only: what the controller sends to `prefix` (CIDR, outside
  // 10.213/16) vanishes, SYNs included, with no answer (a dummy link in the
  // controller's namespace): hosts that are down behind a router, or a
  // firewall that drops.
  absl::Status DropTrafficTo(const std::string& prefix);
  // What agent i says to a Heartbeat for a session it cannot know, asked with
  // the cluster's credentials: "idle", "busy" or "code N: MESSAGE".
  std::string AgentState(int i) const;

  // ---- plans ------------------------------------------------------------------
  // A builder with one [[agent]] table per agent (address and role), in
  // index order, or for the agents listed in `which`.
  PlanBuilder Plan() const;
  PlanBuilder Plan(const std::vector<int>& which) const;
  // Writes a plan to path()/plan<N>.toml and returns that path.
  std::string WritePlan(const PlanBuilder& plan);
  std::string WritePlan(const std::string& toml);

  // ---- the controller ---------------------------------------------------------
  // `lockstep ARGS...` to completion (in the controller namespace if any).
  RunResult Lockstep(const std::vector<std::string>& args) const;
  // `lockstep run CREDENTIALS --out results_dir() FLAGS... PLAN`.
  RunResult Run(const std::string& plan, const std::vector<std::string>& flags = {}) const;
  // The same two in the background.
  std::unique_ptr<ControllerProcess> StartLockstep(const std::vector<std::string>& args);
  std::unique_ptr<ControllerProcess> StartRun(const std::string& plan,
                                              const std::vector<std::string>& flags = {});
  // {"--insecure"}, or {"--tls_dir", pki_dir()} with TLS.
  std::vector<std::string> ControllerCredentials() const;

  // ---- paths ------------------------------------------------------------------
  const std::string& path() const { return tmp_.path(); }
  std::string operator/(const std::string& name) const { return tmp_ / name; }
  // That directory, created (with its parents): a "shared" file system for
  // agents rooted there.
  std::string MakeDir(const std::string& name) const;
  std::string results_dir() const { return tmp_ / "results"; }
  std::string pki_dir() const { return tmp_ / "pki"; }

 private:
  struct Agent;
  class Network;

  absl::Status StartAgent(int i);
  std::vector<std::string> InController(std::vector<std::string> argv) const;
  std::vector<std::string> RunArgs(const std::string& plan,
                                   const std::vector<std::string>& flags) const;
  const Agent& agent(int i) const;
  Agent& agent(int i);
  void PrintLogTails() const;

  TempDir tmp_;
  ClusterOptions options_;
  bool started_ = false;
  int plans_ = 0;
  int controllers_ = 0;
  std::unique_ptr<Network> network_;  // namespaces only; outlives agents_
  std::vector<std::unique_ptr<Agent>> agents_;
};

// What the agent at `address` says to a Heartbeat for an unknown session,
// asked in plaintext or with `tls` as it is (no validity check: tests present
// foreign or expired certificates); `prefix` goes before the probe binary
// (e.g. ip netns exec NS). "idle", "busy" or "code N: MESSAGE".
std::string ProbeAgent(const std::string& address, const TlsFiles& tls = {},
                       const std::vector<std::string>& prefix = {});

}  // namespace lockstep::testing

// Starts `cluster` with the ClusterOptions given after it, each agent in its
// own network namespace (namespaces = true), or skips the test where this
// host cannot make them: NamespacesUnavailable(), or no permission (a
// container). Any other failure to start fails the test. In a test body or
// a fixture's SetUp.
#define START_IN_NAMESPACES_OR_SKIP(cluster, ...)                                          \
  do {                                                                                     \
    if (std::string why_ = ::lockstep::testing::TestCluster::NamespacesUnavailable();      \
        !why_.empty()) {                                                                   \
      GTEST_SKIP() << why_;                                                                \
    }                                                                                      \
    ::lockstep::testing::ClusterOptions options_ = __VA_ARGS__;                            \
    options_.namespaces = true;                                                            \
    const ::absl::Status started_ = (cluster).Start(std::move(options_));                  \
    if (::absl::StrContains(started_.message(), "ermission")) {                            \
      GTEST_SKIP() << "cannot create network namespaces here: " << started_;               \
    }                                                                                      \
    ASSERT_OK(started_);                                                                   \
  } while (0)

#endif  // LOCKSTEP_TESTS_INTEGRATION_TEST_CLUSTER_H_
