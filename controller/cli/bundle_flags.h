// The flags of issue 40's commands that need no results service: `export
// --bundle`, `compare --sites` and `verify`. Kept apart from
// command_specs_results.cc (which includes this header and puts them in its
// table) so that the table stays within the size limit.
#ifndef LOCKSTEP_CONTROLLER_CLI_BUNDLE_FLAGS_H_
#define LOCKSTEP_CONTROLLER_CLI_BUNDLE_FLAGS_H_

#include <array>

#include "common/flags.h"

namespace lockstep {

inline constexpr std::array<FlagSpec, 6> kExportBundleFlags = {{
    {.name = "bundle", .kind = FlagKind::kBool,
     .help = "write RUN as a signed run bundle to FILE (the second argument; by convention "
             "NAME.lsbundle): run.json, plan, journal, summary, telemetry and the system "
             "description, addressed by their SHA-256 and signed with the site's key. Needs "
             "--key and --cert, or --credentials."},
    {.name = "key", .value_name = "FILE", .help = "--bundle: the site's private key (EC P-256)"},
    {.name = "cert", .value_name = "FILE",
     .help = "--bundle: the site's certificate (its Subject CN is the site's name)"},
    {.name = "credentials", .value_name = "DIR",
     .help = "--bundle: a directory holding the site's key and certificate (site-NAME.key and "
             ".pem, NAME.key and .pem, site.key and .pem, or the only such pair)"},
    {.name = "site", .value_name = "NAME",
     .help = "--bundle: the site the run is of (default: the certificate's CN; must be it)"},
    {.name = "site-file", .value_name = "FILE",
     .help = "--bundle: the site's site.toml (system, interconnect, storage media, node "
             "counts), put in the bundle's system description beside the agents' facts"},
}};

inline constexpr std::array<FlagSpec, 4> kCompareSitesFlags = {{
    {.name = "sites", .kind = FlagKind::kList, .value_name = "A,B,...",
     .help = "compare these sites' runs of --plan from the history db, one table per result "
             "(instead of naming runs)"},
    {.name = "plan", .value_name = "NAME|SHA256", .help = "--sites: the plan to compare"},
    {.name = "runs", .kind = FlagKind::kUint, .value_name = "N", .default_value = "1",
     .help = "--sites: pool each site's newest N complete runs of the plan", .min = 1,
     .max = 10000},
    {.name = "force", .kind = FlagKind::kBool,
     .help = "--sites: compare runs whose workloads differ (they are refused otherwise, saying "
             "how they differ)"},
}};

inline constexpr std::array<FlagSpec, 1> kVerifyFlags = {{
    {.name = "ca", .value_name = "FILE",
     .help = "the results service's CA certificate: also check that the signer's certificate "
             "was issued by it (without it the chain is not checked, and verify says so)"},
}};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_CLI_BUNDLE_FLAGS_H_
