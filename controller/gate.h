// The regression gate: is a run worse than its baseline?
//
// A result fails when ALL of these hold:
//   1. its mean bandwidth dropped by more than --max-drop (default 5%;
//      per-metric overrides by operation or phase name, "write=10%");
//   2. the drop is significant: one-sided Welch t-test p < alpha (0.05) on
//      the per-repetition bandwidths. When either side has < 2 repetitions
//      there is no test and the threshold alone decides;
//   3. the drop exceeds the run-to-run spread of that result over the
//      earlier runs of the plan in the history db ((max - min) / mean of
//      their means), when at least 2 earlier runs are known.
// A result of the baseline that the run lacks fails too (the run lost it);
// a result only in the run is reported as skipped (no baseline for it).
#ifndef LOCKSTEP_CONTROLLER_GATE_H_
#define LOCKSTEP_CONTROLLER_GATE_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "controller/compare.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// The gate command's exit codes.
inline constexpr int kGatePass = 0;
inline constexpr int kGateRegression = 1;
inline constexpr int kGateBadInput = 2;
inline constexpr int kGateNoBaseline = 3;

struct MaxDrop {
  double default_pct = 5.0;
  std::map<std::string, double> by_metric;  // operation or phase name -> percent
  // The threshold of a result: its phase name's override, else its
  // operation's, else the default.
  double For(const ResultKey& key) const;
};

// Adds one --max-drop value to `into`: "5%", "5", "write=10%", "write=10".
// InvalidArgument names the text and the accepted forms.
absl::Status ParseMaxDrop(std::string_view text, MaxDrop* into);

struct GateOptions {
  MaxDrop max_drop;
  double alpha = 0.05;
  // ResultKey::ToString() -> mean bandwidths of that result in earlier
  // complete runs of the same plan (the baseline included), for the
  // run-to-run spread. Empty: no spread rule.
  std::map<std::string, std::vector<double>> history;
};

struct GateCase {
  enum class Outcome { kPass, kFail, kNoBaseline };
  ResultKey key;
  Outcome outcome = Outcome::kPass;
  bool missing_in_run = false;
  double baseline_mean = 0, run_mean = 0;
  double drop_pct = 0;           // positive: the run is slower
  double max_drop_pct = 0;
  double spread_pct = -1;        // < 0: unknown
  size_t reps_baseline = 0, reps_run = 0;
  WelchResult welch;
  std::string message;           // one line with the numbers and the reason
};

struct GateReport {
  std::string run_id, baseline_id, plan;
  double alpha = 0.05;
  std::vector<GateCase> cases;
  int failures() const;
  int compared() const;          // cases that had a baseline
  // kGatePass, kGateRegression, or kGateNoBaseline when no result of the
  // run has a baseline result to compare with.
  int ExitCode() const;
  // Human summary: one line per case, a verdict line.
  std::string Text() const;
};

GateReport EvaluateGate(const v1::RunRecord& baseline, const v1::RunRecord& run,
                        const GateOptions& options);

// JUnit XML: one <testcase> per result; failures carry the numbers.
std::string GateJunitXml(const GateReport& report);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_GATE_H_
