// The table of `lockstep`'s subcommands (command_specs.h): `lockstep run`,
// agents, check, certs and help here, with kCommands (the order help lists
// them) and the program's man page; the front ends' entries are in
// command_specs_tools.cc, the results commands' in command_specs_results.cc,
// the flag groups they share in command_specs_parts.h.
#include "controller/cli/command_specs.h"

#include "controller/cli/command_handlers.h"
#include "controller/cli/push_command.h"

#include <array>
#include <cstdio>
#include <string>

#include "controller/cli/command_specs_parts.h"
#include "controller/cli/exit_codes.h"
#include "controller/plan/limits.h"

namespace lockstep {
namespace command_specs {
namespace {

// The help texts below name this bound in words.
static_assert(kMaxLocalAgents == 256, "--local's help says 1 to 256");

constexpr absl::string_view kRunRefs =
    "RUN (for report, compare, gate and export) is a run id recorded in the history db, a run "
    "directory <out>/<run-id>/ holding run.json, or a run.json file. `lockstep report` also "
    "takes a run directory with only journal.jsonl (a run whose controller died).";

// ---- run -----------------------------------------------------------------------

constexpr auto kRunFlags = Concat(Concat(Concat(Concat(Concat(
    std::array<FlagSpec, 6>{{
        {.name = "root", .kind = FlagKind::kList, .value_name = "DIR",
         .help = "with local agents: the plan may also write below DIR (needed for a directory "
                 "outside the working directory, --local_root, /tmp and /dev/shm, and for a "
                 "system directory such as /etc or /var/lib).",
         .separator = '\0'},
        {.name = "local", .kind = FlagKind::kUint, .value_name = "N", .default_value = "0",
         .help = "start N agents (1 to 256) on loopback, in plaintext, instead of the plan's "
                 "[[agent]] tables; 0: the plan's agents",
         .min = 0, .max = kMaxLocalAgents},
        {.name = "local_root", .value_name = "DIR",
         .help = "with --local: the root of the plan's relative directories (default: a new "
                 "directory under /tmp, removed afterwards); its absolute directories are "
                 "roots too"},
        {.name = "out", .value_name = "DIR", .default_value = "./lockstep-results",
         .help = "results directory; each run gets DIR/<run-id>/"},
        kInsecureFlag,
        {.name = "force", .kind = FlagKind::kBool,
         .help = "run even where an agent has less free space than its share of a write phase"},
    }},
    kRecordFlags), std::array<FlagSpec, 4>{{
        {.name = "smoke", .kind = FlagKind::kBool,
         .help = "a smoke run: every block and size capped at 16 MiB, at most 8 tasks per agent "
                 "and 200 items per task, stonewalls at 2 s, one repetition; on directories not "
                 "on Lustre the Lustre settings are left out. The header lists every change"},
        {.name = "dry-run", .kind = FlagKind::kBool,
         .help = "print what the plan would run (tests, phases, agents, tasks, bytes per agent "
                 "and in all, files, estimated duration) and exit; no agent is contacted"},
        {.name = "rate_mib_s", .kind = FlagKind::kUint, .value_name = "MIB_S",
         .default_value = "1000", .help = "with --dry-run: the data rate of the estimate",
         .min = 1, .max = 100000000},
        {.name = "rate_ops_s", .kind = FlagKind::kUint, .value_name = "OPS",
         .default_value = "10000",
         .help = "with --dry-run: the metadata rate (mdtest, small files) of the estimate",
         .min = 1, .max = 1000000000},
    }}),
    kRunTlsFlags), kAgentSourceFlags), kRunPushFlags);

constexpr CommandSpec kRun = {
    .program = "lockstep",
    .name = "run",
    .synopsis = "[--local N | --agents H:P,... | --hostfile F | --agents-from DIR [--expect N]] "
                "[--out DIR] [--insecure | --tls_dir DIR] [flags] PLAN.toml",
    .summary = "run a TOML plan on its agents (or on N local agents), phase by phase",
    .description =
        "Runs PLAN.toml on the agents its [[agent]] tables list (or on N local agents) and "
        "prints IOR-style results: the per-iteration table, the summary and the Max lines, "
        "with start skew, latency percentiles and telemetry. Writes "
        "OUT/<run-id>/{plan.toml,journal.jsonl,run.json,summary.txt} and records the run in "
        "the history database.\n\n"
        "Without --insecure, the TLS files come from --tls_dir or --tls_ca/--tls_cert/--tls_key.\n\n"
        "A plan without [[agent]] tables runs on the agents of --agents, --hostfile or "
        "--agents-from (agents that announced themselves, as in a Slurm job: "
        "deploy/slurm/lockstep.sbatch), else on local ones.",
    .flags = kRunFlags,
    .handler = RunCommand,
};

// ---- agents / check ------------------------------------------------------------

constexpr auto kAgentsFlags = Concat(Concat(kAgentSourceFlags, kRunTlsFlags),
    std::array<FlagSpec, 2>{{
        kInsecureFlag,
        {.name = "timeout_ms", .kind = FlagKind::kUint, .value_name = "MS",
         .default_value = "5000", .help = "how long to wait for each agent to answer", .min = 1,
         .max = 3600000},
    }});

constexpr CommandSpec kAgents = {
    .program = "lockstep",
    .name = "agents",
    .synopsis = "(--agents H:P,... | --hostfile F | --agents-from DIR [--expect N]) "
                "[--tls_dir DIR | --insecure]",
    .summary = "list the agents a run would use: role, version, host facts, clock offset",
    .description =
        "Asks every agent who it is, without taking it for a run (a dry check before a long "
        "run): one line per agent with its address, node, role, Lockstep and wire version, "
        "host, cores, memory, roots with their file system and free space, whether it can "
        "drop caches, its clock offset from this host (best of 5 round trips, with the "
        "uncertainty) and when its certificate expires. Agents that do not answer are listed "
        "with the reason.",
    .flags = kAgentsFlags,
    .notes = "exit status: 0 every agent answered, 2 bad flags, 3 an agent did not answer or "
             "refused us.",
    .handler = AgentsHandler,
};

constexpr std::array<FlagSpec, 1> kCheckFlags = {{
    {.name = "dirs", .kind = FlagKind::kBool,
     .help = "print only the plan's phase directories, one a line (absolute ones; a relative "
             "one is an error), e.g. for an agent's --root"},
}};

constexpr CommandSpec kCheck = {
    .program = "lockstep",
    .name = "check",
    .synopsis = "[--dirs] PLAN.toml",
    .summary = "check a plan without running it",
    .description =
        "Parses and checks PLAN.toml as `lockstep run` would and prints its tests, phases and "
        "directories; exit status 2 with the file, line and key when it is wrong.",
    .flags = kCheckFlags,
    .handler = CheckHandler,
};

// ---- certs -----------------------------------------------------------------------

constexpr std::array<FlagSpec, 6> kCertsFlags = {{
    {.name = "dir", .value_name = "DIR", .help = "where the CA and certificates are (required)"},
    {.name = "hostfile", .value_name = "FILE",
     .help = "an agent certificate for every line of FILE: \"NAME [SAN...]\" (names and "
             "addresses separated by blanks or commas; the first is the certificate's name) or "
             "a hostfile's \"HOST:PORT\"; '#' starts a comment"},
    {.name = "agent", .kind = FlagKind::kList, .value_name = "NAME[,SAN...]",
     .help = "an agent certificate, agent-NAME.pem/.key, naming NAME and every SAN: list each "
             "host name and IP address the controller dials it by, e.g. --agent "
             "node7,node7.ib,10.0.0.7.",
     .separator = '\0'},
    {.name = "controller", .value_name = "NAME", .default_value = "controller",
     .help = "the name (CN) of the controller certificate; agents allow it with --tls_allow"},
    {.name = "days", .kind = FlagKind::kUint, .value_name = "N", .default_value = "365",
     .help = "validity in days", .min = 1, .max = 36500},
    {.name = "force", .kind = FlagKind::kBool,
     .help = "replace existing files (a new CA invalidates every certificate the old one "
             "issued)"},
}};

constexpr CommandSpec kCerts = {
    .program = "lockstep",
    .name = "certs",
    .synopsis = "init --dir DIR [--agent NAME[,SAN...]]... [--hostfile FILE] [--controller NAME] "
                "[--days N] [--force]\n"
                "issue --dir DIR [--agent NAME[,SAN...]]... [--hostfile FILE] [--controller NAME] "
                "[--days N] [--force]",
    .summary = "make the private CA and the certificates for mutual TLS",
    .description =
        "init makes a private CA and certificates for mutual TLS between controller and "
        "agents; issue adds certificates signed by the existing CA in DIR (e.g. for a new "
        "agent, or the controller's with --controller). Both refuse to replace a file unless "
        "--force, and print the flags to give the agents and the controller.\n\n"
        "  DIR/ca.pem, DIR/ca.key                  the CA (keep ca.key on this host only)\n"
        "  DIR/controller.pem, DIR/controller.key  the controller's certificate\n"
        "  DIR/agent-NAME.pem, DIR/agent-NAME.key  one per --agent",
    .flags = kCertsFlags,
    .handler = CertsHandler,
};

// ---- help ------------------------------------------------------------------------

constexpr std::array<FlagSpec, 2> kHelpFlags = {{
    {.name = "man", .kind = FlagKind::kBool,
     .help = "print the man page lockstep.1 (roff) instead", .hidden = true},
    {.name = "bash-completion", .kind = FlagKind::kBool,
     .help = "print the bash completion script (the build installs it) instead",
     .hidden = true},
}};

constexpr CommandSpec kHelp = {
    .program = "lockstep",
    .name = "help",
    .synopsis = "[COMMAND]",
    .summary = "show the commands, or one command's flags with their defaults",
    .description = "Without COMMAND, lists the commands, the exit status and how runs are "
                   "named. `lockstep COMMAND --help` is the same as `lockstep help COMMAND`.",
    .flags = kHelpFlags,
    .handler = HelpCommand,
};

constexpr const CommandSpec* kCommands[] = {
    &kRun,    &kIor,    &kMdtest,  &kIozone, &kIo500,   &kDlio,
    &kAgents, &kCheck,  &kHistory, &kImport, &kExport,  &kCompare,
    &kGate,   &kReport, &kVerify,  &kPushCommandSpec,   &kCerts, &kHelp};

constexpr ManSection kSections[] = {
    {.title = "Run references", .text = kRunRefs},
    {.title = "Exit status",
     .text = "  0    success\n"
             "  1    other failure (results could not be written, ...)\n"
             "  2    bad command line or plan; a directory outside an agent's roots or missing\n"
             "  3    an agent did not answer, refused us (busy, TLS), or a clock bound failed\n"
             "  4    an agent was lost (silent beyond its lease, restarted, or died)\n"
             "  5    an I/O error in a task (ENOSPC, EIO, missing or short files, ...)\n"
             "  6    data verification found a difference; verify: a bundle check failed\n"
             "  7    start skew beyond max_start_skew_us with on_skew = \"fail\"\n"
             "  8    an agent and the controller speak wire protocols that cannot work together\n"
             "  130  interrupted (SIGINT/SIGTERM): the phase is aborted on all agents\n\n"
             "lockstep gate: 0 pass, 1 regression, 2 bad input, 3 no baseline."},
    {.title = "See also", .text = "lockstep-agent(8); README.md in the source tree."},
};

constexpr ProgramSpec kProgram = {
    .name = "lockstep",
    .man_section = 1,
    .summary = "benchmark parallel file systems from many nodes at once, in lockstep",
    .description =
        "lockstep reads a TOML plan (or an IOR or mdtest command line) and drives "
        "lockstep-agent daemons on client and server nodes over gRPC with mutual TLS, phase "
        "by phase: prepare, drop caches, one start instant for every task, collect. It prints "
        "IOR-compatible results with start skew, latency percentiles and server telemetry, "
        "and keeps every run in a history database to compare and gate.\n\n"
        "`lockstep help COMMAND` or `lockstep COMMAND --help` shows a command's flags with "
        "their defaults. `lockstep --version` prints the release, the wire protocol version "
        "and the commit the binary was built from.",
    .commands = kCommands,
    .sections = kSections,
};

}  // namespace
}  // namespace command_specs

const CommandSpec& RunCommandSpec() { return command_specs::kRun; }
const CommandSpec& IorCommandSpec() { return command_specs::kIor; }
const CommandSpec& MdtestCommandSpec() { return command_specs::kMdtest; }
const CommandSpec& IozoneCommandSpec() { return command_specs::kIozone; }
const CommandSpec& Io500CommandSpec() { return command_specs::kIo500; }
const CommandSpec& DlioCommandSpec() { return command_specs::kDlio; }
const CommandSpec& HistoryCommandSpec() { return command_specs::kHistory; }
const CommandSpec& ImportCommandSpec() { return command_specs::kImport; }
const CommandSpec& ExportCommandSpec() { return command_specs::kExport; }
const CommandSpec& CompareCommandSpec() { return command_specs::kCompare; }
const CommandSpec& GateCommandSpec() { return command_specs::kGate; }
const CommandSpec& ReportCommandSpec() { return command_specs::kReport; }
const CommandSpec& VerifyCommandSpec() { return command_specs::kVerify; }
const CommandSpec& CertsCommandSpec() { return command_specs::kCerts; }
const CommandSpec& AgentsCommandSpec() { return command_specs::kAgents; }
const CommandSpec& CheckCommandSpec() { return command_specs::kCheck; }
const CommandSpec& HelpCommandSpec() { return command_specs::kHelp; }

std::span<const CommandSpec* const> LockstepCommands() { return command_specs::kCommands; }

const CommandSpec* FindLockstepCommand(absl::string_view name) {
  for (const CommandSpec* c : command_specs::kCommands) {
    if (c->name == name) return c;
  }
  return nullptr;
}

const ProgramSpec& LockstepProgram() { return command_specs::kProgram; }

std::optional<int> HelpOrUsageExit(const CommandSpec& command,
                                   const absl::StatusOr<ParsedFlags>& parsed) {
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s: %s\n%s", command.FullName().c_str(),
                 std::string(parsed.status().message()).c_str(), FormatUsage(command).c_str());
    return kExitUsage;
  }
  if (parsed->help()) {
    std::fputs(FormatCommandHelp(command).c_str(), stdout);
    return kExitOk;
  }
  return std::nullopt;
}

}  // namespace lockstep
