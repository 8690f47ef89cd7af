#include "common/status_macros.h"

#include <string>

namespace lockstep {

absl::Status Annotate(const absl::Status& status, std::string_view context) {
  if (status.ok()) return status;
  std::string message(context);
  message += ": ";
  message += std::string(status.message());
  absl::Status out(status.code(), message);
  // Keep the payloads (an error kind of common/errors.h among them).
  status.ForEachPayload([&out](absl::string_view url, const absl::Cord& payload) {
    out.SetPayload(url, payload);
  });
  return out;
}

}  // namespace lockstep
