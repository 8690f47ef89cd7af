#include "controller/run/run_error.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/errors.h"
#include "controller/plan/phase_kind.h"

namespace lockstep {

bool IsSessionLost(const absl::Status& status) {
  const v1::ErrorKind kind = KindOf(status);
  return kind == v1::SESSION_GONE || kind == v1::BUSY;
}

bool IsRestarted(const absl::Status& status) { return KindOf(status) == v1::SESSION_GONE; }

RunFailure FailureOfSetupCall(const absl::Status& status) {
  if (IsSessionLost(status)) return RunFailure::kAgentLost;
  switch (KindOf(status)) {
    case v1::PATH_REFUSED:
      return RunFailure::kBadPlan;
    case v1::NO_SPACE:
    case v1::IO_FAILED:
      return RunFailure::kIoError;
    default:
      break;  // no kind: judge by the code
  }
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kOutOfRange:
      return RunFailure::kBadPlan;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kUnauthenticated:
      return RunFailure::kAgentLost;
    default:
      return RunFailure::kIoError;
  }
}

RunFailure FailureOfPhaseResult(const v1::PhaseResult& result) {
  for (const v1::TaskResult& task : result.tasks()) {
    if (task.error_kind() == v1::VERIFY_FAILED || task.verify_failed()) return RunFailure::kVerify;
  }
  return RunFailure::kIoError;
}

v1::ErrorKind ErrorKindOfPhaseResult(const v1::PhaseResult& result) {
  v1::ErrorKind first = v1::ERROR_KIND_UNSPECIFIED;
  for (const v1::TaskResult& task : result.tasks()) {
    if (task.error_kind() == v1::VERIFY_FAILED || task.verify_failed()) return v1::VERIFY_FAILED;
    if (first == v1::ERROR_KIND_UNSPECIFIED) first = task.error_kind();
  }
  return first == v1::ERROR_KIND_UNSPECIFIED ? v1::IO_FAILED : first;
}

RunError MissedCriteria(const v1::RunRecord& record) {
  std::vector<std::string> missed;
  std::vector<std::string> fixes;
  for (const v1::TestRecord& test : record.tests()) {
    for (const v1::PhaseRecord& pr : test.phases()) {
      const PhaseKindDef& kind = KindOf(pr.kind());
      const std::string what = kind.MissedCriterion(pr);
      if (what.empty()) continue;
      missed.push_back(absl::StrFormat("phase %s (test %u, repetition %u): %s", pr.phase(),
                                       test.test_id(), pr.repetition(), what));
      const std::string fix = kind.CriterionFix();
      if (std::find(fixes.begin(), fixes.end(), fix) == fixes.end()) fixes.push_back(fix);
    }
  }
  if (missed.empty()) return {};
  return Fail(RunFailure::kAuBelowThreshold,
              absl::StrCat(absl::StrJoin(missed, "; "), ": ", absl::StrJoin(fixes, "; ")));
}

v1::RunEnd::Ending EndingOf(RunFailure kind) {
  switch (kind) {
    case RunFailure::kNone: return v1::RunEnd::COMPLETED;
    case RunFailure::kInterrupted: return v1::RunEnd::INTERRUPTED;
    case RunFailure::kAuBelowThreshold: return v1::RunEnd::AU_BELOW_THRESHOLD;
    default: return v1::RunEnd::FAILED;
  }
}

}  // namespace lockstep
