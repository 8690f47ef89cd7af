// The regression gate: is a run worse than its baseline?
//
// `lockstep gate RUN --baseline B` compares RUN with B result by result. A
// result fails when ALL of these hold:
//   1. its mean bandwidth dropped by more than --max-drop (default 5%;
//      per-metric overrides by operation or phase name, "write=10%");
//   2. the drop is significant: one-sided Welch t-test p < alpha (0.05)
//      between RUN's and B's per-repetition bandwidths. When either side has
//      < 2 repetitions there is no test and the threshold alone decides;
//   3. only with a noise window (--noise-window N): the drop exceeds the
//      run-to-run spread of that result over the window's runs ((max - min)
//      / mean of their means, when >= 2 of them have the result), unless
//      p < decisive_alpha (0.01): such a drop fails whatever the window holds.
// Without a window the noise is B's own repetitions (rule 2) and nothing
// else. The window is the N complete runs of B's plan recorded (started) at
// or before B, never RUN (HistoryStore::CompleteRunsBefore): so the verdict
// depends on RUN, B and runs older than B only, and recording later runs
// never changes it.
// The AI figures of train and checkpoint results (controller/results/
// ai_metrics.h: au, samples_per_s, checkpoint_write_min_mib_per_s, ...) and
// the efficiency of a write or read beside its layers (issue 42) are
// cases of their own under the same rules 1 and 2, without a noise window.
// A result of the baseline that the run lacks fails too (the run lost it);
// a result only in the run is reported as skipped (no baseline for it).
#ifndef LOCKSTEP_CONTROLLER_RESULTS_GATE_H_
#define LOCKSTEP_CONTROLLER_RESULTS_GATE_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "controller/results/compare.h"
#include "controller/results/history.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// What the gate decided (`lockstep gate` exits with a code for each,
// controller/cli/exit_codes.h).
enum class GateVerdict {
  kPass,        // every compared result passed
  kRegression,  // at least one result failed
  kNoBaseline,  // no result of the run has a baseline result to compare with
};

struct MaxDrop {
  double default_pct = 5.0;
  // operation, phase name or AI figure (AiMetricDef::name) -> percent
  std::map<std::string, double> by_metric;
  // The threshold of a result (`metric` empty) or of one of its AI figures:
  // the figure's override, else its phase name's, else its operation's, else
  // the default.
  double For(const ResultKey& key, const std::string& metric = "") const;
};

// Adds one --max-drop value to `into`: "5%", "5", "write=10%", "write=10".
// InvalidArgument names the text and the accepted forms.
absl::Status ParseMaxDrop(std::string_view text, MaxDrop* into);

// Every override of `max_drop` names an operation or a phase of `baseline`
// or `run`, or an AI figure; InvalidArgument names the one that does not and
// lists the valid ones.
absl::Status CheckMaxDropMetrics(const MaxDrop& max_drop, const v1::RunRecord& baseline,
                                 const v1::RunRecord& run);

// The value of --noise-window: a whole number of runs >= 1. InvalidArgument
// names the flag, the text and what is accepted.
absl::StatusOr<int> ParseNoiseWindow(std::string_view text);

// The runs whose run-to-run spread a drop must exceed (rule 3 above).
struct NoiseWindow {
  std::string baseline_id;              // the window ends before this run
  int requested = 0;                    // N of --noise-window N
  std::vector<std::string> run_ids;     // the runs used, newest first; fewer than
                                        // `requested` when the history has fewer
  // ResultKey::ToString() -> the mean bandwidth of that result in each run
  // of the window that has it.
  std::map<std::string, std::vector<double>> means;
};

// The window of `n` runs for gating `run_id` against `baseline`:
// store.CompleteRunsBefore(baseline, n, run_id, site), each loaded for its
// means. REQUIRES: n >= 1. Errors: those of CompleteRunsBefore and Load,
// prefixed with "--noise-window N".
absl::StatusOr<NoiseWindow> LoadNoiseWindow(const HistoryStore& store,
                                            const v1::RunRecord& baseline, int n,
                                            const std::string& run_id,
                                            const std::optional<std::string>& site);

struct GateOptions {
  MaxDrop max_drop;
  double alpha = 0.05;
  // A drop beyond max-drop with one-sided p below this fails whatever the
  // noise window's spread.
  double decisive_alpha = 0.01;
  // Unset: the baseline's repetitions are the only noise (no spread rule).
  std::optional<NoiseWindow> noise_window;
};

struct GateCase {
  enum class Outcome { kPass, kFail, kNoBaseline };
  ResultKey key;
  // Empty: the result's bandwidth (MiB/s). Else an AI figure of it
  // (AiMetricDef::name): a drop of a duration is its rise; the AU case also
  // fails when the run's AU is below its threshold and the baseline's was
  // not. Values are in the figure's unit (AU as a fraction).
  std::string metric;
  // key.ToString(), then " " and the metric when there is one.
  std::string Name() const;
  Outcome outcome = Outcome::kPass;
  bool missing_in_run = false;
  double baseline_mean = 0, run_mean = 0;
  double drop_pct = 0;           // positive: the run is slower
  double max_drop_pct = 0;
  double spread_pct = -1;        // over the noise window; < 0: no window or < 2 runs with it
  size_t spread_runs = 0;        // runs of the window that have this result
  size_t reps_baseline = 0, reps_run = 0;
  WelchResult welch;
  std::string message;           // one line with the numbers and the reason
};

struct GateReport {
  std::string run_id, baseline_id, plan;
  double alpha = 0.05;
  double decisive_alpha = 0.01;
  // Which noise the verdict allowed for: the baseline's repetitions, or the
  // window with its run ids. One line, no newline.
  std::string noise_source;
  std::vector<GateCase> cases;
  int failures() const;
  int compared() const;          // cases that had a baseline
  // kNoBaseline when no case had a baseline, else kRegression when a case
  // failed, else kPass.
  GateVerdict verdict() const;
  // Human summary: the noise source, one line per case, a verdict line.
  std::string Text() const;
};

GateReport EvaluateGate(const v1::RunRecord& baseline, const v1::RunRecord& run,
                        const GateOptions& options);

// JUnit XML: one <testcase> per result; failures carry the numbers.
std::string GateJunitXml(const GateReport& report);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_GATE_H_
