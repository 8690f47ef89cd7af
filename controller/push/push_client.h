// Sending run bundles to a results service (issue 40), with nothing lost:
// a bundle that cannot be delivered (the service unreachable, or answering
// 5xx: its database down) waits in a local spool directory, one
// SHA256.lsbundle file each, until a later push or run sends it. A push is
// idempotent on the service (the content hash), so a retry after a push
// whose answer was lost stores nothing twice.
#ifndef LOCKSTEP_CONTROLLER_PUSH_PUSH_CLIENT_H_
#define LOCKSTEP_CONTROLLER_PUSH_PUSH_CLIENT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "controller/results/visibility.h"
#include "lockstep/v1/bundle.pb.h"

namespace lockstep {

inline constexpr char kDefaultSpoolDir[] = "lockstep-results/spool";
// Below the spool: bundles the service refused, kept as evidence and never
// sent again by themselves.
inline constexpr char kRefusedSpoolDir[] = "refused";

struct PushTarget {
  std::string url;        // https://HOST:PORT
  std::string cert_path;  // the site's certificate (its CN is the site)
  std::string key_path;
  std::string ca_path;    // the service's CA: the service's certificate must chain to it
  int connect_timeout_s = 5;
  int read_timeout_s = 120;
};

struct PushResult {
  enum Kind { kStored, kAlreadyStored, kRefused, kUnreachable } kind = kUnreachable;
  int http_status = 0;    // 0 when no answer came
  std::string message;    // the service's text, or why it could not be reached
  bool spooled = false;   // kUnreachable: a copy waits in the spool
  bool delivered() const { return kind == kStored || kind == kAlreadyStored; }
};

// InvalidArgument naming the URL when it is not https://HOST[:PORT][/] (or
// https://[IPv6][:PORT]) with a port from 1 to 65535.
absl::Status CheckServiceUrl(const std::string& url);

// One POST of the serialised bundle, asking that the run be stored with
// `visibility` (?visibility=, when not shared). Never spools by itself. A
// bundle larger than kMaxBundleBytes is refused here, unsent.
PushResult PushBundle(const PushTarget& target, const v1::RunBundle& bundle,
                      const RunVisibility& visibility);

// GET `path` (with its query) from the service as the site of `target`:
// the body on 200; otherwise Unavailable (unreachable, 5xx) or the
// service's refusal as PermissionDenied/NotFound/InvalidArgument, with its text.
absl::StatusOr<std::string> ServiceGet(const PushTarget& target, const std::string& path);

// Sets who else sees the stored run `run_id` of the site of `target`
// (POST /api/v1/runs/ID/visibility); errors as ServiceGet's.
absl::Status SetRunVisibility(const PushTarget& target, const std::string& run_id,
                              const RunVisibility& visibility);

// The spool: SPOOL/SHA256.lsbundle files written atomically, the content's
// SHA-256 as computed here; a bundle pushed with another visibility than
// shared keeps it in its name (SHA256.private.lsbundle,
// SHA256.embargo_2027-03-01.lsbundle), so that it is sent as asked later.
absl::Status SpoolBundle(const std::string& spool_dir, const v1::RunBundle& bundle,
                         const RunVisibility& visibility);
// Paths of the spooled bundles, oldest first.
std::vector<std::string> SpooledBundles(const std::string& spool_dir);
// The visibility a spooled bundle was pushed with, from its name (shared
// when its name says none or nothing this version reads).
RunVisibility SpooledVisibility(const std::string& path);

// Pushes `bundle`; when it was not delivered for a reason that may pass
// (unreachable, 5xx) it is spooled (PushResult kUnreachable, message says
// so); when it was delivered and a copy was spooled, the copy is removed.
PushResult PushOrSpool(const PushTarget& target, const std::string& spool_dir,
                       const v1::RunBundle& bundle, const RunVisibility& visibility);

// Moves a spooled bundle the service refused to SPOOL/refused/ (the same
// name), so that it is kept and not sent again by every later push; its new
// path.
absl::StatusOr<std::string> SetAsideRefused(const std::string& spooled_path);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PUSH_PUSH_CLIENT_H_
