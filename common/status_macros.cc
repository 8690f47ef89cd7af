#include "common/status_macros.h"

#include <string>

namespace lockstep {

absl::Status Annotate(const absl::Status& status, std::string_view context) {
  if (status.ok()) return status;
  std::string message(context);
  message += ": ";
  message += std::string(status.message());
  return absl::Status(status.code(), message);
}

}  // namespace lockstep
