// The command-table entries of the commands that work from recorded runs:
// `lockstep history`, import, export, compare, gate, report and verify (a
// run bundle). Part of the table command_specs.cc lists;
// command_specs_parts.h declares the CommandSpecs (the flag arrays, being
// constexpr, stay internal to this file).
#include <array>

#include "controller/cli/bundle_flags.h"
#include "controller/cli/command_handlers.h"
#include "controller/cli/command_specs_parts.h"

namespace lockstep::command_specs {

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

constexpr std::array<FlagSpec, 6> kGateFlags = {{
    kDbFlag,
    {.name = "baseline", .value_name = "RUN|last-good", .default_value = "last-good",
     .help = "the run to compare with; last-good: the newest complete run of the same plan "
             "and site in the db"},
    {.name = "site", .value_name = "NAME",
     .help = "the site whose runs may be last-good and the noise window (default: the site RUN "
             "was recorded with; with --db https://..., the credential's site; else any)"},
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

// ---- verify --------------------------------------------------------------------

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

}  // namespace lockstep::command_specs
