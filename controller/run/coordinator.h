// Drives a plan on its agents, phase by phase in lockstep, and reports it:
// attach → clock offsets → for each test, repetition and phase: prepare on
// all clients, cache barrier, then one start instant for all, collect,
// reduce → remove files → detach → run.json, summary.txt.
//
// The protocol is coordinator.cc; its parts have their own headers:
// AgentRoster (the agents and what is known of each), Heartbeater (leases),
// PhaseAttempt (one phase's steps), PhaseStream (one agent's Start call),
// ProgressLine, AgentEndpoints (which agents, which credentials), RunStore
// (the results directory). What the run prints is its events, to
// RunOptions.observer: the coordinator knows no tool's layout. Failures come
// back as a RunFailure; the command line picks the exit code.
#ifndef LOCKSTEP_CONTROLLER_RUN_COORDINATOR_H_
#define LOCKSTEP_CONTROLLER_RUN_COORDINATOR_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "common/tls.h"
#include "controller/record/run_observer.h"
#include "controller/plan/plan.h"
#include "controller/run/run_failure.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

struct RunOptions {
  std::string out_dir = "./lockstep-results";
  // Agents to start on loopback; 0 = use the plan's agents (or 2 if it lists
  // none).
  int local_agents = 0;
  // Allowed root of the local agents; empty: a new temporary directory.
  std::string local_root;
  // The --root directories the user named: a local agent takes a system
  // directory (common/files.h) as a root only below one of them.
  std::vector<std::string> named_roots;
  // Plaintext to agents; refused for non-loopback addresses.
  bool insecure = false;
  // Run even where an agent reports less free space than its share.
  bool force = false;
  std::shared_ptr<grpc::ChannelCredentials> credentials;  // TLS, when not insecure
  TlsFiles tls_files;  // what `credentials` were made of (explains handshake failures)
  // Agents from the command line (--agents, --hostfile, --agents-from),
  // used instead of the plan's [[agent]] tables (a plan with tables and
  // these is refused). Role ROLE_UNSPECIFIED: the agent's own, from Attach.
  std::vector<AgentPlan> agents;
  std::string command_line;
  // The front end's own fields of the run's record (its tool's command line
  // and options: ior_*, iozone_command_line), merged into the RunRecord when
  // the run starts, so that run.json and every report have them.
  v1::RunRecord record_fields;
  // Receives every event of the run (controller/record/run_observer.h): the
  // front end's reports; may be null. An observer's error fails the run
  // (RunFailure::kOther) at its end.
  RunObserver* observer = nullptr;
  // What the observers printed; summary.txt is its text (empty when null).
  const ReportText* report = nullptr;
  // Live progress, one line updated in place (stderr on a terminal); may be
  // empty.
  std::function<void(const std::string&)> progress;
  // When `progress` is empty: plain progress lines every 10 s (stderr when
  // not a terminal); may be empty.
  std::function<void(const std::string&)> print_progress_lines;
  // Set from a signal handler: abort the phase, clean up, exit 130.
  const std::atomic<bool>* interrupted = nullptr;
};

struct RunOutcome {
  RunFailure failure = RunFailure::kNone;
  std::string run_dir;   // empty if the results directory was never created
  std::string error;     // what went wrong, for the last line printed
  // What run.json holds, less each phase's per-agent records (left in the
  // run directory to keep memory bounded: RunStore); read run.json for them.
  v1::RunRecord record;
};

// Runs `plan` on the calling thread, which it blocks until the run ends;
// both arguments must outlive the call. Never throws; what went wrong is in
// the outcome.
RunOutcome RunPlan(const Plan& plan, const RunOptions& options);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_COORDINATOR_H_
