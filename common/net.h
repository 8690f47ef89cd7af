// Host:port handling shared by agent and controller.
#ifndef LOCKSTEP_COMMON_NET_H_
#define LOCKSTEP_COMMON_NET_H_

#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"

namespace lockstep {

// "host:port", "[v6]:port" → {host, port}. InvalidArgument names the text.
absl::StatusOr<std::pair<std::string, int>> SplitHostPort(std::string_view address);
std::string JoinHostPort(const std::string& host, int port);
// gethostname(2); "" when it fails.
std::string LocalHostName();

// IsLoopbackHost() lives in common/tls.h, beside the rule it serves.

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_NET_H_
