// A run's telemetry side file: the agents' full host telemetry, one
// v1::TelemetryLine per agent and phase attempt. run.json keeps only
// TelemetryBrief per agent and RoleTelemetry per role; readers that want the
// full summaries put them back with RestoreTelemetry, and `lockstep export
// RUN` prints the record so restored, as JSON.
//
// telemetry.pb.gz (kTelemetryFile): gzip, one member appended as each phase
// finishes, holding that phase's lines as length-delimited protobuf: each a
// varint32 byte count, then the message (protobuf's
// util/delimited_message_util.h; Java's writeDelimitedTo). Binary: printing
// the same lines as JSON costs the controller several times the CPU, after
// every phase of the run (tests/bench/README.md, section 16).
// telemetry.jsonl.gz (kTelemetryJsonFile): earlier versions' JSON lines,
// still read. Run directories older still have neither: their run.json holds
// the full telemetry inline, and nothing changes.
#ifndef LOCKSTEP_CONTROLLER_RECORD_TELEMETRY_FILE_H_
#define LOCKSTEP_CONTROLLER_RECORD_TELEMETRY_FILE_H_

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

// What a side file holds: every good line, in order, up to the first damage
// (a controller killed while it appended a phase, a full disk, a file that
// is not one), and that damage.
struct TelemetryFileContents {
  std::vector<v1::TelemetryLine> lines;
  // "" when the whole file was read; else what and where, naming the file:
  // "PATH, record 3 (byte 812 ...): ...; its first 2 records are good".
  std::string damage;
};

// The file at `path`: JSON lines when the name ends in ".jsonl.gz",
// length-delimited protobuf otherwise. NotFound when it does not exist;
// otherwise OK, with the damage if any (the lines before it still count).
absl::StatusOr<TelemetryFileContents> ReadTelemetryFile(const std::string& path);

// Puts each line's telemetry into the AgentPhaseRecord of the same phase_id
// and address: the n-th line of a (phase_id, address) into the n-th phase
// record with that phase_id (attempts repeated on skew). Lines with no
// matching record are ignored. How many were put back.
size_t RestoreTelemetry(const std::vector<v1::TelemetryLine>& lines, v1::RunRecord* run);

// Both, for the run directory `dir`: its kTelemetryFile, else its
// kTelemetryJsonFile; nothing done without either. A damaged file restores
// the lines before the damage, and the result says what was left out ("" when
// nothing was): a damaged side file never makes a run unreadable.
std::string RestoreTelemetryFromDir(const std::string& dir, v1::RunRecord* run);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RECORD_TELEMETRY_FILE_H_
