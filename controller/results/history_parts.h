// Internal to history.cc and history_schema.cc (the contract is history.h):
// writing a run's ai_metrics rows, which both recording a run and the
// migration of an older db to schema 2 do.
#ifndef LOCKSTEP_CONTROLLER_RESULTS_HISTORY_PARTS_H_
#define LOCKSTEP_CONTROLLER_RESULTS_HISTORY_PARTS_H_

#include <string>

#include "absl/status/status.h"
#include "lockstep/v1/results.pb.h"

struct sqlite3;

namespace lockstep::history_parts {

// The ai_metrics rows of `run` (inside the caller's transaction).
absl::Status InsertAiMetrics(sqlite3* db, const std::string& path, const v1::RunRecord& run);

}  // namespace lockstep::history_parts

#endif  // LOCKSTEP_CONTROLLER_RESULTS_HISTORY_PARTS_H_
