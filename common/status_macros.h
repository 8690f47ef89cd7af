// Small Status helpers: this Debian absl ships no status macros.
#ifndef LOCKSTEP_COMMON_STATUS_MACROS_H_
#define LOCKSTEP_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define LOCKSTEP_CONCAT_INNER_(a, b) a##b
#define LOCKSTEP_CONCAT_(a, b) LOCKSTEP_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` (an absl::Status) is not OK.
#define RETURN_IF_ERROR(expr)                        \
  do {                                               \
    ::absl::Status _lockstep_status = (expr);        \
    if (!_lockstep_status.ok()) return _lockstep_status; \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, F());` : x = *F(), or return F()'s status.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL_(LOCKSTEP_CONCAT_(_lockstep_or_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                           \
  if (!tmp.ok()) return tmp.status();          \
  lhs = std::move(*tmp)

namespace lockstep {

// Prefixes a status message with context, keeping its code and payloads:
//   Annotate(s, "agent 10.0.0.5:7070") -> "agent 10.0.0.5:7070: <message>".
absl::Status Annotate(const absl::Status& status, std::string_view context);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_STATUS_MACROS_H_
