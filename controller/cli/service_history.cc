#include "controller/cli/service_history.h"

#include <cstdlib>
#include <filesystem>
#include <string>

#include <google/protobuf/util/json_util.h>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/json.h"
#include "common/status_macros.h"
#include "common/text_escape.h"
#include "controller/push/push_client.h"
#include "controller/results/bundle.h"
#include "controller/results/history.h"
#include "controller/results/run_json.h"

namespace lockstep {
namespace {

std::string g_mirror_dir;
void RemoveMirror() {
  std::error_code ec;
  if (!g_mirror_dir.empty()) std::filesystem::remove_all(g_mirror_dir, ec);
}

// One line of the service's run list, parsed as JSON (its values are the
// sites' text); its run id checked before it goes into a URL.
absl::StatusOr<v1::ServiceRunListing> ListingOf(absl::string_view line, const std::string& db) {
  v1::ServiceRunListing l;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // a later service's fields
  if (!google::protobuf::util::JsonStringToMessage(std::string(line), &l, options).ok()) {
    return absl::DataLossError(absl::StrCat(db, " listed a run in a line that is not a run "
                                            "listing: ", absl::CEscape(line.substr(0, 200))));
  }
  if (!IsSafeRunId(l.run_id())) {
    return absl::DataLossError(absl::StrCat(db, " listed a run id that is not one: \"",
                                            absl::CEscape(l.run_id().substr(0, 200)), "\""));
  }
  return l;
}

}  // namespace

absl::StatusOr<std::string> HistoryDbFor(const std::string& db) {
  if (!absl::StartsWith(db, "https://")) return db;
  const char* creds = std::getenv("LOCKSTEP_SERVICE_CREDENTIALS");
  const char* ca = std::getenv("LOCKSTEP_SERVICE_CA");
  if (creds == nullptr || ca == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--db ", db, " is a results service: set LOCKSTEP_SERVICE_CREDENTIALS=DIR (the site's "
        "certificate and key) and LOCKSTEP_SERVICE_CA=FILE (the service's CA)"));
  }
  int limit = 2000;
  if (const char* n = std::getenv("LOCKSTEP_SERVICE_RUNS");
      n != nullptr && (!absl::SimpleAtoi(n, &limit) || limit < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "LOCKSTEP_SERVICE_RUNS=", EscapeForTerminal(n),
        ": give how many of the newest runs to read from the service, a number from 1"));
  }
  ASSIGN_OR_RETURN(SiteCredential cred, ReadSiteCredentialDir(creds, ""));
  PushTarget target{.url = std::string(absl::StripSuffix(db, "/")), .cert_path = cred.cert_path,
                    .key_path = cred.key_path, .ca_path = ca};
  ASSIGN_OR_RETURN(std::string list, ServiceGet(target, absl::StrCat("/api/v1/runs?limit=", limit)));
  char tmpl[] = "/tmp/lockstep-service-history.XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return absl::InternalError("cannot make a temporary directory");
  g_mirror_dir = tmpl;
  std::atexit(RemoveMirror);
  const std::string path = absl::StrCat(g_mirror_dir, "/history.db");
  ASSIGN_OR_RETURN(std::unique_ptr<HistoryStore> store, HistoryStore::Open(path));
  for (absl::string_view line : absl::StrSplit(list, '\n', absl::SkipEmpty())) {
    ASSIGN_OR_RETURN(v1::ServiceRunListing listed, ListingOf(line, db));
    const std::string& id = listed.run_id();
    ASSIGN_OR_RETURN(std::string json, ServiceGet(target, absl::StrCat("/api/v1/runs/", id,
                                                                       "/run.json")));
    ASSIGN_OR_RETURN(v1::RunRecord run, ParseRunJson(json, absl::StrCat(db, " run ", id)));
    if (run.run_id() != id) {  // the record is another run's: not mirrored under this id
      return absl::DataLossError(absl::StrCat(db, " answered run ", id, " with the record of run ",
                                              absl::CEscape(run.run_id())));
    }
    RETURN_IF_ERROR(store->Record(run, listed.site(), {}, json));
  }
  return path;
}

absl::StatusOr<std::optional<std::string>> ServiceSiteFor(const std::string& db) {
  if (!absl::StartsWith(db, "https://")) return std::nullopt;
  const char* creds = std::getenv("LOCKSTEP_SERVICE_CREDENTIALS");
  if (creds == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--db ", db, " is a results service: set LOCKSTEP_SERVICE_CREDENTIALS=DIR"));
  }
  ASSIGN_OR_RETURN(SiteCredential cred, ReadSiteCredentialDir(creds, ""));
  ASSIGN_OR_RETURN(std::string site, CertificateSite(cred.cert_pem, cred.cert_path));
  return site;
}

}  // namespace lockstep
