#include "controller/results/visibility.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "controller/results/history.h"

namespace lockstep {

absl::StatusOr<RunVisibility> ParseRunVisibility(std::string_view text) {
  const absl::string_view words =
      absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size()));
  if (words == "shared") return RunVisibility{};
  if (words == "private") return RunVisibility{.kind = RunVisibility::kPrivate};
  if (absl::StartsWith(words, "embargo ")) {
    const absl::string_view when = words.substr(8);
    auto until = ParseInstant(std::string_view(when.data(), when.size()));
    if (!until.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("visibility \"", words, "\": ",
                                                     until.status().message()));
    }
    return RunVisibility{.kind = RunVisibility::kEmbargo,
                         .until_unix_s = absl::ToUnixSeconds(*until)};
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "visibility \"", words, "\": give shared, private or \"embargo YYYY-MM-DD\""));
}

absl::Status CheckChosenVisibility(const RunVisibility& visibility, int64_t now_unix_s) {
  if (visibility.kind != RunVisibility::kEmbargo || visibility.until_unix_s > now_unix_s) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "visibility \"", RunVisibilityText(visibility), "\" has already ended (today is ",
      absl::FormatTime("%Y-%m-%d", absl::FromUnixSeconds(now_unix_s), absl::UTCTimeZone()),
      "): the run would be shared at once; give a later date, or shared"));
}

std::string RunVisibilityText(const RunVisibility& visibility) {
  switch (visibility.kind) {
    case RunVisibility::kShared:
      return "shared";
    case RunVisibility::kPrivate:
      return "private";
    case RunVisibility::kEmbargo:
      break;
  }
  const absl::Time until = absl::FromUnixSeconds(visibility.until_unix_s);
  const bool day = visibility.until_unix_s % 86400 == 0;
  return absl::StrCat("embargo ", absl::FormatTime(day ? "%Y-%m-%d" : "%Y-%m-%dT%H:%M:%SZ", until,
                                                  absl::UTCTimeZone()));
}

}  // namespace lockstep
