#include "controller/mdtest_output.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "common/names.h"
#include "controller/ior_math.h"

namespace lockstep {

SampleStats SampleStatistics(const std::vector<double>& values) {
  // IOR's population figures, with mdtest's sample standard deviation (÷ n−1).
  RepStats p = PopulationStats(values);
  SampleStats s{p.max, p.min, p.mean, 0};
  const double n = static_cast<double>(values.size());
  if (values.size() > 1) s.sd = p.sd * std::sqrt(n / (n - 1));
  return s;
}

std::vector<MdtestRates> CollectMdtestRates(const v1::RunRecord& record, int test_index) {
  static constexpr v1::MdtestOp kOrder[] = {
      v1::MD_DIR_CREATE,  v1::MD_DIR_STAT,  v1::MD_DIR_REMOVE,    v1::MD_FILE_CREATE,
      v1::MD_FILE_STAT,   v1::MD_FILE_READ, v1::MD_FILE_REMOVE,   v1::MD_TREE_CREATE,
      v1::MD_TREE_REMOVE};
  std::vector<MdtestRates> out;
  if (test_index >= record.tests_size()) return out;
  const v1::TestRecord& t = record.tests(test_index);
  for (v1::MdtestOp op : kOrder) {
    MdtestRates r;
    r.op = op;
    for (const v1::PhaseRecord& p : t.phases()) {
      if (p.kind() == v1::MDTEST && p.spec().md_op() == op && p.ok()) r.rates.push_back(p.md_rate());
    }
    if (!r.rates.empty()) out.push_back(r);
  }
  return out;
}

std::string FormatMdtestSummary(const std::vector<MdtestRates>& rows, uint32_t iterations) {
  std::string s = absl::StrFormat("\nSUMMARY rate (in ops/sec): (of %u iterations)\n", iterations);
  s += absl::StrFormat("   %-22s %14s %14s %14s %14s\n", "Operation", "Max", "Min", "Mean",
                       "Std Dev");
  s += absl::StrFormat("   %-22s %14s %14s %14s %14s\n", "---------", "---", "---", "----",
                       "-------");
  for (const MdtestRates& r : rows) {
    SampleStats st = SampleStatistics(r.rates);
    s += absl::StrFormat("   %-22s %14.3f %14.3f %14.3f %14.3f\n", MdtestOpTitle(r.op), st.max,
                         st.min, st.mean, st.sd);
  }
  return s;
}

}  // namespace lockstep
