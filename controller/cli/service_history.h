// The results commands against a results service (issue 40): `--db
// https://HOST:PORT` for history, compare, gate, report and export. The
// runs the site may read (its own and every site's shared ones, newest
// first, at most LOCKSTEP_SERVICE_RUNS, default 2000) are copied from the
// service's API into a temporary history db, and the command works on that
// as on a local one, so a site's CI gate can take the shared history as its
// baseline. The site's credential and the service's CA come from the
// environment: LOCKSTEP_SERVICE_CREDENTIALS=DIR (lockstep-service admit's
// files) and LOCKSTEP_SERVICE_CA=FILE.
#ifndef LOCKSTEP_CONTROLLER_CLI_SERVICE_HISTORY_H_
#define LOCKSTEP_CONTROLLER_CLI_SERVICE_HISTORY_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace lockstep {

// `db` unchanged when it is not an https:// URL; otherwise the path of the
// temporary copy (removed at exit). Errors name the service and the fix.
absl::StatusOr<std::string> HistoryDbFor(const std::string& db);

// For `db` a results service: the site of the credential the commands use
// there (its certificate's CN); nullopt for a local db.
absl::StatusOr<std::optional<std::string>> ServiceSiteFor(const std::string& db);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_CLI_SERVICE_HISTORY_H_
