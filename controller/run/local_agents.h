// The embedded default: N lockstep-agent processes on loopback with a
// temporary allowed root (relative plan directories go below it) and the
// plan's absolute directories as further roots, for `lockstep run --local N`
// and plans without agents. Only the first lists the host's busiest processes
// in its telemetry (--telemetry_processes=false for the others: one host, one
// scan). Started and stopped (SIGTERM, then SIGKILL) as a ChildProcess
// (common/child_process.h); the root is removed on destruction.
//
// Only this controller can reach them, and they do not outlive it: they
// listen with mutual TLS on loopback, with a CA, controller and agent
// certificate made for this run in the 0700 temporary directory and deleted
// as soon as the agents have read them (the controller keeps its credentials
// in memory); each agent gets --local_parent (a parent-death signal: it exits
// when the controller dies, SIGKILL included) and --local_dir (it removes the
// temporary directory, root and logs, when it exits). The lease covers the
// rest: a phase whose controller went silent is aborted and its files removed.
#ifndef LOCKSTEP_CONTROLLER_RUN_LOCAL_AGENTS_H_
#define LOCKSTEP_CONTROLLER_RUN_LOCAL_AGENTS_H_

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/security/credentials.h>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/child_process.h"

namespace lockstep {

struct LocalAgentsOptions {
  int count = 2;
  std::string agent_binary;  // empty: lockstep-agent next to this executable
  std::string root;          // empty: a new temporary directory, removed afterwards
  // More allowed roots (the plan's absolute directories): the user runs both
  // sides, so the plan's own directories are trusted. Created if missing.
  std::vector<std::string> extra_roots;
  // The plan's relative phase directories (below the root), created if
  // missing, as IOR creates its files: the user runs both sides.
  std::vector<std::string> relative_dirs;
  // Programs (absolute paths) command phases may run (--allow_command); they
  // run as the user who started the agents (--command_user: that account,
  // root included, since that user owns both sides).
  std::vector<std::string> allow_commands;
  // The --root directories the user named: a root that is a system
  // directory is passed with --allow_system_roots only below one of them
  // (else the agent refuses it, naming it).
  std::vector<std::string> named_roots;
  absl::Duration start_timeout = absl::Seconds(10);
};

class LocalAgents {
 public:
  // Starts the agents and waits for each to print "listening on ...".
  // Errors name the binary and the agent's log file.
  static absl::StatusOr<std::unique_ptr<LocalAgents>> Start(const LocalAgentsOptions& options);
  ~LocalAgents();

  const std::vector<std::string>& addresses() const { return addresses_; }
  const std::string& root() const { return root_; }
  // The controller's TLS credentials for these agents (their certificates
  // are gone from disk by the time Start returns).
  const std::shared_ptr<grpc::ChannelCredentials>& credentials() const { return credentials_; }

 private:
  LocalAgents() = default;
  std::vector<std::unique_ptr<ChildProcess>> agents_;
  std::vector<std::string> addresses_;
  std::string root_;
  std::string log_dir_;
  bool remove_root_ = false;
  std::shared_ptr<grpc::ChannelCredentials> credentials_;
};

// Directory of the running executable (/proc/self/exe).
std::string SelfDirectory();

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_LOCAL_AGENTS_H_
