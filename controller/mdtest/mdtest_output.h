// mdtest 4.1's text output, from the command line and a run record:
//
//   -- started at 11/30/2026 16:49:04 --
//
//   mdtest-4.1.0+dev was launched with 2 total task(s) on 1 node(s)
//   Command line used: mdtest '-n' '100' '-d' '/scratch/md'
//   WARNING: Read bytes is 0, thus, a read test will actually just open/close
//   Nodemap: 11
//   Path                : /scratch/md
//   FS                  : 23.5 GiB   Used FS: 0.0%   Inodes: 2.9 Mi   Used Inodes: 0.0%
//   V-0: Rank   0 Line  2594 Shifting ranks by 1 for each phase.        (-N only)
//   2 tasks, 200 files/directories
//
//   SUMMARY rate (in ops/sec): (of 1 iterations)
//      Operation                     Max            Min           Mean        Std Dev
//      ---------                     ---            ---           ----        -------
//      Directory creation         213885.977     213885.977     213885.977          0.000
//      ...
//   [SUMMARY time (in ms/op): ...]                                          (-P, or -Z alone)
//   -- finished at 11/30/2026 16:49:05 --
//
// A node is a client agent: "launched on M node(s)" counts client agents and
// the node map has a 1 for each rank on the agent of rank 0 (mdtest: on the
// host of rank 0). Rows: every operation of the selected kinds (-F/-D) in
// mdtest's order, those that did not run as zeros, as mdtest prints them.
// Max/Min/Mean over iterations; Std Dev is the sample standard deviation
// (÷ n−1; 0 for one iteration). The time table holds each step's duration in
// seconds (mdtest labels it "ms/op").
#ifndef LOCKSTEP_CONTROLLER_MDTEST_MDTEST_OUTPUT_H_
#define LOCKSTEP_CONTROLLER_MDTEST_MDTEST_OUTPUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/v1/agent.pb.h"
#include "controller/record/run_observer.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// What mdtest's text needs from the command line (ParseMdtestCommandLine).
struct MdtestCommandInfo {
  std::vector<std::string> args;  // mdtest's own arguments, as given
  std::string path = "./out";     // -d as given
  uint32_t tasks = 0;             // total tasks
  uint32_t nodes = 0;             // client agents
  uint32_t tasks_per_node = 0;
  bool read_warning = false;      // a read step with -e 0
  uint32_t shift = 0;             // -N as applied (× tasks per node with several nodes)
  bool files = true;              // file steps (not -D alone)
  bool dirs = true;               // directory steps (not -F alone)
  uint64_t items = 0;             // per task, after mdtest's rounding
  uint32_t iterations = 1;
  bool print_rate = true;         // not -Z alone
  bool print_time = false;        // -P or -Z
};

struct SampleStats {
  double max = 0, min = 0, mean = 0, sd = 0;  // sd: sample (÷ n−1)
};
SampleStats SampleStatistics(const std::vector<double>& values);

// mdtest's local time stamp: "MM/DD/YYYY HH:MM:SS".
std::string MdtestTimestamp(int64_t unix_seconds);

// "FS                  : 23.5 GiB   Used FS: 0.0%   Inodes: 2.9 Mi   Used Inodes: 0.0%"
std::string FormatMdtestFsLine(const v1::FsStats& fs);

// The statfs rank 0's task recorded in the first mdtest phase of `record`.
std::optional<v1::FsStats> MdtestFsStats(const v1::RunRecord& record);

// From "-- started at" through "N tasks, M files" (each line ends in '\n').
std::string FormatMdtestHeader(const MdtestCommandInfo& info, const std::string& started,
                               const std::optional<v1::FsStats>& fs);

// One row of a SUMMARY table: the operation and its value per iteration.
struct MdtestRow {
  v1::MdtestOp op = v1::MD_OP_UNSPECIFIED;
  std::vector<double> values;
};

// The rows mdtest prints, in its order, with each iteration's rate (ops/s)
// or, with `time`, duration (s) from test `test_index` of `record`.
std::vector<MdtestRow> CollectMdtestRows(const MdtestCommandInfo& info,
                                         const v1::RunRecord& record, bool time,
                                         int test_index = 0);

// "\nSUMMARY rate (in ops/sec): (of N iterations)\n" or "... time (in ms/op) ...",
// the column heads and the rows.
std::string FormatMdtestTable(const std::vector<MdtestRow>& rows, uint32_t iterations, bool time);

// mdtest -W: "Continue stonewall hit min: A max: B avg: C \n" for each create
// phase of the first test whose wall cut the items short (mdtest prints it
// as such a step ends): A the fewest items a task had made at the wall, B the
// count every task continued to, C the mean at the wall.
std::string FormatMdtestStonewallLines(const MdtestCommandInfo& info, const v1::RunRecord& record);

// Everything after the header up to and including "-- finished at ... --"
// (the stonewall lines first).
std::string FormatMdtestSummary(const MdtestCommandInfo& info, const v1::RunRecord& record,
                                const std::string& finished);

// mdtest's text as a run's observer: at the run's end (a run with a test),
// its header and summary from the phases it saw, with their per-agent
// records; started and finished at the record's started_at and finished_at.
// `out` must outlive it.
class MdtestReportObserver : public RunObserver {
 public:
  MdtestReportObserver(MdtestCommandInfo info, ReportText* out)
      : info_(std::move(info)), out_(out) {}
  absl::Status OnPhaseDone(const v1::PhaseRecord& phase) override;
  absl::Status OnRunEnd(const v1::RunRecord& run, const std::string& run_dir) override;

 private:
  const MdtestCommandInfo info_;
  ReportText* const out_;
  PhaseAgents agents_;
};

// `info` as the run record keeps it (RunRecord.front_end_report), and back.
v1::MdtestReportInfo MdtestReportInfoOf(const MdtestCommandInfo& info);
MdtestCommandInfo MdtestCommandInfoOf(const v1::MdtestReportInfo& info);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_MDTEST_MDTEST_OUTPUT_H_
