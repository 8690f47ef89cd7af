// A run's telemetry side file: the agents' full host telemetry, one
// v1::TelemetryLine per agent and phase attempt. run.json keeps only
// TelemetryBrief per agent and RoleTelemetry per role; readers that want the
// full summaries put them back with RestoreTelemetry, and `lockstep export
// RUN` prints the record so restored, as JSON.
//
// telemetry.pb.gz (kTelemetryFile): gzip, one member appended as each phase
// finishes, holding that phase's lines as length-delimited protobuf: each a
// varint32 byte count, then the message (protobuf's
// util/delimited_message_util.h; Java's writeDelimitedTo, Python's
// _VarintBytes). Binary, because printing these lines as JSON was 12% of
// the controller's CPU at 1,024 agents (perf); parsing it back is as quick.
// telemetry.jsonl.gz (kTelemetryJsonFile): earlier versions' JSON lines,
// still read. Run directories older still have neither: their run.json holds
// the full telemetry inline, and nothing changes.
#ifndef LOCKSTEP_CONTROLLER_IOR_TELEMETRY_FILE_H_
#define LOCKSTEP_CONTROLLER_IOR_TELEMETRY_FILE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

inline constexpr char kTelemetryFile[] = "telemetry.pb.gz";
inline constexpr char kTelemetryJsonFile[] = "telemetry.jsonl.gz";

// Appends `lines` to the kTelemetryFile-format file at `path` (created if
// missing) as one gzip member, at zlib level 1. `what` names the lines in
// errors ("the agents' full telemetry of phase t0.r0.w").
absl::Status AppendTelemetryFile(const std::string& path,
                                 const std::vector<v1::TelemetryLine>& lines,
                                 const std::string& what);

// Every line of the file at `path`, in order: JSON lines when the name ends
// in ".jsonl.gz", length-delimited protobuf otherwise. NotFound when it does
// not exist; InvalidArgument naming the file and the line or record for a
// damaged or truncated one.
absl::StatusOr<std::vector<v1::TelemetryLine>> ReadTelemetryFile(const std::string& path);

// Puts each line's telemetry into the AgentPhaseRecord of the same phase_id
// and address: the n-th line of a (phase_id, address) into the n-th phase
// record with that phase_id (attempts repeated on skew). Lines with no
// matching record are ignored. How many were put back.
size_t RestoreTelemetry(const std::vector<v1::TelemetryLine>& lines, v1::RunRecord* run);

// Both, for the run directory `dir`: its kTelemetryFile, else its
// kTelemetryJsonFile; OK (and nothing done) without either.
absl::Status RestoreTelemetryFromDir(const std::string& dir, v1::RunRecord* run);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IOR_TELEMETRY_FILE_H_
