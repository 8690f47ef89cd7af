// Host telemetry summarised for run.json: a few numbers per agent
// (TelemetryBrief) and per role (RoleTelemetry). The agents' full
// TelemetrySummary goes to the run's telemetry.pb.gz (ior/telemetry_file.h),
// so that run.json grows by a bounded amount per agent and phase.
#ifndef LOCKSTEP_CONTROLLER_RECORD_TELEMETRY_SUMMARY_H_
#define LOCKSTEP_CONTROLLER_RECORD_TELEMETRY_SUMMARY_H_

#include <map>
#include <string>
#include <vector>

#include "google/protobuf/repeated_ptr_field.h"

#include "lockstep/v1/results.pb.h"
#include "lockstep/v1/telemetry.pb.h"

namespace lockstep {

// The agent's host over the window: means of the CPU shares, disk and
// network rates summed over devices, maxima of dirty bytes and load, the
// kBriefTopProcesses busiest process groups.
v1::TelemetryBrief BriefOf(const v1::TelemetrySummary& t);

// How many of TelemetrySummary.top_processes a brief keeps: the busiest
// groups of at least 1% of a core, name, size and CPU rounded to 0.1 (each
// is in run.json per agent and phase, so a brief stays a few hundred bytes).
// Seed 003's "lmdd 100% (1 CPU), ptlrpcd 5%, pdflush 15%" is three.
inline constexpr int kBriefTopProcesses = 3;
// How many a "top cpu" line shows (from the full summary, which has 10).
inline constexpr int kTopCpuLineProcesses = 5;

// "lockstep-agent 100% (1 CPU), kworker 5%, flush 15%" (seed report 003's
// client loads): the first `limit` groups of at least 1%, a group of 95% or
// more with the cores it kept busy. Empty when none reached 1%.
std::string TopCpuText(const google::protobuf::RepeatedPtrField<v1::ProcessCpu>& top, int limit);

// Per role, over the agents of `phase` that carry a brief: hosts counted
// once (`host_by_address`: agent address → hostname; an address missing
// there is its own host). Roles in enum order.
std::vector<v1::RoleTelemetry> SummarizeRoles(
    const v1::PhaseRecord& phase, const std::map<std::string, std::string>& host_by_address);

// One line per role, like the seed reports:
//   "  clients (2 hosts): cpu 40% user, 12% sys, 3% iowait; busy 1.2 of 8 cores; ..."
// averaging the agents' full telemetry (AgentPhaseRecord.telemetry: the
// brief's rounded figures and three processes would not print the same
// lines) over the phase; a host with several agents counts once.
// `host_by_address`: each agent's host name. Then one line per host with its
// busiest processes ("  n01 top cpu: lmdd 100% (1 CPU), ptlrpcd 5%"), as seed
// report 003 lists the client loads, and one per file-system daemon. Empty
// for agents without their full telemetry (a stored run's telemetry.pb.gz
// not read back).
std::vector<std::string> TelemetryLines(const v1::PhaseRecord& phase,
                                        const std::map<std::string, std::string>& host_by_address);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RECORD_TELEMETRY_SUMMARY_H_
