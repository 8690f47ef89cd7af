#include "controller/record/run_status.h"

#include <google/protobuf/util/json_util.h>

#include "absl/strings/match.h"
#include "common/json.h"

namespace lockstep {

std::string RunStatusOf(const v1::RunEnd& end) {
  switch (end.ending()) {
    case v1::RunEnd::INTERRUPTED:
      return "interrupted";
    case v1::RunEnd::AU_BELOW_THRESHOLD:
      return "failed";
    case v1::RunEnd::FAILED:
      return end.first_test_summarized() ? "partial" : "failed";
    default:
      return end.went_on_after_loss() ? "partial" : "complete";
  }
}

std::string JournalEndLine(const v1::RunEnd& end) {
  v1::JournalEnd line;
  *line.mutable_run_end() = end;
  return ToJson(line, /*pretty=*/false);
}

std::optional<v1::RunEnd> ParseJournalEndLine(absl::string_view line) {
  if (!absl::StartsWith(line, "{\"run_end\"")) {
    return std::nullopt;
  }
  v1::JournalEnd parsed;
  if (!google::protobuf::util::JsonStringToMessage(std::string(line), &parsed).ok() ||
      !parsed.has_run_end()) {
    return std::nullopt;
  }
  return parsed.run_end();
}

}  // namespace lockstep
