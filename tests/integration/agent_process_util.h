// Real lockstep-agent processes on loopback, for integration and fault tests.
#ifndef LOCKSTEP_TESTS_INTEGRATION_AGENT_PROCESS_UTIL_H_
#define LOCKSTEP_TESTS_INTEGRATION_AGENT_PROCESS_UTIL_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "lockstep/v1/results.pb.h"
#include "test_util.h"

namespace lockstep::testing {

std::string BinDir();
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

  bool ok() const { return pid_ > 0; }
  const std::string& address() const { return address_; }
  const std::string& error() const { return error_; }
  int pid() const { return pid_; }
  const std::string& log_path() const { return log_; }
  // Sends `signal`; after SIGKILL the process is reaped and ok() is false.
  void Kill(int signal);

 private:
  int pid_ = -1;
  std::string address_;
  std::string error_;
  std::string log_;
};

// One agent process.
class AgentProcess : public ListeningProcess {
 public:
  // Starts `lockstep-agent --listen 127.0.0.1:0 --root ROOT --insecure EXTRA...`
  // (a later --listen in EXTRA wins). Without `insecure`, EXTRA must carry the
  // --tls_* flags. `prefix` goes before the binary (e.g. ip netns exec NS).
  // A failure to start fails the test.
  explicit AgentProcess(const std::string& root, std::vector<std::string> extra = {},
                        bool insecure = true, std::vector<std::string> prefix = {});
};

// Runs the real `lockstep` binary with `args`.
CommandResult RunLockstep(const std::vector<std::string>& args);

// Parses <run_dir>/run.json; fails the test on error.
v1::RunRecord ReadRunJson(const std::string& run_dir);

// The run directory named on the "Results : DIR/" line of the output.
std::string RunDirFromOutput(const std::string& out);

// Files directly in `dir` (names), sorted.
std::vector<std::string> ListFiles(const std::string& dir);

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_INTEGRATION_AGENT_PROCESS_UTIL_H_
