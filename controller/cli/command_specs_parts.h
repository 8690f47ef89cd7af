// Internal to the command_specs*.cc files, which together hold `lockstep`'s
// command table (the contract is command_specs.h): the flag groups several
// commands share, and the CommandSpecs that command_specs.cc lists in
// kCommands but that are defined beside it, in command_specs_tools.cc (the
// front ends: ior, mdtest, iozone, io500, dlio) and command_specs_results.cc
// (history, import, export, compare, gate, report, verify).
#ifndef LOCKSTEP_CONTROLLER_CLI_COMMAND_SPECS_PARTS_H_
#define LOCKSTEP_CONTROLLER_CLI_COMMAND_SPECS_PARTS_H_

#include <array>
#include <cstddef>

#include "common/flags.h"

namespace lockstep::command_specs {

// a, then b: flag groups joined at compile time.
template <size_t N, size_t M>
constexpr std::array<FlagSpec, N + M> Concat(const std::array<FlagSpec, N>& a,
                                             const std::array<FlagSpec, M>& b) {
  std::array<FlagSpec, N + M> out{};
  for (size_t i = 0; i < N; ++i) out[i] = a[i];
  for (size_t i = 0; i < M; ++i) out[N + i] = b[i];
  return out;
}

// Flags several commands take with the same meaning and help.
inline constexpr FlagSpec kHostfileFlag = {
    .name = "hostfile", .kind = FlagKind::kList, .value_name = "FILE",
    .help = "read agents from FILE: one HOST:PORT [ROLE] a line (ROLE client, oss or mds; "
            "default: the agent's own), # starts a comment.",
    .separator = '\0'};
inline constexpr FlagSpec kInsecureFlag = {
    .name = "insecure", .kind = FlagKind::kBool,
    .help = "plaintext gRPC to the agents; allowed only for loopback addresses"};
// How a run is recorded in the history database: every command that runs
// (`lockstep run` and the front ends).
inline constexpr std::array<FlagSpec, 4> kRecordFlags = {{
    {.name = "history", .kind = FlagKind::kBool, .default_value = "true",
     .help = "record the run in the history database"},
    {.name = "db", .value_name = "FILE",
     .help = "history database (default: OUT/history.db, OUT as given by --out)"},
    {.name = "site", .value_name = "NAME",
     .help = "site name recorded with the run, for comparing sites"},
    {.name = "tag", .kind = FlagKind::kList, .value_name = "TAG",
     .help = "tags recorded with the run."},
}};

// TLS to the agents: `lockstep run`, agents, io500 and dlio.
inline constexpr std::array<FlagSpec, 4> kRunTlsFlags = {{
    {.name = "tls_dir", .value_name = "DIR",
     .help = "directory made by `lockstep certs init` (or deploy/certs.sh): uses DIR/ca.pem, "
             "DIR/controller.pem and DIR/controller.key"},
    {.name = "tls_ca", .value_name = "FILE",
     .help = "CA certificate (PEM) the agents' certificates must chain to (overrides --tls_dir)"},
    {.name = "tls_cert", .value_name = "FILE",
     .help = "the controller's certificate (PEM) (overrides --tls_dir)"},
    {.name = "tls_key", .value_name = "FILE",
     .help = "the controller's private key (PEM) (overrides --tls_dir)"},
}};

// Where a command's agents come from (controller/cli/reach_agents.h).
inline constexpr std::array<FlagSpec, 6> kAgentSourceFlags = {{
    {.name = "agents", .kind = FlagKind::kList, .value_name = "HOST:PORT",
     .help = "the agents, instead of the plan's [[agent]] tables; each agent's role is its own "
             "(lockstep-agent --role)."},
    kHostfileFlag,
    {.name = "agents-from", .value_name = "DIR",
     .help = "the agents that announced themselves in DIR (lockstep-agent --announce DIR), "
             "with their roles; DIR must not be writable by other users"},
    {.name = "expect", .kind = FlagKind::kUint, .value_name = "N",
     .help = "with --agents-from: wait until N agents announced (default: every node of "
             "--expect_nodes, else at least one)",
     .max = 1000000},
    {.name = "expect_nodes", .kind = FlagKind::kList, .value_name = "NODE",
     .help = "with --agents-from: the nodes that must announce, e.g. from `scontrol show "
             "hostnames`; errors name those that did not, and refuse others."},
    {.name = "wait_ms", .kind = FlagKind::kUint, .value_name = "MS",
     .help = "with --agents-from: how long to wait for the announcements (default: the plan's "
             "connect_timeout_ms; 5000 for `lockstep agents`)",
     .max = 86400000},
}};

// Defined in command_specs_tools.cc.
extern const CommandSpec kIor;
extern const CommandSpec kMdtest;
extern const CommandSpec kIozone;
extern const CommandSpec kIo500;
extern const CommandSpec kDlio;

// Defined in command_specs_results.cc.
extern const CommandSpec kHistory;
extern const CommandSpec kImport;
extern const CommandSpec kExport;
extern const CommandSpec kCompare;
extern const CommandSpec kGate;
extern const CommandSpec kReport;
extern const CommandSpec kVerify;

}  // namespace lockstep::command_specs

#endif  // LOCKSTEP_CONTROLLER_CLI_COMMAND_SPECS_PARTS_H_
