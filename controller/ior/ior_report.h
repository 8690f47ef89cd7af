// IOR's text output (IOR 4.1's ior-output.c, checked line for line against
// real outputs by tests/conformance/), built from Lockstep's records.
//
// Each method returns the text to print at one event of a run
// (controller/record/run_observer.h); IorReportObserver prints them as the
// run goes, and `lockstep report RUN_DIR` replays a finished run's record
// through the same observer (RenderIorReport). Lines Lockstep adds (agents,
// clock offsets, telemetry, start skew, latency percentiles, the results
// directory: lockstep_lines.h) start with '#', so that every IOR parser
// (`grep '^write'`, `Max Write`, `Summary of all tests`) reads the rest
// unchanged.
//
// Not thread-safe: the coordinator's thread calls it.
#ifndef LOCKSTEP_CONTROLLER_IOR_IOR_REPORT_H_
#define LOCKSTEP_CONTROLLER_IOR_IOR_REPORT_H_

#include <map>
#include <string>

#include "controller/ior/lockstep_lines.h"
#include "controller/record/ior_math.h"
#include "controller/record/run_observer.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

class IorReport {
 public:
  // `verbose`: IOR's -v ("verbose : 1" and the Max Write/Read lines).
  explicit IorReport(bool verbose = false) : verbose_(verbose) {}

  // "IOR-4.1.0+dev: Lockstep Coordinated Test of Parallel I/O", Began,
  // Command line (run.ior_command_line, else run.command_line), Machine.
  std::string Header(const v1::RunRecord& run) const;
  // '#' lines: the run, its directory and every agent with its clock offset.
  // Remembers each agent's host name, for the command phases' lines.
  std::string AgentsReady(const v1::RunRecord& run);
  // The first time it is called for a test: TestID, StartTime, Path, FS
  // (from `first.dir_fs`), the Options block and the results table's header.
  // Empty on later calls for the same test.
  std::string TestStarted(const v1::TestRecord& test, const v1::PhaseRecord& first);
  // One accepted phase: IOR's stonewall and file-size lines, the result row
  // (none for mdtest steps, which mdtest's own summary shows; for a command
  // phase each host's times, as `time` prints them, and their summary:
  // controller/record/command_summary.h) and '#' lines.
  std::string PhaseDone(const v1::PhaseRecord& phase) const;
  // A Lockstep note (a warning, a repeat, an agent lost) as a '#' line.
  static std::string Note(const std::string& text);
  // A timed removal of the files: Lockstep's '#' line, after IOR's own
  // `remove` row of the results table with -v (ior-output.c
  // PrintRemoveTiming; IOR prints no row without -v).
  std::string FilesRemoved(double seconds, uint32_t iter) const;
  // After a test's repetitions: IOR's wear-out line, with -v the Max
  // Write/Read lines, and Lockstep's start-skew and latency table ('#').
  std::string TestDone(const v1::TestRecord& test) const;
  // "Summary of all tests:" with its rows, Finished, and '#' lines with the
  // status and where the results are.
  std::string Footer(const v1::RunRecord& run, const std::string& run_dir) const;

 private:
  const bool verbose_;
  int started_test_ = -1;
  LockstepLines own_;          // Lockstep's '#' lines, interleaved with IOR's
  v1::RunRecord ior_options_;  // the run's IOR reorder options, from AgentsReady
};

// IOR's report as a run's observer: every event's text to `out`, which
// must outlive it. `verbose`: IOR's -v (`lockstep run`'s report is IOR's at
// -v; `lockstep ior` passes the command line's).
class IorReportObserver : public RunObserver {
 public:
  IorReportObserver(bool verbose, ReportText* out) : report_(verbose), out_(out) {}
  absl::Status OnRunBegin(const v1::RunRecord& run) override;
  absl::Status OnAgentsReady(const v1::RunRecord& run) override;
  absl::Status OnTestStarted(const v1::TestRecord& test, const v1::PhaseRecord& first) override;
  absl::Status OnPhaseDone(const v1::PhaseRecord& phase) override;
  absl::Status OnFilesRemoved(double seconds, uint32_t iter) override;
  absl::Status OnTestDone(const v1::TestRecord& test) override;
  absl::Status OnNote(const std::string& text) override;
  absl::Status OnRunEnd(const v1::RunRecord& run, const std::string& run_dir) override;

 private:
  absl::Status Print(const std::string& text);
  IorReport report_;
  ReportText* const out_;
};

// One row of IOR's per-iteration table (IOR's PrintReducedResult).
std::string IorIterationRow(const v1::IterationRow& r);

// IOR's test parameters, from the layouts of a test's phases (plan_specs):
// IOR has one set per test where Lockstep has one per phase. Shared by the
// text report and the JSON.
struct IorTestParams {
  v1::PhaseSpec layout;  // the first transfer phase, else the first phase
  bool random_blocks = false;  // IOR -z -z (randomOffset 2)
  bool write = false, read = false, random_offsets = false, direct = false, fsync = false,
       fsync_per_transfer = false, verify_after_write = false, verify = false;
  uint32_t stonewall_seconds = 0;  // of the first phase with a stonewall
  bool stonewall_wear_out = false;
  TestReorder reorder;
};
// `run`: its IOR reorder options (TestReorderOf(run, test)); null: the
// test's specs alone.
IorTestParams IorTestParamsOf(const v1::TestRecord& test, const v1::RunRecord* run = nullptr);

// IOR's file system figures of a statfs: size in GiB (TiB above 1024 GiB),
// used %, inodes in Mi (2^20), used inodes %.
struct IorFsFigures {
  double size = 0;
  const char* unit = "GiB";
  double used_pct = 0;
  double inodes_mi = 0;
  double used_inodes_pct = 0;
};
IorFsFigures IorFsFiguresOf(const v1::FsStats& fs);

// The whole report of a finished (or journal-rebuilt) run, as it was printed:
// its record replayed (ReplayRun) through IorReportObserver at the run's
// ior_verbose.
std::string RenderIorReport(const v1::RunRecord& run, const std::string& run_dir);

// IOR's PPDouble: width 10, left-justified; 6 decimals below 1, 2 below
// 3600, none above; "-" for negatives; then `append`.
std::string PPDouble(double value, const char* append = " ");
// IOR's HumanReadable(…, BASE_TWO): "4096 bytes", "1 MiB", "35.86 MiB", "2 GiB".
std::string IorHumanBytes(uint64_t bytes);
// "Mon Nov 30 16:48:57 2026" (local time) from RFC 3339; the input if it
// does not parse.
std::string IorTime(const std::string& rfc3339);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IOR_IOR_REPORT_H_
