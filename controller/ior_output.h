// IOR's text output, so that people and scripts used to IOR read ours:
// the options block, the per-iteration table, "Summary of all tests:" and
// the "Max Write:" / "Max Read:" lines (formats of IOR 4's ior-output.c).
#ifndef LOCKSTEP_CONTROLLER_IOR_OUTPUT_H_
#define LOCKSTEP_CONTROLLER_IOR_OUTPUT_H_

#include <string>
#include <vector>

#include "lockstep/v1/agent.pb.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

struct TestDescription {
  std::string path;          // dir/file_name as given in the plan
  v1::PhaseSpec spec;        // layout of the test (any phase of it)
  uint32_t nodes = 0;        // client agents
  uint32_t tasks_per_node = 0;
  uint32_t repetitions = 0;
  bool reorder = false;
};

// "Options: " block.
std::string FormatOptions(const TestDescription& test);
// Header of the per-iteration table (two lines).
std::string FormatResultsHeader();
// One "write"/"read" row.
std::string FormatIterationRow(const v1::IterationRow& row);
// One "remove" row.
std::string FormatRemoveRow(double seconds, uint32_t iter);
// "Summary of all tests:" header (after a blank line).
std::string FormatSummaryHeader();
std::string FormatSummaryRow(const v1::SummaryRow& row);
// "Max Write: %.2f MiB/sec (%.2f MB/sec)" for each operation of a test.
std::string FormatMaxLines(const std::vector<v1::SummaryRow>& rows);

// IOR's PPDouble: width 10, left-justified; 6 decimals below 1, 2 below
// 3600, none above; "-" for negatives.
std::string PPDouble(double value);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IOR_OUTPUT_H_
