// The command-table entries of the front ends that take another tool's
// input (`lockstep ior`, mdtest, iozone, io500, dlio): their Lockstep flags,
// usage and help, with the tool's own options in the notes. Part of the
// table command_specs.cc lists; command_specs_parts.h declares the
// CommandSpecs (the flag arrays, being constexpr, stay internal to this file).
#include <array>

#include "controller/cli/command_handlers.h"
#include "controller/cli/command_specs_parts.h"
#include "controller/dlio/dlio_config.h"
#include "controller/plan/limits.h"

namespace lockstep::command_specs {

// The help texts below name these bounds in words.
static_assert(kMaxLocalAgents == 256, "the front ends' --local help says 1 to 256");
static_assert(kDirectIoAlignBytes == 4096,
              "lockstep ior's notes say --posix.odirect needs -t a multiple of 4096");

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

}  // namespace lockstep::command_specs
