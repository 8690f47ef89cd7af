#include "common/build_info.h"

#include "absl/strings/str_format.h"
#include "build_commit.h"  // generated: cmake/build_commit.cmake
#include "common/wire_version.h"

namespace lockstep {

absl::string_view BuildCommit() { return LOCKSTEP_BUILD_COMMIT; }

std::string VersionLine(absl::string_view program) {
  return absl::StrFormat("%s %s (wire protocol %u.%u, commit %s)", program, LOCKSTEP_VERSION,
                         kWireMajor, kWireMinor, BuildCommit());
}

}  // namespace lockstep
