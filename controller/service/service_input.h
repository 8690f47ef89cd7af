// What the results service takes from a request or its command line, checked
// before it reaches PostgreSQL, a file name or a socket: text PostgreSQL can
// keep (UTF-8, no NUL: a text column holds neither a stray byte nor NUL, and
// libpq would cut a value at NUL), numbers within their range, names a
// certificate and a file can carry. Each refusal is InvalidArgument (400)
// naming what was refused.
#ifndef LOCKSTEP_CONTROLLER_SERVICE_SERVICE_INPUT_H_
#define LOCKSTEP_CONTROLLER_SERVICE_SERVICE_INPUT_H_

#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lockstep {

// A site's or reader's name (`lockstep-service admit SITE`, `reader NAME`):
// 1 to 64 of [A-Za-z0-9._-], not "." or "..": it is the Subject CN of the
// site's certificate (X.509 bounds a CN at 64) and part of the file names
// site-NAME.pem and site-NAME.key.
absl::Status CheckPrincipalName(std::string_view name);

// `text` as a value of a text column: UTF-8 without NUL. `what` names it in
// the refusal ("run.json name").
absl::Status CheckStorableText(std::string_view what, std::string_view text);

// A request's decoded path and each query parameter's name and value are
// storable text (CheckStorableText): "the path", "the query parameter site".
absl::Status CheckRequestText(std::string_view path,
                              const std::multimap<std::string, std::string>& params);

// GET /api/v1/runs?limit=N: 1 to kMaxRunsListed.
inline constexpr int kMaxRunsListed = 100000;
absl::StatusOr<int> ParseRunsLimit(std::string_view text);

// `lockstep-service serve --listen`: "HOST:PORT", "[IPV6]:PORT" (SplitHostPort
// of common/net.h), or an IPv6 address without brackets split at its last
// colon ("::1:8443"). PORT 0 to
// 65535 (0: any free port).
struct ListenAddress {
  std::string host;  // without brackets
  int port = 0;
};
absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view text);
// (Back to "HOST:PORT", "[IPV6]:PORT": JoinHostPort of common/net.h.)

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_SERVICE_SERVICE_INPUT_H_
