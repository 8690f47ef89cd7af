// The results service's HTTPS front (issue 40): one SSLServer of
// cpp-httplib on the service's certificate, asking every client for a
// certificate issued by the service's CA but not requiring one, so that
// people read with a reader token in a browser while sites push with their
// certificates. Nothing is served in clear text.
//
// Who is asking (Authenticate): a client certificate that chains to the CA
// names a site by its Subject CN, which must be admitted and not revoked;
// else a reader's token (the lockstep_token cookie set by /login?token=...,
// or "Authorization: Bearer TOKEN"), checked against its SHA-256 in the
// database. Anything else is refused, naming the subject and what to do.
//
//   POST /api/v1/runs                a site pushes a RunBundle (body): the
//                                    hash, signature and chain are checked
//                                    (controller/results/bundle.h), the
//                                    bundle's site must be the certificate's;
//                                    201 stored, 200 already stored
//   POST /api/v1/runs/RUN/visibility "shared", "private" or "embargo DATE"
//   GET  /api/v1/runs?site=&plan=&class=&limit=   JSON lines of runs
//   GET  /api/v1/runs/RUN/run.json   the run's run.json as pushed
//   GET  /, /index.csv, /sites/SITE/plans/PLAN[.csv], /runs/RUN[.csv|.lsbundle],
//        /classes/HASH[.csv]         the pages (service_pages.h)
//   GET  /login?token=T[&next=/PATH] sets the reader's cookie (HttpOnly,
//                                    Secure, SameSite=Lax), then to PATH
//
// Before any of them (the pre-routing handler): a path or query parameter
// that is not UTF-8 without NUL is 400 naming it (service_input.h), and a
// body is refused unread unless CheckBeforeBody passes. Every error answer
// has a body that says what went wrong, httplib's own (404, 413) too.
//
// The database unreachable: every request that needs it answers 503 with
// the reason, and the next request connects again (service_db.h).
#ifndef LOCKSTEP_CONTROLLER_SERVICE_SERVICE_HTTP_H_
#define LOCKSTEP_CONTROLLER_SERVICE_SERVICE_HTTP_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "controller/results/bundle.h"
#include "controller/service/service_db.h"

namespace httplib {
class SSLServer;
}

namespace lockstep {

class HeadDeadline;

struct ServiceOptions {
  std::string listen_host = "127.0.0.1";
  int port = 8443;                 // 0: any free port (port() says which)
  std::string cert_path;           // the service's certificate (PEM)
  std::string key_path;            // its key
  std::string ca_path;             // the service's CA: sites' certificates chain to it
  size_t max_bundle_bytes = kMaxBundleBytes;  // what push sends at most
  int answer_delay_ms = 0;         // fault tests only: answer a stored push this late
  // Connections served at once, one thread each for as long as the
  // connection lasts (cpp-httplib's pool); slow clients count.
  int http_threads = 256;
  // A connection that has not sent a complete request head this long after
  // its TLS handshake began, or after its last answer, is closed
  // (head_deadline.h).
  absl::Duration request_head_timeout = absl::Seconds(10);
};

class ResultsService {
 public:
  ResultsService(ServiceOptions options, ServiceDb* db);
  ~ResultsService();
  // Binds and starts serving on its own thread. Errors name the address or
  // the TLS file.
  absl::Status Start();
  int port() const { return port_; }
  // Blocks until Stop() (or a signal handler calling Stop()).
  void Wait();
  void Stop();

 private:
  void Routes();
  ServiceOptions options_;
  ServiceDb* db_;
  std::string ca_pem_;
  // Before server_: it outlives the server's connections.
  std::unique_ptr<HeadDeadline> head_deadline_;
  std::unique_ptr<httplib::SSLServer> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_SERVICE_SERVICE_HTTP_H_
