// A command phase's figures (kind = "command": one program per client agent,
// started at one instant): the reduction of its tasks into the phase record,
// and the lines a run prints for it, as `time` prints them:
//
//   # n01: real 0m13.559s user 0m0.267s sys 0m3.727s exit 0
//   # n02: real 0m0.004s user 0m0.000s sys 0m0.001s exit 2; stderr: tar: linux.tar: Cannot open
//   # command tar: 2 hosts, real min 0.004 s median 6.78 s max 13.6 s, 1 failed
#ifndef LOCKSTEP_CONTROLLER_RECORD_COMMAND_SUMMARY_H_
#define LOCKSTEP_CONTROLLER_RECORD_COMMAND_SUMMARY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lockstep/v1/results.pb.h"

namespace lockstep {

// pr->command over the tasks that carry a CommandResult (hosts; failed: an
// exit status other than 0, a signal or the timeout; real min/median/max,
// user and sys medians, in seconds) and pr->row: access "command", wrrd_s
// and total_s the slowest real time (what the reports and `compare` show).
void ReduceCommand(const std::vector<const v1::TaskResult*>& tasks, uint32_t rep,
                   v1::PhaseRecord* pr);

// `time`'s way of printing a duration: "0m13.559s", "61m0.002s".
std::string TimeOfDuration(int64_t duration_ns);

// The lines above (without the "# "), from the tasks in pr.agents(): one per
// host, by the host name `host_by_address` gives its agent's address (the
// address itself when two agents share a host name, as local agents do),
// then the summary. A failed host names how it ended and the last lines of
// its stderr. The command kind's ReportNotes (controller/plan/kinds/command.cc).
std::vector<std::string> CommandReportLines(const v1::PhaseRecord& pr,
                                            const std::map<std::string, std::string>& host_by_address);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RECORD_COMMAND_SUMMARY_H_
