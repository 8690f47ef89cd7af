// How a command reaches its agents: which agents (--agents, --hostfile,
// --agents-from DIR with --expect/--expect_nodes/--wait_ms), and with which
// TLS material (--tls_dir or --tls_ca/--tls_cert/--tls_key). Shared by
// `lockstep run`, `lockstep agents` and the IOR/mdtest front ends.
#ifndef LOCKSTEP_CONTROLLER_CLI_REACH_AGENTS_H_
#define LOCKSTEP_CONTROLLER_CLI_REACH_AGENTS_H_

#include <atomic>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/flags.h"
#include "common/tls.h"
#include "controller/ior/ior_cli.h"
#include "controller/plan/plan.h"
#include "controller/run/coordinator.h"

namespace lockstep {

// Appends `addr` (HOST:PORT, surrounding blanks ignored, empty skipped) to
// *agents. InvalidArgument "WHERE: ..." for a malformed or repeated address.
absl::Status AddAgentAddress(std::string addr, const std::string& where,
                             std::vector<std::string>* agents);

// A hostfile's text: one "HOST:PORT [ROLE]" a line (ROLE client, oss or
// mds; without it the agent's own --role counts), '#' starts a comment;
// errors name "--hostfile PATH:LINE".
absl::StatusOr<std::vector<AgentPlan>> ParseHostfileAgents(const std::string& text,
                                                           const std::string& path);
// Their addresses only.
absl::StatusOr<std::vector<std::string>> ParseHostfile(const std::string& text,
                                                       const std::string& path);

// The agents the flags of `f` name (its command must declare the flags of
// AgentSourceFlags() in command_specs.h); empty when none is given. Agents
// of --agents/--hostfile have role ROLE_UNSPECIFIED (each agent's own);
// --agents-from waits for the announcements (--wait_ms, else
// `default_wait`). Errors: InvalidArgument for bad flags or files; those of
// AwaitAnnouncements.
absl::StatusOr<std::vector<AgentPlan>> AgentsFromFlags(const ParsedFlags& f,
                                                       absl::Duration default_wait,
                                                       const std::atomic<bool>* interrupted);

// The TLS files of --tls_dir (DIR/ca.pem, DIR/controller.pem,
// DIR/controller.key), each overridden by --tls_ca/--tls_cert/--tls_key;
// all empty when none is given.
TlsFiles TlsFilesFromFlags(const ParsedFlags& f);

// Channel credentials of `files`, after printing a warning to stderr for
// each certificate that expires within 30 days (or expired). Errors are
// LoadTlsFiles'.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ControllerCredentials(
    const TlsFiles& files);

// The TLS set-up of a translated front end's agents (ior, mdtest, iozone:
// --tls_dir DIR or --insecure on their command lines): o->insecure, and
// without it o->tls_files (DIR/ca.pem, controller.pem, controller.key) and
// o->credentials (ControllerCredentials: expiry warnings included). Nothing
// when `tls_dir` is empty. Errors are LoadTlsFiles'.
absl::Status TlsFromDir(const std::string& tls_dir, bool insecure, RunOptions* o);

// With o->insecure unset: o->tls_files from the TLS flags (TlsFilesFromFlags)
// and, when any is given, o->credentials (ControllerCredentials).
absl::Status TlsFromFlags(const ParsedFlags& f, RunOptions* o);

// A front end's agents and credentials (`lockstep io500`, `lockstep dlio`),
// from --insecure, the TLS flags, --agents/--hostfile/--agents-from and
// --local, into o->insecure, tls_files, credentials and agents; with no
// agents named, o->local_agents = --local N (2 when not given). Errors, for
// FrontEnd::SetUpAgents (SetUpExitCode): InvalidArgument for bad flags,
// files or TLS material; Unavailable when the agents could not be learnt;
// Cancelled, without a message, when interrupted.
absl::Status FrontEndAgentsFromFlags(const ParsedFlags& f, const std::atomic<bool>* interrupted,
                                     RunOptions* o);
// The client agents those options give: the local ones, or the named agents
// not marked oss or mds (an agent whose role its hostfile line does not say
// counts as a client; its own --role is learnt only at Attach).
uint32_t ClientAgentCount(const RunOptions& o);

// Where a translated front end's phases go with local agents: the directory
// its command line names, as its tool treats it.
struct LocalPlacement {
  const char* tool;  // "ior", "mdtest", "iozone": for SetPlanText's message
  std::string what;  // "-o's directory", "-d", "-F's directory": named by the guard
  // mdtest: a missing last directory is made (by the agent), below a parent
  // that must exist; the others refuse a missing directory.
  bool makes_last_dir = false;
  std::string missing_note;  // appended to "directory D does not exist; create it first"
};

// The agents of a translated command (ior, mdtest, iozone) and how they are
// reached, the one set-up the three share: with --agents or --hostfile, TLS
// from --tls_dir or --insecure (TlsFromDir, expiry warnings included); else
// --local N agents rooted at the phases' directory on this host, after the
// system-directory guard of every front end (CheckLocalWritePlace) and the
// tool's rule for a missing directory, with the plan's text written again
// for the placed directory through `lockstep run`'s checks (SetPlanText).
// Errors say what to fix (create the directory, --root DIR, the TLS files).
absl::Status SetUpTranslatedAgents(const LocalPlacement& placement, CliCommand* cmd,
                                   RunOptions* options);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_CLI_REACH_AGENTS_H_
