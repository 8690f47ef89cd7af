// A run's SystemDescription (bundle.proto): the site file plus the facts
// every agent reported (HostFacts: CPU, memory, NICs, block devices, file
// systems and their versions, server daemons), and how two or more of them
// are shown side by side, differences first (compare, the service's pages).
#ifndef LOCKSTEP_CONTROLLER_RESULTS_SYSTEM_DESCRIPTION_H_
#define LOCKSTEP_CONTROLLER_RESULTS_SYSTEM_DESCRIPTION_H_

#include <string>
#include <vector>

#include "lockstep/v1/bundle.pb.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// `site` plus the HostFacts of every agent of `run` (clients and servers).
v1::SystemDescription DescribeSystem(const v1::RunRecord& run, const v1::SiteDescription& site);

// One property over the systems: its name ("client cpu model", "site
// interconnect"), one value per system ("" when it did not say), and whether
// the values differ. Values over several hosts of one role are the sorted
// distinct values joined with ", " with a count when more than one host
// ("2x AMD EPYC 7763, 1x Intel Xeon 6338").
struct SystemRow {
  std::string what;
  std::vector<std::string> values;
  bool differs = false;
};

// The properties of the systems, rows that differ first (in a fixed order
// within each group). Rows empty on every side are left out.
std::vector<SystemRow> SystemTable(const std::vector<v1::SystemDescription>& systems);

// The table as text: a header of `labels` (one per system), then "differs:"
// rows, then "same:" rows.
std::string FormatSystems(const std::vector<std::string>& labels,
                          const std::vector<v1::SystemDescription>& systems);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_SYSTEM_DESCRIPTION_H_
