// Who sees a run on a results service besides its own site
// (docs/results-service.md): every admitted site and reader (shared),
// nobody (private), or nobody until an instant, then everyone (embargo).
// Given when the run is pushed (`lockstep push --visibility`, stored with
// the run in one transaction) or later by its site (POST
// /api/v1/runs/RUN/visibility): the same words both ways.
#ifndef LOCKSTEP_CONTROLLER_RESULTS_VISIBILITY_H_
#define LOCKSTEP_CONTROLLER_RESULTS_VISIBILITY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace lockstep {

struct RunVisibility {
  enum Kind { kShared, kPrivate, kEmbargo };
  Kind kind = kShared;
  int64_t until_unix_s = 0;  // kEmbargo: when it becomes shared
};

// "shared", "private" or "embargo DATE" (YYYY-MM-DD, a UTC day's start, or
// RFC 3339, up to 9999-12-31: history.h ParseInstant); surrounding whitespace
// ignored. InvalidArgument naming the text and the three forms, or the date
// and why it is none.
absl::StatusOr<RunVisibility> ParseRunVisibility(std::string_view text);

// A visibility chosen now (`lockstep push --visibility`, `lockstep run`'s
// push_visibility, a site's POST .../visibility): an embargo that ends at or
// before `now_unix_s` is refused (InvalidArgument naming its date and
// today), as the run would be shared at once: a wrong year would publish
// what was meant to wait. Not applied to a run that waited in the spool past
// its embargo: it goes out as it was asked.
absl::Status CheckChosenVisibility(const RunVisibility& visibility, int64_t now_unix_s);

// The words ParseRunVisibility reads back: "shared", "private",
// "embargo 2027-03-01" (or "embargo 2027-03-01T12:00:00Z" within a day).
std::string RunVisibilityText(const RunVisibility& visibility);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_VISIBILITY_H_
