#include "controller/cli/command_specs.h"

#include "controller/cli/command_handlers.h"
#include "controller/cli/push_command.h"

#include <array>
#include <cstdio>
#include <string>

#include "controller/cli/bundle_flags.h"
#include "controller/cli/exit_codes.h"
#include "controller/dlio/dlio_config.h"
#include "controller/plan/limits.h"

namespace lockstep {
namespace {

// The help texts below name these bounds in words.
static_assert(kMaxLocalAgents == 256, "--local's help says 1 to 256");
static_assert(kDirectIoAlignBytes == 4096,
              "lockstep ior's notes say --posix.odirect needs -t a multiple of 4096");

template <size_t N, size_t M>
constexpr std::array<FlagSpec, N + M> Concat(const std::array<FlagSpec, N>& a,
                                             const std::array<FlagSpec, M>& b) {
  std::array<FlagSpec, N + M> out{};
  for (size_t i = 0; i < N; ++i) out[i] = a[i];
  for (size_t i = 0; i < M; ++i) out[N + i] = b[i];
  return out;
}

constexpr absl::string_view kRunRefs =
    "RUN (for report, compare, gate and export) is a run id recorded in the history db, a run "
    "directory <out>/<run-id>/ holding run.json, or a run.json file. `lockstep report` also "
    "takes a run directory with only journal.jsonl (a run whose controller died).";

// Flags several commands take with the same meaning and help.
constexpr FlagSpec kHostfileFlag = {
    .name = "hostfile", .kind = FlagKind::kList, .value_name = "FILE",
    .help = "read agents from FILE: one HOST:PORT [ROLE] a line (ROLE client, oss or mds; "
            "default: the agent's own), # starts a comment.",
    .separator = '\0'};
constexpr FlagSpec kInsecureFlag = {
    .name = "insecure", .kind = FlagKind::kBool,
    .help = "plaintext gRPC to the agents; allowed only for loopback addresses"};
// How a run is recorded in the history database: every command that runs
// (`lockstep run` and the front ends).
constexpr std::array<FlagSpec, 4> kRecordFlags = {{
    {.name = "history", .kind = FlagKind::kBool, .default_value = "true",
     .help = "record the run in the history database"},
    {.name = "db", .value_name = "FILE",
     .help = "history database (default: OUT/history.db, OUT as given by --out)"},
    {.name = "site", .value_name = "NAME",
     .help = "site name recorded with the run, for comparing sites"},
    {.name = "tag", .kind = FlagKind::kList, .value_name = "TAG",
     .help = "tags recorded with the run."},
}};

// ---- run -----------------------------------------------------------------------

constexpr std::array<FlagSpec, 4> kRunTlsFlags = {{
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
constexpr std::array<FlagSpec, 6> kAgentSourceFlags = {{
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

// ---- ior / mdtest: Lockstep's own long options -------------------------------------

constexpr auto kControllerFlags = Concat(std::array<FlagSpec, 8>{{
    {.name = "root", .kind = FlagKind::kList, .value_name = "DIR",
     .help = "with local agents: allow a system directory (/etc, /usr, /var/lib, /root, ...) "
             "for -o / -d; it is refused otherwise.",
     .separator = '\0'},
    {.name = "agents", .kind = FlagKind::kList, .value_name = "HOST:PORT",
     .help = "run on these agents instead of local ones."},
    kHostfileFlag,
    {.name = "local", .kind = FlagKind::kUint, .value_name = "N",
     .help = "run on N local agents (1 to 256; default: 2, or 1 when the task count is odd)",
     .min = 1, .max = kMaxLocalAgents},
    {.name = "tasks-per-agent", .kind = FlagKind::kUint, .value_name = "N",
     .help = "tasks on each agent (default 1, or the total spread evenly)", .min = 1,
     .max = kMaxAgentTasks},
    {.name = "out", .value_name = "DIR", .default_value = "./lockstep-results",
     .help = "results directory; each run gets DIR/<run-id>/"},
    {.name = "insecure", .kind = FlagKind::kBool,
     .help = "plaintext gRPC to --agents; allowed only for loopback addresses"},
    {.name = "tls_dir", .value_name = "DIR",
     .help = "directory made by `lockstep certs init`: uses DIR/ca.pem, DIR/controller.pem and "
             "DIR/controller.key"},
}}, kRecordFlags);

constexpr CommandSpec kIor = {
    .program = "lockstep",
    .name = "ior",
    .synopsis = "IOR-OPTIONS [--agents HOST:PORT,... | --hostfile FILE | --local N] [flags]",
    .summary = "run an unchanged IOR command line on local agents or on --agents",
    .description =
        "Translates IOR's own options into a plan and runs it on local agents (IOR's -o is a "
        "path on this host and becomes their root), or on --agents / --hostfile. IOR's -N "
        "(total tasks) is spread evenly over the agents. The output is IOR's; -O "
        "summaryFormat=JSON|CSV adds IOR's summary in that form. Options Lockstep does not "
        "support are refused by name with the reason, never ignored.",
    .flags = kControllerFlags,
    .notes =
        "IOR options, read as IOR 4.1's own parser reads them (clusters such as -wr and -z-k,\n"
        "values glued or separate or after '=', numbers as IOR's string_to_bytes: -d 0.1 is 0,\n"
        "and letters after a glued value are options too, as in IOR: -t1k is -t 1k -k):\n\n"
        "  -a POSIX    API (POSIX only)          -b SIZE   block per task (1m)\n"
        "  -t SIZE     transfer size (256k)      -s N      segments (1)\n"
        "  -o PATH     test file (testFile)      -i N      repetitions (1)\n"
        "  -N N        total tasks               -F        file per process\n"
        "  -w / -r     write / read (both)       -W        check the data after writing\n"
        "  -R          verify the data read      -e        fsync after the write\n"
        "  -Y          fsync after each transfer -C        read another agent's data\n"
        "  -z          random offsets            -k        keep the files\n"
        "  -g          intra-phase barriers      -D N      stonewall after N seconds\n"
        "  -d N        delay between phases (s)  -G N      data pattern seed\n"
        "  -Q N        -C's and -Z's task offset    -m        a file set per repetition\n"
        "  -Z, -X N    random task order for reads, and its seed\n"
        "  -v          IOR's -v lines            -A N      reference number (RefNum)\n"
        "  -O summaryFormat=JSON|CSV|default, summaryFile=PATH, stoneWallingWearOut=1,\n"
        "     and every other key of IOR's -O: those that stand for an option above\n"
        "     as that option, the rest refused by name\n"
        "  --posix.odirect   O_DIRECT (needs -t a multiple of 4096)\n\n"
        "-z twice reads random whole blocks (IOR 4.1's \"random (potentially overlapping)\",\n"
        "read phases only). Given twice, -Z and -v are refused (IOR's other modes), as are\n"
        "--posix.rangelocks,\n"
        "--posix.lustre.*, --randomPrefill, --random-offset-seed, --warningAsErrors, --dryRun;\n"
        "letters IOR 4.1 does not have (IOR 3's B, q, H ...) are refused as IOR refuses them.\n"
        "Refused with the reason: -c -E -u -x -T -l -f -j -M -y\n"
        "(-c is MPI-IO's; the others are not implemented). -K is accepted: the files of a\n"
        "failed verification (-R, -W) are always kept, and named.",
    .handler = IorHandler,
};

constexpr auto kMdtestFlags = Concat(
    std::array<FlagSpec, 1>{{
        {.name = "tasks", .kind = FlagKind::kUint, .value_name = "N",
         .help = "total tasks, as mpirun -np, spread evenly over the agents (default: one per "
                 "agent)",
         .min = 1, .max = kMaxTotalTasks},
    }},
    kControllerFlags);

constexpr CommandSpec kMdtest = {
    .program = "lockstep",
    .name = "mdtest",
    .synopsis = "MDTEST-OPTIONS [--tasks N] [--agents HOST:PORT,... | --hostfile FILE | "
                "--local N] [flags]",
    .summary = "run an unchanged mdtest command line on local agents or on --agents",
    .description =
        "Translates mdtest's own options into one plan phase per mdtest step (tree create, "
        "create, stat, read, remove, tree remove) and prints mdtest's SUMMARY rate table. "
        "Options Lockstep does not support are refused by name with the reason.",
    .flags = kMdtestFlags,
    .notes =
        "mdtest options understood:\n\n"
        "  -n N      items per task              -I N      items per directory\n"
        "  -b N      tree branching (1)          -z N      tree depth (0)\n"
        "  -u        a directory per task        -d DIR    test directory (.)\n"
        "  -i N      repetitions (1)             -a POSIX  API (POSIX only)\n"
        "  -w SIZE   bytes written per file      -e SIZE   bytes read per file\n"
        "  -F / -D   files / dirs only           -C -T -E -r  only create/stat/read/rm\n"
        "  -L        items in leaf dirs only     -N N      neighbour shift for stat/read\n"
        "  -P        rate and time tables        -t        accepted (no-op without MPI)\n"
        "  -U        directory rename alone      -W N      creates stop after N s\n"
        "  -X        verify what -E read         -Y        sync after each phase\n"
        "  -f -l -s  one run with all tasks only --dummy.* --mpiio.* --mmap.*  no effect\n\n"
        "Words and numbers are read as mdtest reads them (IOR's option.c): -F-C is -F -C,\n"
        "-n 1k is 1024 items, -w 1m 1 MiB (K M G T P, either case); mdtest's own refusals\n"
        "are given in its words. Refused with the long options --print-all-procs,\n"
        "--verify-write, --dataPacketType, --run-cmd-before-phase, --run-cmd-after-phase,\n"
        "--warningAsErrors, --saveRankPerformanceDetails, --savePerOpDataCSV,\n"
        "--showRankStatistics, --posix.odirect, --posix.rangelocks.\n"
        "Refused with the reason: -B -c -k -R -S -x -y -p -G -v -V.",
    .handler = MdtestHandler,
};

// ---- iozone --------------------------------------------------------------------

constexpr CommandSpec kIozone = {
    .program = "lockstep",
    .name = "iozone",
    .synopsis = "-i 0 [-i 1] [-i 2] -r SIZE -s SIZE -t N [-+m CLIENTFILE] [-F FILE...] "
                "[IOZONE-OPTIONS] [--local N | --agents HOST:PORT,...] [flags]",
    .summary = "run IOzone's throughput mode (-t N) on local agents, -+m's hosts or --agents",
    .description =
        "Translates IOzone's throughput-mode options into one plan (a phase per IOzone test) "
        "and prints IOzone's lines for each test: Children see, Parent sees, Min/Max/Avg "
        "throughput per process, Min xfer. The children are spread over the agents as IOzone "
        "spreads them over the lines of its -+m client file. Options Lockstep does not "
        "support are refused by name, never ignored.",
    .flags = kControllerFlags,
    .notes =
        "IOzone options understood (sizes: a bare number is kB; k, m, g suffixes):\n\n"
        "  -i 0        initial write and rewrite  -i 1      read and re-read\n"
        "  -i 2        random read, random write  -t N      children (required)\n"
        "  -r SIZE     record size (4k)           -s SIZE   file per child (512k)\n"
        "  -c          close in the timing        -e        fsync in the timing\n"
        "  -w          keep the files             -I        O_DIRECT\n"
        "  -T          threads (\"thread\" lines) -x        no stonewalling\n"
        "  -F FILE...  one name per child, after -t: the files, as named\n"
        "  -+m FILE    IOzone's client file: \"host workdir path_to_iozone\" a line,\n"
        "              one child a line; host = agent HOST[:PORT] (port 7070)\n"
        "  -+k         -s is the aggregate of all children (total_size)\n\n"
        "Every other IOzone option is refused by name with the reason.",
    .handler = IozoneHandler,
};

// ---- io500 ---------------------------------------------------------------------

constexpr auto kIo500Flags = Concat(Concat(Concat(
    std::array<FlagSpec, 6>{{
        {.name = "root", .kind = FlagKind::kList, .value_name = "DIR",
         .help = "allow a system directory (/etc, /usr, /var/lib, /root, ...) as the ini's "
                 "datadir (local agents) or resultdir; refused otherwise.",
         .separator = '\0'},
        {.name = "local", .kind = FlagKind::kUint, .value_name = "N", .default_value = "0",
         .help = "run on N local agents (1 to 256) whose root is the ini's datadir; 0: 2 local "
                 "agents unless --agents, --hostfile or --agents-from name agents",
         .min = 0, .max = kMaxLocalAgents},
        {.name = "tasks-per-agent", .kind = FlagKind::kUint, .value_name = "T",
         .default_value = "1", .help = "tasks on each agent (IO500's processes per node)",
         .min = 1, .max = kMaxAgentTasks},
        {.name = "stonewall-s", .kind = FlagKind::kUint, .value_name = "S",
         .help = "the stonewall in seconds instead of the ini's [debug] stonewall-time; other "
                 "than 300 marks the run [INVALID], as IO500 does",
         .min = 1, .max = kMaxStonewallSeconds},
        {.name = "out", .value_name = "DIR", .default_value = "./lockstep-results",
         .help = "Lockstep's results directory (run.json, history); IO500's files go to the "
                 "ini's resultdir"},
        kInsecureFlag,
    }},
    kRecordFlags), kRunTlsFlags), kAgentSourceFlags);

constexpr CommandSpec kIo500 = {
    .program = "lockstep",
    .name = "io500",
    .synopsis = "CONFIG.ini [--local N | --agents H:P,... | --hostfile F | --agents-from DIR] "
                "[--tasks-per-agent T] [--stonewall-s S] [--out DIR] [flags]",
    .summary = "run IO500's phases and score from IO500's ini, without MPI",
    .description =
        "Reads IO500's configuration file (its sections and keys; unknown ones are refused "
        "with the line) and runs IO500's standard phases in IO500's order with IO500's "
        "parameters as one plan: ior-easy-write, mdtest-easy-write, timestamp, ior-hard-write, "
        "mdtest-hard-write, find, ior-easy-read, mdtest-easy-stat, ior-hard-read, "
        "mdtest-hard-stat, mdtest-easy-delete, mdtest-hard-read, mdtest-hard-delete and the "
        "unscored ior-rnd4K-easy-read. Writes IO500's files (result_summary.txt, result.txt, "
        "config-orig.ini, config.ini, <phase>.txt) to <resultdir>/<YYYY.MM.DD-HH.MM.SS>/, and "
        "Lockstep's run.json and history entry (one result per phase) to OUT.\n\n"
        "The phases run under Lockstep without MPI: the output is IO500-compatible, not an "
        "official IO500 list submission. A stonewall other than 300 s ([debug] stonewall-time "
        "or --stonewall-s) and a phase with run = FALSE mark the run [INVALID], as IO500 "
        "does. The data directory must be empty or missing (IO500 does not reuse one); "
        "with drop-caches = TRUE the agents drop their caches before every phase (clients, "
        "and OSS/MDS agents when there are any); drop-caches-cmd is never run. A failed phase "
        "stops the run; what was measured is written.",
    .flags = kIo500Flags,
    .notes = "Sample: deploy/io500/ci.ini (10-second stonewall, small counts) runs in under "
             "3 minutes on 2 local agents.",
    .handler = Io500Handler,
};

// ---- dlio ----------------------------------------------------------------------

constexpr auto kDlioFlags = Concat(Concat(Concat(
    std::array<FlagSpec, 10>{{
        {.name = "root", .kind = FlagKind::kList, .value_name = "DIR",
         .help = "with local agents: allow a system directory as the data or checkpoint folder.",
         .separator = '\0'},
        {.name = "local", .kind = FlagKind::kUint, .value_name = "N", .default_value = "0",
         .help = "run on N local agents (1 to 256); 0: 2 local agents unless --agents, "
                 "--hostfile or --agents-from name agents",
         .min = 0, .max = kMaxLocalAgents},
        {.name = "data-dir", .value_name = "DIR",
         .help = "the dataset's directory instead of dataset.data_folder"},
        {.name = "accelerators", .kind = FlagKind::kUint, .value_name = "N",
         .default_value = "1",
         .help = "simulated accelerators (train) and ranks (checkpoint) per host: DLIO's MPI "
                 "processes per node",
         .min = 1, .max = kMaxAgentTasks},
        {.name = "smoke", .kind = FlagKind::kBool,
         .help = "shrink to a few seconds on a small machine: at most 8 files of 2 samples of "
                 "2 MiB, 1 epoch, 10 ms compute, 2 read threads, batches that fit, 2 "
                 "checkpoints of 4 MiB per rank; each change is printed"},
        {.name = "find-max-accelerators", .kind = FlagKind::kBool,
         .help = "run the train phase with more accelerators per host (doubling from "
                 "--accelerators, then bisecting) and report the most whose AU stays at or "
                 "above metric.au"},
        {.name = "accelerator-counts", .kind = FlagKind::kList, .value_name = "N",
         .help = "with --find-max-accelerators: the counts to try, in order, instead of "
                 "doubling and bisecting"},
        {.name = "max-accelerators", .kind = FlagKind::kUint, .value_name = "N",
         .default_value = "64",
         .help = "with --find-max-accelerators: never try more per host than N",
         .min = 1, .max = kMaxAgentTasks},
        {.name = "out", .value_name = "DIR", .default_value = "./lockstep-results",
         .help = "results directory (one run directory per run)"},
        kInsecureFlag,
    }},
    kRecordFlags), kRunTlsFlags), kAgentSourceFlags);

constexpr CommandSpec kDlio = {
    .program = "lockstep",
    .name = "dlio",
    .synopsis = "CONFIG.yaml [++workload.SECTION.KEY=VALUE ...] [--local N | --agents H:P,... | "
                "--hostfile F] [--accelerators N] [--data-dir DIR] [--smoke] "
                "[--find-max-accelerators] [flags]",
    .summary = "run DLIO's (MLPerf Storage's) workload YAML: datagen, train, checkpoint",
    .description =
        "Reads a DLIO workload configuration (dlio_benchmark's configs/workload/*.yaml, MLPerf "
        "Storage's configs/dlio/workload/*.yaml) and runs it as one Lockstep plan: a datagen "
        "phase when workflow.generate_data, a train phase when workflow.train (each task one "
        "simulated accelerator), checkpoint write and read phases when workflow.checkpoint. "
        "Prints DLIO's per-epoch AU and [METRIC] lines after Lockstep's own. DLIO's Hydra "
        "overrides (++workload.dataset.data_folder=DIR) are applied after the file. Unknown "
        "sections and keys, and formats Lockstep does not write, are refused with FILE:LINE. "
        "Shipped configs: deploy/plans/dlio/*.yaml.",
    .flags = kDlioFlags,
    .notes = kDlioHonouredKeys,
    .handler = DlioHandler,
};

// ---- results -------------------------------------------------------------------

constexpr FlagSpec kDbFlag = {
    .name = "db", .value_name = "FILE", .default_value = "lockstep-results/history.db",
    .help = "history database"};

constexpr std::array<FlagSpec, 5> kOutputFlags = {{
    {.name = "html", .value_name = "FILE",
     .help = "write an HTML report (bandwidth and scaling plots, per-run details)"},
    {.name = "csv", .value_name = "FILE", .help = "write the results as CSV, one row per result"},
    {.name = "openmetrics", .value_name = "FILE",
     .help = "write the results in the OpenMetrics text format"},
    {.name = "influx", .value_name = "FILE",
     .help = "write the results as InfluxDB line protocol"},
    {.name = "title", .value_name = "TEXT", .help = "title of the HTML report"},
}};

constexpr auto kRunsFlags = Concat(std::array<FlagSpec, 1>{kDbFlag}, kOutputFlags);
constexpr auto kExportFlags = Concat(kRunsFlags, kExportBundleFlags);
constexpr auto kCompareFlags = Concat(kRunsFlags, kCompareSitesFlags);

constexpr std::array<FlagSpec, 8> kHistoryFlags = {{
    kDbFlag,
    {.name = "plan", .value_name = "NAME|SHA256",
     .help = "only runs of this plan: its name, or its sha256 (a prefix of 6 or more hex "
             "digits)"},
    {.name = "site", .value_name = "NAME", .help = "only runs recorded with this site"},
    {.name = "tag", .value_name = "TAG", .help = "only runs with this tag"},
    {.name = "since", .value_name = "DATE",
     .help = "only runs started at or after DATE (2026-01-31 or RFC 3339)"},
    {.name = "until", .value_name = "DATE",
     .help = "only runs started at or before DATE (a date includes the whole day)"},
    {.name = "status", .value_name = "STATUS",
     .help = "only runs with this status: complete, partial, failed or interrupted"},
    {.name = "limit", .kind = FlagKind::kUint, .value_name = "N", .default_value = "50",
     .help = "at most N runs, newest first; 0: all", .min = 0, .max = 1'000'000'000},
}};

constexpr CommandSpec kHistory = {
    .program = "lockstep",
    .name = "history",
    .synopsis = "[--db FILE] [--plan NAME|SHA256] [--site S] [--tag T] [--since DATE] "
                "[--until DATE] [--status S] [--limit N]",
    .summary = "list the runs recorded in the history database",
    .description = "Lists recorded runs, newest first: start time, run id, name, plan, site, "
                   "status, number of results and tags.",
    .flags = kHistoryFlags,
    .handler = HistoryHandler,
};

constexpr std::array<FlagSpec, 3> kImportFlags = {{
    {.name = "db", .value_name = "FILE", .default_value = "lockstep-results/history.db",
     .help = "history database (created when missing)"},
    {.name = "site", .value_name = "NAME", .help = "site name recorded with the runs"},
    {.name = "tag", .kind = FlagKind::kList, .value_name = "TAG",
     .help = "tags recorded with the runs."},
}};

constexpr CommandSpec kImport = {
    .program = "lockstep",
    .name = "import",
    .synopsis = "[--db FILE] [--site NAME] [--tag TAG]... RUN.json...",
    .summary = "record run.json files (from another site or an old run) in the history",
    .description = "Checks every file before recording any, so a bad file leaves the database "
                   "unchanged. Re-importing a run replaces it.",
    .flags = kImportFlags,
    .handler = ImportHandler,
};

constexpr CommandSpec kExport = {
    .program = "lockstep",
    .name = "export",
    .synopsis = "[--db FILE] RUN [OUT.json|-] [--csv F] [--openmetrics F] [--influx F] "
                "[--html F]\n"
                "--bundle RUN FILE.lsbundle (--key F --cert F | --credentials DIR) [--site-file F]",
    .summary = "write a run's run.json (stdout with -), its results in other formats, or a "
               "signed run bundle",
    .description =
        "Writes the run.json of RUN to OUT.json (atomically), or to stdout with - or when "
        "neither OUT.json nor another output is given.\n\n"
        "With --bundle, writes RUN as one signed run bundle (the air-gapped way to a results "
        "service: `lockstep push FILE` there; anyone checks it with `lockstep verify FILE`).\n\n"
        "RUN is a run id recorded in the history db, a run directory holding run.json, or a "
        "run.json file.",
    .flags = kExportFlags,
    .handler = ExportHandler,
};

constexpr CommandSpec kCompare = {
    .program = "lockstep",
    .name = "compare",
    .synopsis = "[--db FILE] RUN[,RUN...] RUN[,RUN...] [RUN[,RUN...]...] [--csv F] [--html F]\n"
                "[--db FILE] --sites A,B[,C...] --plan NAME [--runs N] [--force]",
    .summary = "compare runs result by result (medians, Welch's t-test on the repetitions)",
    .description =
        "With two sides: every result of one against the same result of the other (the same "
        "phase, operation, shape and sweep point), with the median and min..max of each, the "
        "change of the medians, Welch's t-test over the repetitions and what differs between "
        "the runs (kernel, versions, file system). With more: a matrix of medians.\n\n"
        "A side is one RUN or several joined by commas (RUN1,RUN2,RUN3: several runs of one "
        "plan): its values are every repetition of every run in it, the \"median of several "
        "runs\".\n\n"
        "With --sites: each site's newest complete run (--runs N: N runs pooled) of --plan, "
        "one table per result with each site's median, spread, repetitions, client count and "
        "the figure per client node and per server, then the systems side by side, "
        "differences first. Runs whose workloads differ (the workload hash over phase kinds, "
        "sizes, counts, patterns, cache barriers, sweep points, tasks and clients) are refused "
        "unless --force, saying how they differ.\n\n"
        "RUN is a run id recorded in the history db, a run directory holding run.json, or a "
        "run.json file.",
    .flags = kCompareFlags,
    .handler = CompareHandler,
};

constexpr std::array<FlagSpec, 5> kGateFlags = {{
    kDbFlag,
    {.name = "baseline", .value_name = "RUN|last-good", .default_value = "last-good",
     .help = "the run to compare with; last-good: the newest complete run of the same plan "
             "in the db"},
    {.name = "max-drop", .kind = FlagKind::kList, .value_name = "PCT|METRIC=PCT",
     .help = "the largest bandwidth drop that passes, as 5% or 5; METRIC=PCT (an operation, a "
             "phase name or an AI figure, e.g. write=10%, au=2%, "
             "checkpoint_write_min_mib_per_s=10%) overrides it for one metric (default 5%)."},
    {.name = "junit", .value_name = "FILE", .help = "also write the verdicts as JUnit XML"},
    {.name = "noise-window", .value_name = "N",
     .help = "also excuse a drop within the run-to-run spread of the N complete runs of the "
             "plan recorded just before the baseline (never one with p < 0.01); default: the "
             "baseline's repetitions alone"},
}};

constexpr CommandSpec kGate = {
    .program = "lockstep",
    .name = "gate",
    .synopsis = "[--db FILE] RUN [--baseline RUN|last-good] [--max-drop 5%]... [--noise-window N] "
                "[--junit FILE]",
    .summary = "pass or fail a run against a baseline, for CI",
    .description =
        "Fails a result whose bandwidth dropped by more than --max-drop, significantly by "
        "Welch's t-test over RUN's and the baseline's repetitions; so too each AI figure of a "
        "train or checkpoint result (au, au_min, au_host_min, samples_per_s, "
        "checkpoint_{write,read}_{min_mib_per_s,aggregate_mib_per_s,max_duration_s}: a "
        "duration fails when it rises) and the efficiency of a write or read measured beside "
        "net and backend phases (end to end / min(network, back end)), and a train result "
        "whose AU fell below its threshold where the baseline's did not. The verdict depends "
        "on RUN, "
        "the baseline and, with --noise-window, runs recorded before the baseline only.\n\n"
        "RUN and --baseline are run ids recorded in the history db, run directories holding "
        "run.json, or run.json files.",
    .flags = kGateFlags,
    .notes = "exit status: 0 pass, 1 regression, 2 bad input, 3 no baseline found.",
    .handler = GateHandler,
};

constexpr CommandSpec kReport = {
    .program = "lockstep",
    .name = "report",
    .synopsis = "[--db FILE] RUN... [--html F] [--csv F] [--openmetrics F] [--influx F] "
                "[--title T]",
    .summary = "print runs' summaries again, or write HTML, CSV, OpenMetrics, Influx reports",
    .description =
        "Without an output flag, prints the summary of each RUN again. A run directory whose "
        "controller died before writing run.json is rebuilt from its journal.jsonl (and "
        "run.json and summary.txt are written, with the status the run gave, from the "
        "journal's last line, or interrupted when the run did not reach its end). A run "
        "still going (its controller holds journal.jsonl) is printed as its journal so far, "
        "with status running, and nothing is written into it. With --html, --csv, "
        "--openmetrics or --influx, writes those files for all the runs together.\n\n"
        "RUN is a run id recorded in the history db, a run directory (holding run.json, or "
        "only journal.jsonl), or a run.json file.",
    .flags = kRunsFlags,
    .handler = ReportHandler,
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

constexpr CommandSpec kVerify = {
    .program = "lockstep",
    .name = "verify",
    .synopsis = "BUNDLE [--ca CA.pem]",
    .summary = "check a run bundle's hash, signature, certificate and site",
    .description =
        "Checks that BUNDLE (a file `lockstep export --bundle` wrote) is what its site signed: "
        "the SHA-256 of its content, the signature with the signer's certificate, with --ca "
        "that certificate's chain to the results service's CA, and that the run's site is the "
        "certificate's. Prints the run, site and workload when all hold; otherwise names the "
        "check that failed and exits 6.",
    .flags = kVerifyFlags,
    .handler = VerifyHandler,
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

constexpr const CommandSpec* kCommands[] = {&kRun,     &kIor,     &kMdtest, &kIozone, &kIo500, &kDlio,
                                            &kAgents,  &kCheck,   &kHistory, &kImport,
                                            &kExport,  &kCompare, &kGate,    &kReport,
                                            &kVerify,  &kPushCommandSpec, &kCerts, &kHelp};

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

const CommandSpec& RunCommandSpec() { return kRun; }
const CommandSpec& IorCommandSpec() { return kIor; }
const CommandSpec& MdtestCommandSpec() { return kMdtest; }
const CommandSpec& IozoneCommandSpec() { return kIozone; }
const CommandSpec& Io500CommandSpec() { return kIo500; }
const CommandSpec& DlioCommandSpec() { return kDlio; }
const CommandSpec& HistoryCommandSpec() { return kHistory; }
const CommandSpec& ImportCommandSpec() { return kImport; }
const CommandSpec& ExportCommandSpec() { return kExport; }
const CommandSpec& CompareCommandSpec() { return kCompare; }
const CommandSpec& GateCommandSpec() { return kGate; }
const CommandSpec& ReportCommandSpec() { return kReport; }
const CommandSpec& VerifyCommandSpec() { return kVerify; }
const CommandSpec& CertsCommandSpec() { return kCerts; }
const CommandSpec& AgentsCommandSpec() { return kAgents; }
const CommandSpec& CheckCommandSpec() { return kCheck; }
const CommandSpec& HelpCommandSpec() { return kHelp; }

std::span<const CommandSpec* const> LockstepCommands() { return kCommands; }

const CommandSpec* FindLockstepCommand(absl::string_view name) {
  for (const CommandSpec* c : kCommands) {
    if (c->name == name) return c;
  }
  return nullptr;
}

const ProgramSpec& LockstepProgram() { return kProgram; }

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
