// A run's telemetry.jsonl.gz: the agents' full host telemetry, one
// v1::TelemetryLine (JSON) per agent and phase attempt, gzip (one member per
// phase). run.json keeps only TelemetryBrief per agent and RoleTelemetry per
// role; readers that want the full summaries put them back with
// RestoreTelemetry. Run directories of earlier versions have no such file:
// their run.json holds the full telemetry inline, and nothing changes.
#ifndef LOCKSTEP_CONTROLLER_RESULTS_TELEMETRY_FILE_H_
#define LOCKSTEP_CONTROLLER_RESULTS_TELEMETRY_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// Every line of the file at `path`, in order. NotFound when it does not
// exist; InvalidArgument naming the file and line for a bad line.
absl::StatusOr<std::vector<v1::TelemetryLine>> ReadTelemetryFile(const std::string& path);

// Puts each line's telemetry into the AgentPhaseRecord of the same phase_id
// and address: the n-th line of a (phase_id, address) into the n-th phase
// record with that phase_id (attempts repeated on skew). Lines with no
// matching record are ignored. How many were put back.
size_t RestoreTelemetry(const std::vector<v1::TelemetryLine>& lines, v1::RunRecord* run);

// Both, for the run directory `dir`: OK (and nothing done) without the file.
absl::Status RestoreTelemetryFromDir(const std::string& dir, v1::RunRecord* run);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_TELEMETRY_FILE_H_
