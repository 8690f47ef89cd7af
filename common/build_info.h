// What a binary is: its release, the wire protocol it speaks and the commit
// it was built from — what `lockstep --version` and `lockstep-agent
// --version` print, the first thing asked of every tool on a fleet.
#ifndef LOCKSTEP_COMMON_BUILD_INFO_H_
#define LOCKSTEP_COMMON_BUILD_INFO_H_

#include <string>

#include "absl/strings/string_view.h"

namespace lockstep {

// The commit this binary was built from: 12 hex digits, "-dirty" appended
// when tracked files had uncommitted changes, "unknown" when the build had
// no checkout to ask (set -DLOCKSTEP_COMMIT=... for such builds).
absl::string_view BuildCommit();

// "lockstep 0.1.0 (wire protocol 1.8, commit 0341e55a1b2c)" for `program`.
std::string VersionLine(absl::string_view program);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_BUILD_INFO_H_
