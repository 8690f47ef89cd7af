// site.toml: what a site says of its system (issue 40), typed and with
// units, checked like a plan: an unknown key, a wrong type or unit, or a
// missing required key is refused naming the file, line, column and key.
//
//   site = "hlrs"                      # required; the name in the site's credential
//   system = "testbed-a"               # required
//   interconnect = "HDR InfiniBand"    # required
//   interconnect_speed = "200Gb/s"     # required; a number and b/s, Kb/s, Mb/s, Gb/s, Tb/s
//   storage_media = "NVMe"             # required
//   server_nodes = 4                   # required, >= 0
//   client_nodes = 16                  # required, >= 1
//   file_system = "Lustre 2.15.4"      # optional
//   notes = "..."                      # optional
//   [extra]                            # optional: the site's own keys, strings or numbers
//   rack = "B12"
#ifndef LOCKSTEP_CONTROLLER_RESULTS_SITE_FILE_H_
#define LOCKSTEP_CONTROLLER_RESULTS_SITE_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "lockstep/v1/bundle.pb.h"

namespace lockstep {

// Parses site.toml text; `origin` (the file) is named in every error.
// TOML++'s exceptions are caught here.
absl::StatusOr<v1::SiteDescription> ParseSiteToml(std::string_view text,
                                                  const std::string& origin);
absl::StatusOr<v1::SiteDescription> ReadSiteFile(const std::string& path);

// "200Gb/s" -> 200e9. Decimal prefixes (K, M, G, T; k too), "b/s" or
// "bit/s"; a bare number or "GB/s" (bytes) is refused saying which units.
absl::StatusOr<uint64_t> ParseBitRate(std::string_view text);
// 200000000000 -> "200Gb/s", 25e9 -> "25Gb/s", 1.5e9 -> "1.5Gb/s".
std::string FormatBitRate(uint64_t bits_per_s);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_SITE_FILE_H_
