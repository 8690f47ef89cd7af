// mdtest's text summary from a run record:
//
//   SUMMARY rate (in ops/sec): (of N iterations)
//      Operation                 Max            Min           Mean        Std Dev
//      ---------                 ---            ---           ----        -------
//      Directory creation  %14.3f ...
//
// Max/Min/Mean over iterations; Std Dev is the sample standard deviation
// (÷ n−1, 0 for one iteration). Rows in mdtest's order; only the sub-phases
// that ran are listed (no "Directory rename": lockstep does not rename).
#ifndef LOCKSTEP_CONTROLLER_MDTEST_OUTPUT_H_
#define LOCKSTEP_CONTROLLER_MDTEST_OUTPUT_H_

#include <string>
#include <vector>

#include "lockstep/v1/agent.pb.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

struct MdtestRates {
  v1::MdtestOp op = v1::MD_OP_UNSPECIFIED;
  std::vector<double> rates;  // ops/s, one per iteration
};

struct SampleStats {
  double max = 0, min = 0, mean = 0, sd = 0;  // sd: sample (÷ n−1)
};
SampleStats SampleStatistics(const std::vector<double>& values);

// Rates of the mdtest phases of test `test_index` of `record`, in mdtest's
// row order (directory ops, file ops, then tree ops).
std::vector<MdtestRates> CollectMdtestRates(const v1::RunRecord& record, int test_index = 0);

std::string FormatMdtestSummary(const std::vector<MdtestRates>& rows, uint32_t iterations);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_MDTEST_OUTPUT_H_
