// IOzone's throughput mode (`iozone -t N`), from a RunRecord: each child's
// kB and kB/s as IOzone keeps them, the per-test reduction ("Children see",
// "Parent sees", Min/Max/Avg per process, "Min xfer") and IOzone 3.4's text,
// format string for format string. Pure functions: no I/O.
//
// IOzone's semantics, which these follow:
//  - stonewalling (the default; -x turns it off): when the first child ends
//    its file, every other child stops, and what each had moved by then is
//    its "actual" (Lockstep's tasks go on to the end of their files, so
//    later tests find whole files; TaskResult.bytes_at_first_done is what a
//    task had moved at the first end, and the child's time ends there too).
//  - a child's throughput = actual / its time (its fsync with -e, its close
//    with -c); Children see = the sum of the children's throughputs; Parent
//    sees = the sum of actual / the parent's time (go to the last child's end).
//  - Min/Max/Avg over the children's throughputs; Min xfer = the least actual.
//  - kB = 1024 bytes.
#ifndef LOCKSTEP_CONTROLLER_IOZONE_IOZONE_OUTPUT_H_
#define LOCKSTEP_CONTROLLER_IOZONE_IOZONE_OUTPUT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "controller/record/run_observer.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// One IOzone throughput test, in IOzone's order; each is one plan phase.
enum class IozoneTest { kInitialWrite, kRewrite, kRead, kReread, kRandomRead, kRandomWrite };

// IOzone's noun for a test in its lines: "initial writers", "re-readers".
const char* IozoneTestNoun(IozoneTest test);

// What `lockstep iozone` translated, for the text.
struct IozoneCommandInfo {
  std::string command_line;          // "iozone -i 0 -i 1 -r 64k -s 1m -t 2"
  std::vector<std::string> splash;   // IOzone's option lines, in option order, each "\t...\n"
  uint32_t children = 0;             // -t
  uint64_t file_kb = 0;              // per child ("Each process writes a N kByte file")
  uint64_t record_kb = 0;            // -r
  bool threads = false;              // -T: "thread", else "process"
  bool stonewall = true;             // false with -x
  bool include_close = false;        // -c: a child's time ends at its close
  uint32_t agents = 1;               // client agents the children ran on
  // The tests run, in order, with the plan phase of each.
  std::vector<std::pair<IozoneTest, std::string>> tests;
};

// One child's figures as IOzone's child_stats keeps them.
struct IozoneChild {
  double actual_kb = 0;     // kB counted
  double seconds = 0;       // its time
};

// A test's reduction, each figure as IOzone prints it.
struct IozoneFigures {
  uint32_t children = 0;
  double children_see_kbps = 0;  // sum of actual / seconds
  double parent_sees_kbps = 0;   // sum of actual / parent_seconds
  double min_kbps = 0, max_kbps = 0, avg_kbps = 0;
  double min_xfer_kb = 0;
};

// IOzone's arithmetic over `children` and the parent's time (a time below
// 1 us counts as 1 us, as IOzone's time resolution floor).
IozoneFigures ReduceIozone(const std::vector<IozoneChild>& children, double parent_seconds);

// The six lines of one test, with IOzone's leading blank line:
// "\n\tChildren see throughput for  2 initial writers \t=   12345.67 kB/sec\n..."
std::string FormatIozoneTest(IozoneTest test, const IozoneFigures& f, bool threads);

// The children of `phase` (its tasks over all agents) as IOzone counts
// them, and in *parent_seconds the parent's time: from the earliest start
// of the transfers to the end of the last child's counted time. With
// `stonewall`, each agent's first end (the earliest end of its tasks)
// bounds its other tasks' time, and their actual is bytes_at_first_done.
std::vector<IozoneChild> IozoneChildrenOf(const v1::PhaseRecord& phase, bool stonewall,
                                          bool include_close, double* parent_seconds);

// IOzone's header (its option lines, "Command line used", "Output is in
// kBytes/sec", "Throughput test with N processes", "Each process writes
// ..."), one block per test of `info` from the last attempt of its phase in
// record.tests(0), and "iozone test complete.". A test whose phase has no
// record is left out.
std::string FormatIozoneReport(const IozoneCommandInfo& info, const v1::RunRecord& record);

// How Min xfer was measured, as a '#' line.
std::string IozoneMinXferNote(const IozoneCommandInfo& info);

// IOzone's text as a run's observer: at the run's end (a run with a test),
// FormatIozoneReport of the phases it saw, with their per-agent records, and
// the Min xfer note. `out` must outlive it.
class IozoneReportObserver : public RunObserver {
 public:
  IozoneReportObserver(IozoneCommandInfo info, ReportText* out)
      : info_(std::move(info)), out_(out) {}
  absl::Status OnPhaseDone(const v1::PhaseRecord& phase) override;
  absl::Status OnRunEnd(const v1::RunRecord& run, const std::string& run_dir) override;

 private:
  const IozoneCommandInfo info_;
  ReportText* const out_;
  PhaseAgents agents_;
};

// `info` as the run record keeps it (RunRecord.front_end_report; the command
// line is RunRecord.iozone_command_line), and back.
v1::IozoneReportInfo IozoneReportInfoOf(const IozoneCommandInfo& info);
IozoneCommandInfo IozoneCommandInfoOf(const v1::IozoneReportInfo& info,
                                      const std::string& command_line);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IOZONE_IOZONE_OUTPUT_H_
