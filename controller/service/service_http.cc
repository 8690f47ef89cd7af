#include "controller/service/service_http.h"

#include <google/protobuf/util/json_util.h>
#include <httplib.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <regex>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/files.h"
#include "common/net.h"
#include "common/pem.h"
#include "common/status_macros.h"
#include "common/tls_ca.h"
#include "controller/results/bundle.h"
#include "controller/results/history.h"
#include "controller/results/report.h"
#include "controller/results/run_json.h"
#include "controller/results/visibility.h"
#include "controller/service/head_deadline.h"
#include "controller/service/service_input.h"
#include "controller/service/service_pages.h"
#include "controller/service/service_queries.h"

namespace lockstep {
namespace {

int HttpCode(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kUnavailable: return 503;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kUnauthenticated: return 401;
    case absl::StatusCode::kInvalidArgument: return 400;
    case absl::StatusCode::kAlreadyExists: return 409;
    case absl::StatusCode::kDataLoss: return 422;
    default: return 500;
  }
}

// An internal error's text (a database error, a query) is for the service's
// log, not for whoever asked: they get its time to quote to the admin.
void Refuse(httplib::Response& res, const absl::Status& s) {
  res.status = HttpCode(s);
  if (res.status == 500) {
    const std::string when =
        absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
    std::fprintf(stderr, "lockstep-service: %s: internal error: %s\n", when.c_str(),
                 std::string(s.message()).c_str());
    res.set_content(absl::StrCat("lockstep-service: internal error at ", when,
                                 "; the service's log has the details\n"),
                    "text/plain");
    return;
  }
  res.set_content(absl::StrCat("lockstep-service: ", s.message(), "\n"), "text/plain");
}

// The connection's verified client certificate: its Subject CN and its
// Lockstep role (common/tls_ca.h); cn is "" when the client sent none.
struct PeerCertificate {
  std::string cn;
  absl::StatusOr<CertRole> role = CertRole::kNone;
  std::string sha256;  // CertSha256Hex
};

PeerCertificate PeerCertificateOf(const httplib::Request& req) {
  PeerCertificate peer;
  if (req.ssl == nullptr) return peer;
  X509* cert = SSL_get1_peer_certificate(req.ssl);
  if (cert == nullptr) return peer;
  char cn[256] = {0};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof(cn));
  peer.cn = cn;
  peer.sha256 = CertSha256Hex(cert);
  BIO* bio = BIO_new(BIO_s_mem());
  std::string pem;
  if (bio != nullptr && PEM_write_bio_X509(bio, cert) == 1) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    if (n > 0) pem.assign(data, static_cast<size_t>(n));
  }
  BIO_free(bio);
  X509_free(cert);
  peer.role = CertRoleOfPem(pem, absl::StrCat("the client certificate CN=", peer.cn));
  return peer;
}

std::string TokenOf(const httplib::Request& req) {
  const std::string auth = req.get_header_value("Authorization");
  if (absl::StartsWith(auth, "Bearer ")) return auth.substr(7);
  for (absl::string_view part : absl::StrSplit(req.get_header_value("Cookie"), ';')) {
    part = absl::StripAsciiWhitespace(part);
    if (absl::ConsumePrefix(&part, "lockstep_token=")) return std::string(part);
  }
  return "";
}

absl::StatusOr<Viewer> Authenticate(ServiceDb& db, const httplib::Request& req) {
  const PeerCertificate peer = PeerCertificateOf(req);
  const std::string& cn = peer.cn;
  if (!cn.empty()) {
    if (!peer.role.ok()) return absl::PermissionDeniedError(peer.role.status().message());
    if (*peer.role != CertRole::kSite) {
      return absl::PermissionDeniedError(absl::StrCat(
          "the client certificate CN=", cn, " carries the role ",
          std::string(CertRoleName(*peer.role)),
          ", not a site's: only a site certificate of this service (`lockstep-service admit ", cn,
          "`) may push; ", ReissueCommand(CertRole::kSite, cn)));
    }
    auto p = db.FindPrincipal(cn);
    if (p.status().code() == absl::StatusCode::kNotFound || (p.ok() && p->role != "site")) {
      return absl::PermissionDeniedError(absl::StrCat(
          "the client certificate's subject CN=", cn, " is not an admitted site of this service;"
          " the service's admin admits a site with `lockstep-service admit ", cn, "`"));
    }
    if (!p.ok()) return p.status();
    if (p->revoked_unix_s != 0) {
      return absl::PermissionDeniedError(absl::StrCat(
          "site ", cn, " (certificate CN=", cn, ") was revoked; ask the service's admin for a "
          "new credential (`lockstep-service admit ", cn, "`)"));
    }
    // The certificate it was admitted with, not any of its name: a site
    // revoked and admitted again gets a new one, and the old (perhaps the
    // stolen one) stays refused.
    if (!p->cert_sha256.empty() && p->cert_sha256 != peer.sha256) {
      return absl::PermissionDeniedError(absl::StrCat(
          "this certificate of site ", cn, " (sha256 ", peer.sha256.substr(0, 16),
          "...) is not the one it was last admitted with; use the credential of its latest "
          "`lockstep-service admit ", cn, "`"));
    }
    return Viewer{.name = cn, .is_site = true};
  }
  const std::string token = TokenOf(req);
  if (token.empty()) {
    return absl::UnauthenticatedError(
        "no credential: a site presents its client certificate (`lockstep-service admit SITE` "
        "issues one); a reader signs in once at /login?token=TOKEN (`lockstep-service reader "
        "NAME` makes one)");
  }
  auto p = db.FindReaderByToken(Sha256Hex(token));
  if (p.status().code() == absl::StatusCode::kNotFound) {
    return absl::UnauthenticatedError(
        "the reader token is unknown; ask the service's admin for one (`lockstep-service reader "
        "NAME`)");
  }
  if (!p.ok()) return p.status();
  if (p->revoked_unix_s != 0) {
    return absl::PermissionDeniedError(absl::StrCat("reader ", p->name, " was revoked"));
  }
  return Viewer{.name = p->name, .is_site = false};
}

constexpr char kBundleTypeAdvice[] =
    "send a run bundle as Content-Type: application/x-lockstep-bundle (curl --data-binary "
    "@RUN.lsbundle -H 'Content-Type: application/x-lockstep-bundle'), as lockstep push does";

// What a request with a body must pass before cpp-httplib reads it (it reads
// the body after the pre-routing handler): a declared length within
// `max_bytes`, no chunked transfer (0.11 enforces its payload limit only on
// a Content-Length), no Content-Encoding (0.11 inflates gzip and brotli
// without a limit), and a client certificate of this service's CA. Otherwise
// anyone who reaches the port could make the service hold gigabytes before
// a 401.
absl::Status CheckBeforeBody(size_t max_bytes, const httplib::Request& req) {
  const bool chunked = req.has_header("Transfer-Encoding");
  if (!chunked && !req.has_header("Content-Length")) return absl::OkStatus();  // no body
  if (chunked) {
    return absl::FailedPreconditionError(
        "a request body needs a Content-Length; chunked transfer is not taken");
  }
  if (req.has_header("Content-Encoding")) {
    return absl::UnimplementedError("a compressed request body is not taken; send it as is");
  }
  uint64_t length = 0;
  if (!absl::SimpleAtoi(req.get_header_value("Content-Length"), &length)) {
    return absl::InvalidArgumentError("the Content-Length is not a number");
  }
  if (length > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the body is ", length, " bytes; this service takes at most ", max_bytes));
  }
  if (length == 0) return absl::OkStatus();
  // A client certificate of this service's CA (TLS has verified its chain):
  // an admitted site, or one that was; its body is read and its request
  // answered in full (a revoked site is told so). No certificate: a reader
  // or no one, neither of whom sends a body.
  if (PeerCertificateOf(req).cn.empty()) {
    return absl::UnauthenticatedError(
        "no credential: a request with a body comes from a site, with its client certificate "
        "(`lockstep-service admit SITE` issues one)");
  }
  // httplib keeps a multipart body's parts out of the body (curl -F); a
  // form over its limit (curl --data-binary's type) is read and refused with
  // 413, which OwnErrorText explains.
  const std::string type = req.get_header_value("Content-Type");
  if (absl::StartsWith(type, "multipart/form-data")) {
    return absl::UnimplementedError(absl::StrCat(
        "a body of Content-Type ", type, " is a form, which this service does not take: ",
        kBundleTypeAdvice));
  }
  return absl::OkStatus();
}

using Handler = std::function<absl::Status(const Viewer&, const httplib::Request&,
                                           httplib::Response&)>;

httplib::Server::Handler Guarded(ServiceDb* db, Handler h) {
  return [db, h](const httplib::Request& req, httplib::Response& res) {
    auto viewer = Authenticate(*db, req);
    if (!viewer.ok()) return Refuse(res, viewer.status());
    absl::Status s = h(*viewer, req, res);
    if (!s.ok()) Refuse(res, s);
  };
}

bool WantsCsv(const httplib::Request& req) { return req.matches[req.matches.size() - 1] == ".csv"; }

absl::Status Push(ServiceDb& db, const std::string& ca_pem, int answer_delay_ms, const Viewer& v,
                  const httplib::Request& req, httplib::Response& res) {
  if (!v.is_site) {
    return absl::PermissionDeniedError(absl::StrCat(
        "reader ", v.name, " may not push: a site pushes with its certificate"));
  }
  const std::string origin = absl::StrCat("the bundle pushed by site ", v.name);
  auto bundle = ParseBundle(req.body, origin);
  if (!bundle.ok()) return bundle.status();
  BundleVerdict verdict = VerifyBundle(*bundle, ca_pem, origin);
  if (!verdict.ok()) {
    return absl::Status(verdict.status.code(),
                        absl::StrCat(verdict.status.message(), "; nothing was stored"));
  }
  if (verdict.content.site() != v.name) {
    return absl::PermissionDeniedError(absl::StrCat(
        "site ", v.name, " may push only runs under its own name; this bundle is site ",
        verdict.content.site(), "'s; nothing was stored"));
  }
  // Who else sees it, from the push's ?visibility= (the push command's
  // --visibility): stored with the run, never set a moment later.
  RunVisibility visibility;
  if (req.has_param("visibility")) {
    auto asked = ParseRunVisibility(req.get_param_value("visibility"));
    if (!asked.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(asked.status().message(),
                                                     "; nothing was stored"));
    }
    visibility = *asked;
  }
  auto outcome = db.StoreRun(*bundle, verdict.content, visibility);
  if (!outcome.ok()) return outcome.status();
  // Fault tests: the run is stored, the answer is late (the service is
  // killed before it leaves).
  if (answer_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(answer_delay_ms));
  const bool stored = *outcome == PushOutcome::kStored;
  res.status = stored ? 201 : 200;
  // An embargo that has ended is stored as given (a run that waited in a
  // site's spool past its embargo goes out as it was asked): the answer says
  // that the run is shared.
  std::string note;
  if (stored && !CheckChosenVisibility(visibility, absl::ToUnixSeconds(absl::Now())).ok()) {
    note = absl::StrCat("; its ", RunVisibilityText(visibility),
                        " has already ended, so it is shared");
  }
  res.set_content(absl::StrCat(stored ? "stored" : "already stored", " run ",
                               verdict.content.run_id(), " sha256 ", verdict.content_sha256,
                               note, "\n"),
                  "text/plain");
  return absl::OkStatus();
}

absl::Status Visibility(ServiceDb& db, const Viewer& v, const httplib::Request& req) {
  if (!v.is_site) return absl::PermissionDeniedError("only a run's own site changes who sees it");
  ASSIGN_OR_RETURN(const RunVisibility visibility, ParseRunVisibility(req.body));
  RETURN_IF_ERROR(CheckChosenVisibility(visibility, absl::ToUnixSeconds(absl::Now())));
  return db.SetVisibility(v.name, req.matches[1], visibility);
}

// One JSON line per run (v1::ServiceRunListing), printed by protobuf's JSON
// writer: a site's text is escaped, never spliced.
std::string RunsJson(const std::vector<RunRow>& runs) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string out;
  for (const RunRow& r : runs) {
    v1::ServiceRunListing l;
    l.set_run_id(r.run_id);
    l.set_site(r.site);
    l.set_plan(r.name);
    l.set_started_at(r.started_at);
    l.set_status(r.status);
    l.set_workload_hash(r.workload_hash);
    l.set_content_sha256(r.content_sha256);
    l.set_visibility(r.visibility);
    std::string line;
    // It fails only on a string that is not UTF-8, and each of these was
    // read from a parsed run.json, which is.
    (void)google::protobuf::util::MessageToJsonString(l, &line, options);
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

absl::StatusOr<std::string> RunJsonOf(ServiceDb& db, const Viewer& v, const std::string& id,
                                      RunRow* row, std::string* bundle_bytes) {
  auto r = QueryRun(db, v, id, bundle_bytes);
  if (!r.ok()) return r.status();
  *row = *r;
  v1::RunBundle bundle;
  v1::BundleContent content;
  if (!bundle.ParseFromString(*bundle_bytes) || !content.ParseFromString(bundle.content())) {
    return absl::DataLossError(absl::StrCat("the stored bundle of run ", id, " does not parse"));
  }
  return content.run_json();
}

// What httplib answers itself (no route: 404; a form over its limit: 413;
// a request it cannot parse: 400) comes with an empty body: these say why.
std::string OwnErrorText(const httplib::Request& req, int status) {
  const std::string type = req.get_header_value("Content-Type");
  if (status == 413 && absl::StartsWith(type, "application/x-www-form-urlencoded")) {
    return absl::StrCat("lockstep-service: a body of Content-Type ", type,
                        " is a form, taken up to ", CPPHTTPLIB_FORM_URL_ENCODED_PAYLOAD_MAX_LENGTH,
                        " bytes: ", kBundleTypeAdvice, "\n");
  }
  switch (status) {
    case 404:
      return "lockstep-service: nothing is served at this path; the pages are /, /index.csv, "
             "/sites/SITE/plans/PLAN[.csv], /runs/RUN_ID[.csv|.lsbundle] and "
             "/classes/HASH[.csv], the API /api/v1/runs (docs/results-service.md)\n";
    case 413:
      return absl::StrCat("lockstep-service: the body is larger than this service takes; ",
                          kBundleTypeAdvice, "\n");
    case 400:
      return "lockstep-service: the request is not HTTP this service reads\n";
    default:
      return absl::StrCat("lockstep-service: HTTP status ", status, "\n");
  }
}

// The answer of a request refused before its body is read (pre-routing).
httplib::Server::HandlerResponse RefuseUnread(httplib::Response& res, const absl::Status& s) {
  const int code = absl::IsFailedPrecondition(s)  ? 411
                   : absl::IsResourceExhausted(s) ? 413
                   : absl::IsUnimplemented(s)     ? 415
                                                  : 0;
  if (code == 0) {
    Refuse(res, s);  // a credential's refusal, or a path that is not text (400)
  } else {
    res.status = code;
    res.set_content(absl::StrCat("lockstep-service: ", s.message(), "\n"), "text/plain");
  }
  res.set_header("Connection", "close");  // the body is not read
  return httplib::Server::HandlerResponse::Handled;
}

// The server's limits: threads, keep-alive, the request head's deadline
// (`head`), the body's checks before it is read, and error bodies.
void SetLimits(httplib::SSLServer& server, HeadDeadline* head, const ServiceOptions& o) {
  const size_t threads = static_cast<size_t>(std::max(1, o.http_threads));
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // An idle keep-alive connection holds a thread too: short, and few requests.
  server.set_keep_alive_timeout(2);
  server.set_keep_alive_max_count(5);
  server.set_payload_max_length(o.max_bundle_bytes);
  server.set_pre_routing_handler(
      [head, max_bytes = o.max_bundle_bytes](const httplib::Request& req,
                                             httplib::Response& res) {
        head->HeadRead(req.ssl);
        absl::Status refused = CheckRequestText(req.path, req.params);
        if (refused.ok()) refused = CheckBeforeBody(max_bytes, req);
        if (refused.ok()) return httplib::Server::HandlerResponse::Unhandled;
        return RefuseUnread(res, refused);
      });
  server.set_logger(
      [head](const httplib::Request& req, const httplib::Response&) { head->Answered(req.ssl); });
  httplib::Server::HandlerWithResponse error_body = [](const httplib::Request& req,
                                                       httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    res.set_content(OwnErrorText(req, res.status), "text/plain");
    return httplib::Server::HandlerResponse::Handled;
  };
  server.set_error_handler(std::move(error_body));
}

}  // namespace

ResultsService::ResultsService(ServiceOptions options, ServiceDb* db)
    : options_(std::move(options)), db_(db) {}

ResultsService::~ResultsService() { Stop(); }

void ResultsService::Routes() {
  httplib::SSLServer& s = *server_;
  ServiceDb* db = db_;
  const std::string ca = ca_pem_;
  const int delay = options_.answer_delay_ms;
  s.Post("/api/v1/runs", Guarded(db, [db, ca, delay](const Viewer& v, const httplib::Request& req,
                                                     httplib::Response& res) {
           return Push(*db, ca, delay, v, req, res);
         }));
  s.Post(R"(/api/v1/runs/([^/]+)/visibility)",
         Guarded(db, [db](const Viewer& v, const httplib::Request& req, httplib::Response& res) {
           absl::Status st = Visibility(*db, v, req);
           if (st.ok()) res.set_content("ok\n", "text/plain");
           return st;
         }));
  s.Get("/api/v1/runs", Guarded(db, [db](const Viewer& v, const httplib::Request& req,
                                         httplib::Response& res) {
          int limit = 1000;
          if (req.has_param("limit")) {
            ASSIGN_OR_RETURN(limit, ParseRunsLimit(req.get_param_value("limit")));
          }
          auto runs = QueryRuns(*db, v, req.get_param_value("site"), req.get_param_value("plan"),
                                req.get_param_value("class"), limit);
          if (!runs.ok()) return runs.status();
          res.set_content(RunsJson(*runs), "application/x-ndjson");
          return absl::OkStatus();
        }));
  s.Get(R"(/api/v1/runs/([^/]+)/run\.json)",
        Guarded(db, [db](const Viewer& v, const httplib::Request& req, httplib::Response& res) {
          RunRow row;
          std::string bytes;
          auto json = RunJsonOf(*db, v, req.matches[1], &row, &bytes);
          if (!json.ok()) return json.status();
          res.set_content(*json, "application/json");
          return absl::OkStatus();
        }));
  s.Get("/login", [db](const httplib::Request& req, httplib::Response& res) {
    const std::string token = req.get_param_value("token");
    auto p = db->FindReaderByToken(Sha256Hex(token));
    if (!p.ok() || p->revoked_unix_s != 0) {
      res.status = p.ok() ? 403 : HttpCode(p.status()) == 404 ? 401 : HttpCode(p.status());
      res.set_content(ErrorPage("Sign-in refused", "the token is unknown or revoked; ask the "
                                "service's admin (lockstep-service reader NAME)"),
                      "text/html");
      return;
    }
    res.set_header("Set-Cookie", absl::StrCat("lockstep_token=", token,
                                              "; Path=/; Max-Age=2592000; HttpOnly; Secure; "
                                              "SameSite=Lax"));
    // Only a path of this service, never elsewhere: "/\\evil.example" is
    // "//evil.example" to a browser, so a path of plain characters only.
    std::string next = req.get_param_value("next");
    static const std::regex kOwnPath(R"(^/([A-Za-z0-9_.~%=&+-][A-Za-z0-9/_.~%?=&+-]*)?$)");
    if (!std::regex_match(next, kOwnPath)) next = "/";
    res.set_redirect(next, 303);
  });
  s.Get(R"(/(index\.csv)?)", Guarded(db, [db](const Viewer& v, const httplib::Request& req,
                                              httplib::Response& res) {
          auto rows = QuerySitePlans(*db, v);
          if (!rows.ok()) return rows.status();
          if (req.matches[1] == "index.csv") {
            res.set_content(IndexCsv(*rows), "text/csv");
          } else {
            res.set_content(IndexPage(v, *rows), "text/html; charset=utf-8");
          }
          return absl::OkStatus();
        }));
  // A plan's name may hold '/' (its link encodes it as %2F, which httplib
  // decodes before matching): the plan is the rest of the path.
  s.Get(R"(/sites/([^/]+)/plans/([\s\S]+?)(\.csv)?)",
        Guarded(db, [db](const Viewer& v, const httplib::Request& req, httplib::Response& res) {
          auto data = QueryTrend(*db, v, req.matches[1], req.matches[2], 1000);
          if (!data.ok()) return data.status();
          if (WantsCsv(req)) {
            res.set_content(TrendCsv(*data), "text/csv");
          } else {
            res.set_content(TrendPage(v, req.matches[1], req.matches[2], *data),
                            "text/html; charset=utf-8");
          }
          return absl::OkStatus();
        }));
  s.Get(R"(/runs/([^/]+?)(\.csv|\.lsbundle)?)",
        Guarded(db, [db](const Viewer& v, const httplib::Request& req, httplib::Response& res) {
          RunRow row;
          std::string bytes;
          auto json = RunJsonOf(*db, v, req.matches[1], &row, &bytes);
          if (!json.ok()) return json.status();
          if (req.matches[2] == ".lsbundle") {
            res.set_content(bytes, "application/octet-stream");
            return absl::OkStatus();
          }
          auto run = ParseRunJson(*json, absl::StrCat("run ", row.run_id));
          if (!run.ok()) return run.status();
          if (req.matches[2] == ".csv") {
            res.set_content(RenderCsv({*run}), "text/csv");
          } else {
            res.set_content(RunPage(v, row, *run), "text/html; charset=utf-8");
          }
          return absl::OkStatus();
        }));
  s.Get(R"(/classes/([0-9a-f]+)(\.csv)?)",
        Guarded(db, [db](const Viewer& v, const httplib::Request& req, httplib::Response& res) {
          auto data = QueryClass(*db, v, req.matches[1]);
          if (!data.ok()) return data.status();
          if (WantsCsv(req)) {
            res.set_content(ClassCsv(*data), "text/csv");
          } else {
            res.set_content(ClassPage(v, *data), "text/html; charset=utf-8");
          }
          return absl::OkStatus();
        }));
}

absl::Status ResultsService::Start() {
  auto ca = ReadFileToString(options_.ca_path);
  if (!ca.ok()) return ca.status();
  ca_pem_ = *ca;
  std::string tls_error;
  const ServiceOptions& o = options_;
  head_deadline_ = std::make_unique<HeadDeadline>(options_.request_head_timeout);
  HeadDeadline* head = head_deadline_.get();
  server_ = std::make_unique<httplib::SSLServer>([&o, &tls_error, head](SSL_CTX& ctx) {
    SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
    if (SSL_CTX_use_certificate_chain_file(&ctx, o.cert_path.c_str()) != 1) {
      tls_error = absl::StrCat("cannot use the service certificate ", o.cert_path);
    } else if (SSL_CTX_use_PrivateKey_file(&ctx, o.key_path.c_str(), SSL_FILETYPE_PEM) != 1 ||
               SSL_CTX_check_private_key(&ctx) != 1) {
      tls_error = absl::StrCat("cannot use the service key ", o.key_path, " with ", o.cert_path);
    } else if (SSL_CTX_load_verify_locations(&ctx, o.ca_path.c_str(), nullptr) != 1) {
      tls_error = absl::StrCat("cannot read the service CA ", o.ca_path);
    }
    if (!tls_error.empty()) return false;
    SSL_CTX_set_client_CA_list(&ctx, SSL_load_client_CA_file(o.ca_path.c_str()));
    // Ask for a site certificate, verify it when sent, accept none (readers).
    SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER, nullptr);
    head->Watch(&ctx);
    return true;
  });
  if (!server_->is_valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("lockstep-service TLS: ", tls_error.empty() ? "bad TLS set-up" : tls_error,
                     "; make them with `lockstep-service init`"));
  }
  SetLimits(*server_, head_deadline_.get(), options_);
  Routes();
  if (options_.port == 0) {
    port_ = server_->bind_to_any_port(options_.listen_host);
  } else {
    port_ = server_->bind_to_port(options_.listen_host, options_.port) ? options_.port : -1;
  }
  if (port_ <= 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ",
                                               JoinHostPort(options_.listen_host, options_.port),
                                               " (in use? another address?)"));
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return absl::OkStatus();
}

void ResultsService::Wait() {
  if (thread_.joinable()) thread_.join();
}

void ResultsService::Stop() {
  if (server_ != nullptr) server_->stop();
  Wait();
}

}  // namespace lockstep
