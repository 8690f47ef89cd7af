// run.json: one run's record (lockstep.v1.RunRecord) in protobuf's JSON form,
// as a run directory, the history db and `lockstep export` keep it.
#ifndef LOCKSTEP_CONTROLLER_RESULTS_RUN_JSON_H_
#define LOCKSTEP_CONTROLLER_RESULTS_RUN_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// The newest RunRecord.format_version this build reads.
inline constexpr uint32_t kMaxRunFormatVersion = 1;

// Parses a run.json text. `origin` (a path) is named in every error:
// invalid JSON or a field of the wrong type ("run.json <origin>: not a valid
// RunRecord: ..."), a format_version newer than kMaxRunFormatVersion (names
// the field, both versions, and says to upgrade lockstep), a missing
// format_version or run_id, a bandwidth that is not a finite number >= 0.
absl::StatusOr<v1::RunRecord> ParseRunJson(std::string_view json, std::string_view origin);
// ParseRunJson of the file at `path`; an unreadable file's error names it.
absl::StatusOr<v1::RunRecord> ReadRunJson(const std::string& path);
// Whether `run_id` may name a run where an id becomes a path or a URL
// segment (a run directory, the results service's /api/v1/runs/ID, its
// spool): 1 to 128 of [A-Za-z0-9._-], not "." or "..". Lockstep's own ids
// ("20261207-162812-seq-write-1a2b") always are.
bool IsSafeRunId(std::string_view run_id);

// protobuf's JSON form with the .proto field names, indented.
std::string RunToJson(const v1::RunRecord& run);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_RUN_JSON_H_
