// Names of wire enums as users write them in plans and read them in output.
#ifndef LOCKSTEP_COMMON_NAMES_H_
#define LOCKSTEP_COMMON_NAMES_H_

#include <optional>
#include <string_view>

#include "lockstep/v1/agent.pb.h"

namespace lockstep {

const char* RoleName(v1::Role role);            // "client", "oss", "mds"
std::optional<v1::Role> ParseRole(std::string_view name);
const char* PhaseKindName(v1::PhaseKind kind);  // "write", "read"
std::optional<v1::PhaseKind> ParsePhaseKind(std::string_view name);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_NAMES_H_
