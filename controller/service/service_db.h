// The results service's PostgreSQL store (issue 40): the schema and its
// versioned migrations, the principals (sites and readers), and the runs
// pushed as bundles, kept whole (bundle bytes) beside typed rows so that the
// pages are SQL queries with indexes:
//
//   schema_version  one row: the schema's version (kSchemaVersion)
//   principals      name, role (site | reader), token_sha256 (readers),
//                   cert_sha256 (a site's certificate as admitted), admitted
//                   and revoked instants
//   runs            run id (kept across sites and migrations), content
//                   sha256 (unique: a push is idempotent), site, plan name
//                   and sha256, workload hash and class, system name and the
//                   SystemDescription, started_at, status, client count,
//                   visibility (shared | private) and embargo, the bundle
//   results         (run, result key): operation, median/min/max MiB/s over
//                   the repetitions, repetitions, tasks
//
// One ServiceDb is shared by the service's threads: it keeps a small pool of
// connections, drops one that broke, and connects again on the next
// request, so a PostgreSQL restarted under the service is reconnected to by
// itself. While the database cannot be reached every call returns
// Unavailable naming the database and saying the service will reconnect.
#ifndef LOCKSTEP_CONTROLLER_SERVICE_SERVICE_DB_H_
#define LOCKSTEP_CONTROLLER_SERVICE_SERVICE_DB_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "controller/results/visibility.h"
#include "lockstep/v1/bundle.pb.h"

namespace lockstep {

inline constexpr int kSchemaVersion = 3;

struct Principal {
  std::string name;
  std::string role;  // "site" or "reader"
  int64_t admitted_unix_s = 0;
  int64_t revoked_unix_s = 0;  // 0: not revoked
  // A site's: hex SHA-256 of the DER of the certificate it was admitted with
  // (CertSha256Hex); "" for a reader, and for a site admitted before schema 3.
  std::string cert_sha256;
};

// What a push did.
enum class PushOutcome { kStored, kAlreadyStored };

class ServiceDb {
 public:
  // `conninfo`: libpq's ("host=/tmp/x port=5432 dbname=lockstep user=lockstep").
  // At most `max_connections` are open at once (PostgreSQL's max_connections
  // is 100 by default, and the service serves more clients at once than
  // that); a call waits up to 30 s for one, then is Unavailable.
  explicit ServiceDb(std::string conninfo, int max_idle_connections = 8,
                     int max_connections = 32);
  ~ServiceDb();
  ServiceDb(const ServiceDb&) = delete;
  ServiceDb& operator=(const ServiceDb&) = delete;

  // Runs `body` on a pooled connection (REQUIRES: not from within another
  // With's body). Exceptions of libpqxx become
  // statuses: a broken or refused connection is Unavailable (the connection
  // is dropped; the next call connects again), an SQL error Internal.
  absl::Status With(const std::function<void(pqxx::connection&)>& body);

  // Brings the schema to kSchemaVersion, one migration per transaction,
  // under an advisory lock (two services starting at once migrate once).
  // FailedPrecondition when the database is newer than this build.
  absl::Status Migrate();
  absl::StatusOr<int> Version();

  // Admits `name` (InvalidArgument unless CheckPrincipalName passes) with
  // `role`; a reader's token is stored as its SHA-256, a site's certificate
  // as its `cert_sha256`, the only one then taken for it. AlreadyExists when
  // admitted and not revoked; a revoked name is admitted again (a new
  // certificate or token: the old one stays refused).
  absl::Status Admit(const std::string& name, const std::string& role,
                     const std::string& token_sha256, const std::string& cert_sha256 = "");
  absl::Status Revoke(const std::string& name);
  // NotFound when not admitted.
  absl::StatusOr<Principal> FindPrincipal(const std::string& name);
  absl::StatusOr<Principal> FindReaderByToken(const std::string& token_sha256);

  // Stores a verified bundle (content parsed from it, its hash) with its
  // typed rows and `visibility`, in one transaction: a run pushed private is
  // never seen by another site, not even for a moment. The same content
  // hash again is kAlreadyStored (its visibility as it was). AlreadyExists
  // when the run id is stored with another content: naming both hashes when
  // the stored run is the same site's, neither its site nor its hash when it
  // is another's. InvalidArgument when a text column's value holds NUL
  // (service_input.h CheckStorableText, naming the field).
  absl::StatusOr<PushOutcome> StoreRun(const v1::RunBundle& bundle,
                                       const v1::BundleContent& content,
                                       const RunVisibility& visibility);
  // Only the run's own site may: another site's run is NotFound, as a run
  // that does not exist is, word for word (it may be private).
  absl::Status SetVisibility(const std::string& site, const std::string& run_id,
                             const RunVisibility& visibility);

  // The connection string without its password (for logs and messages).
  const std::string& conninfo_for_display() const { return shown_conninfo_; }

 private:
  absl::Status OnConnection(const std::function<void(pqxx::connection&)>& body);

  std::string conninfo_;
  std::string shown_conninfo_;
  int max_idle_;
  int max_in_use_;
  std::mutex mu_;
  std::condition_variable slot_free_;
  int in_use_ = 0;  // guarded by mu_: With calls running
  std::vector<std::unique_ptr<pqxx::connection>> idle_;  // guarded by mu_
};

// The visibility rule as SQL over `runs r`, for a viewer whose own site is
// the first query parameter ($1; "" for a reader): the viewer's own runs,
// and the shared runs of every site that are not under embargo.
inline constexpr char kVisibleSql[] =
    "(r.site = $1 OR (r.visibility = 'shared' AND (r.embargo_until IS NULL OR "
    "r.embargo_until <= now())))";

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_SERVICE_SERVICE_DB_H_
