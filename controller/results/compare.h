// Comparing runs: which results match, how much they changed, whether the
// change is more than noise, and what else differs between the runs.
//
// Two results match when they were measured the same way: same phase name,
// operation, task count, tasks per node, transfer/block size, segments,
// file-per-process mode and sweep point (ResultKey). A side of a comparison
// is one run or a group of runs (several runs of one plan): a result's
// values are then every repetition of every run of the group, and the
// median, min and max are over those ("median of several runs"). Significance is Welch's two-sample
// t-test on the per-repetition bandwidths (SummaryRow.bw_mib_per_rep), with
// the Student t CDF computed from the regularized incomplete beta function.
#ifndef LOCKSTEP_CONTROLLER_RESULTS_COMPARE_H_
#define LOCKSTEP_CONTROLLER_RESULTS_COMPARE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/v1/results.pb.h"

namespace lockstep {

// What makes two results comparable.
struct ResultKey {
  std::string phase;
  std::string operation;
  uint32_t num_tasks = 0;
  uint32_t tasks_per_node = 0;
  uint64_t transfer_bytes = 0;
  uint64_t block_bytes = 0;
  uint64_t segments = 0;
  bool file_per_process = false;
  std::string sweep;  // the test's sweep point, SweepLabel ("" without a sweep)

  // Stable text form, e.g. "write/write tasks=4 tpn=4 xfer=1MiB block=16MiB seg=1 fpp",
  // with " [stripe_size=64k]" for a sweep point. Used as the matching key in
  // the history db too.
  std::string ToString() const;
  auto operator<=>(const ResultKey&) const = default;
  bool operator==(const ResultKey&) const = default;
};

ResultKey KeyOf(const v1::SummaryRow& row);
// With the sweep point of `test`, the test the row summarizes.
ResultKey KeyOf(const v1::SummaryRow& row, const v1::TestRecord& test);

// The per-repetition bandwidths (MiB/s) of a result: bw_mib_per_rep, or
// {bw_mean_mib} when the run did not record them.
std::vector<double> RepValues(const v1::SummaryRow& row);

// ---- statistics --------------------------------------------------------------

// I_x(a, b), the regularized incomplete beta function (continued fraction).
double RegularizedIncompleteBeta(double a, double b, double x);
// P(T <= t) for Student's t distribution with `df` degrees of freedom (df may
// be fractional, as in Welch's test).
double StudentTCdf(double t, double df);

struct WelchResult {
  bool available = false;      // false when either side has < 2 values
  double t = 0;                // (mean_b - mean_a) / se
  double df = 0;               // Welch–Satterthwaite
  double p_two_sided = 1;      // H0: equal means
  double p_b_lower = 1;        // one-sided, H1: mean_b < mean_a
  double p_b_higher = 1;       // one-sided, H1: mean_b > mean_a
};
WelchResult WelchTTest(const std::vector<double>& a, const std::vector<double>& b);

double Mean(const std::vector<double>& v);
// The middle value (the mean of the two middle ones for an even count); 0
// for none.
double Median(std::vector<double> v);
// Sample standard deviation (n - 1); 0 for fewer than 2 values.
double SampleStdDev(const std::vector<double>& v);

// "Welch's two-sample t-test on per-repetition bandwidth, two-sided; * p < 0.05"
extern const char kSignificanceMethod[];

// ---- pooling a group of runs ---------------------------------------------------

// One result over a group of runs: every repetition of every run that has it
// (a run's first instance of the key).
struct PooledResult {
  ResultKey key;
  std::vector<double> values;  // MiB/s
  uint32_t runs = 0;           // runs of the group that have it
  uint32_t test_id = 0;        // in the first of them
};
// In key order.
std::vector<PooledResult> PoolResults(const std::vector<v1::RunRecord>& group);

// ---- comparing two runs ------------------------------------------------------

struct ResultComparison {
  ResultKey key;
  uint32_t test_a = 0, test_b = 0;
  std::vector<double> reps_a, reps_b;  // every repetition of every run of the side
  uint32_t runs_a = 1, runs_b = 1;     // runs of the side that have the result
  double mean_a = 0, mean_b = 0;
  double median_a = 0, median_b = 0;
  double min_a = 0, max_a = 0, min_b = 0, max_b = 0;
  double change_pct = 0;         // of the means: (b - a) / a * 100; 0 when a == 0
  double median_change_pct = 0;  // of the medians
  WelchResult welch;
  // "p=0.003 *", "p=0.41", or "n/a (1 rep)".
  std::string SignificanceText() const;
};

// One thing that differs between two runs: plan parameters, agent facts, fs types.
struct RunDifference {
  std::string what;            // "kernel", "phase write: direct", "plan_sha256", ...
  std::string a, b;
};

// One figure of an AI phase (controller/results/ai_metrics.h) on both sides.
struct MetricComparison {
  ResultKey key;
  std::string metric;            // AiMetricDef::name
  bool lower_is_better = false;
  std::vector<double> values_a, values_b;  // every repetition of every run of the side
  double mean_a = 0, mean_b = 0;
  double median_a = 0, median_b = 0;
  double median_change_pct = 0;  // (b - a) / a * 100 of the medians; 0 when a == 0
  WelchResult welch;             // on the values
  double threshold_a = 0, threshold_b = 0;  // au: the phases' au_threshold
  int passed_a = -1, passed_b = -1;         // au: 1 pass, 0 fail, -1 not judged
};

struct Comparison {
  std::string run_a, run_b;  // run ids, a group's joined with ", "
  uint32_t runs_in_a = 1, runs_in_b = 1;
  std::vector<ResultComparison> matched;
  // The AI figures of the matched train and checkpoint results.
  std::vector<MetricComparison> metrics;
  std::vector<ResultKey> only_a, only_b;
  std::vector<RunDifference> differences;
};

Comparison CompareRuns(const v1::RunRecord& a, const v1::RunRecord& b);
// A group of runs against another (each non-empty); the differences are
// those of the first run of each.
Comparison CompareGroups(const std::vector<v1::RunRecord>& a, const std::vector<v1::RunRecord>& b);

// What differs between the runs besides the results: plan identity and
// parameters (per phase name, from the recorded PhaseSpecs), task counts,
// agent facts (kernel, agent_version, lustre_version, cores, memory, os) and
// the file system types of the agents' roots. Values are the sorted distinct
// values over all agents / phases, so runs with different agent counts
// still compare.
std::vector<RunDifference> DiffRuns(const v1::RunRecord& a, const v1::RunRecord& b);

// The text the `compare` command prints for two sides: a table of matched
// results (median and min..max of each side, change of the medians,
// significance), the method, the AI figures (FormatAiMetrics), results on
// one side only, and the differences. Says what differs when nothing matches.
std::string FormatComparison(const Comparison& c);

// For three or more runs: one row per result key, one column per run
// (median MiB/s and its change vs the first run), then the differences of
// each run against the first.
std::string FormatMatrix(const std::vector<v1::RunRecord>& runs);
// The same with a group of runs per column (median over all their repetitions).
std::string FormatMatrix(const std::vector<std::vector<v1::RunRecord>>& groups);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_COMPARE_H_
