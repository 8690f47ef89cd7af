// Child processes and the controller's output files, for integration and
// fault tests (TestCluster, test_cluster.h, builds on these).
#ifndef LOCKSTEP_TESTS_INTEGRATION_PROCESS_UTIL_H_
#define LOCKSTEP_TESTS_INTEGRATION_PROCESS_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/child_process.h"
#include "lockstep/v1/results.pb.h"
#include "test_util.h"

namespace lockstep::testing {

std::string BinDir();    // lockstep and lockstep-agent
std::string ToolsDir();  // the test-only tools: latency_relay, agent_probe
std::string SourceDir();

// A child process that prints "listening on HOST:PORT" once it is ready
// (agents, the latency relay); stopped on destruction (SIGCONT for a
// stopped one, then SIGTERM, then SIGKILL).
class ListeningProcess {
 public:
  // Starts `argv` (no shell), stderr to `log_path`, and waits up to
  // `timeout` for the line; on failure ok() is false and error() says why.
  ListeningProcess(const std::vector<std::string>& argv, const std::string& log_path,
                   absl::Duration timeout = absl::Seconds(10));
  virtual ~ListeningProcess();
  ListeningProcess(const ListeningProcess&) = delete;
  ListeningProcess& operator=(const ListeningProcess&) = delete;

  bool ok() const { return child_ != nullptr && child_->running(); }
  const std::string& address() const { return address_; }
  const std::string& error() const { return error_; }
  int pid() const { return child_ != nullptr ? child_->pid() : -1; }
  const std::string& log_path() const { return log_; }
  // Sends `signal`; after SIGKILL the process is reaped and ok() is false.
  void Kill(int signal);

 private:
  std::unique_ptr<ChildProcess> child_;  // common/child_process.h
  std::string address_;
  std::string error_;
  std::string log_;
};

// Whether process `pid` has exited: no /proc entry (reaped), or a zombie
// (exited, not yet reaped by its parent). Reaps nothing.
bool Exited(int pid);

// Runs the real `lockstep` binary with `args`.
CommandResult RunLockstep(const std::vector<std::string>& args);

// Parses <run_dir>/run.json and puts back the agents' full telemetry from
// telemetry.pb.gz, as run readers do; fails the test on error.
v1::RunRecord ReadRunJson(const std::string& run_dir);

// `lockstep report RUN_DIR` prints what the run's report printed
// (RUN_DIR/summary.txt) byte for byte, then the per-phase starts
// (FormatPhaseStarts of its run.json); fails the test otherwise.
void ExpectReportReprintsRun(const std::string& run_dir);

// The run directory named on the "Results : DIR/" line of the output.
std::string RunDirFromOutput(const std::string& out);

// Files directly in `dir` (names), sorted.
std::vector<std::string> ListFiles(const std::string& dir);

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_INTEGRATION_PROCESS_UTIL_H_
