// Drives a plan on its agents, phase by phase in lockstep, and reports it:
// attach → clock offsets → for each test, repetition and phase: prepare on
// all clients, cache barrier, then one start instant for all, collect,
// reduce → remove files → detach → run.json, summary.txt.
//
// The protocol is coordinator.cc; its parts have their own headers:
// AgentRoster (the agents and what is known of each), Heartbeater (leases),
// PhaseAttempt (one phase's steps), PhaseStream (one agent's Start call),
// ProgressLine, RunPrinter (IOR's layout and Lockstep's '#' lines),
// AgentEndpoints (which agents, which credentials), RunStore (the results
// directory). Failures come back as a RunFailure; the command line picks
// the exit code.
#ifndef LOCKSTEP_CONTROLLER_RUN_COORDINATOR_H_
#define LOCKSTEP_CONTROLLER_RUN_COORDINATOR_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "common/tls.h"
#include "controller/record/ior_math.h"
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
  // `lockstep ior`: IOR's own command line for IOR's "Command line" line
  // (empty: command_line), and IOR's -v.
  std::string ior_command_line;
  bool ior_verbose = false;
  int32_t ior_reference_number = 0;  // IOR -A
  // IOR -C (node_offset > 0), -Z, -X, -Q, for the Options block and summary
  // columns of every test, a write-only one too (RunRecord.ior_reorder_*).
  TestReorder ior_reorder;
  bool ior_reorder_given = false;  // from `lockstep ior`; else the specs say it
  // `lockstep iozone`: IOzone's own command line (RunRecord.iozone_command_line).
  std::string iozone_command_line;
  // Where the report goes (stdout in the CLI).
  std::function<void(const std::string&)> print;
  // false: leave the IOR layout (header, options, per-iteration and summary
  // tables, start-skew table) out of `print` and summary.txt; Lockstep's own
  // lines (telemetry, skew marks, warnings, status, results directory) still
  // come, each starting with '#'. For commands that print another layout
  // (lockstep mdtest) from the RunRecord.
  bool ior_text = true;
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
