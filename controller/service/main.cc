// lockstep-service: the shared results service (issue 40), a third binary
// beside lockstep and lockstep-agent. It is the one program that links
// PostgreSQL's client library and serves HTTPS: it runs as a daemon under
// its own system user on a host that need not run benchmarks (systemd unit
// lockstep-service.service), while the lockstep CLI of every site stays
// free of a database client and only pushes bundles to it.
//
//   lockstep-service init    --tls_dir DIR --host NAME[,NAME]   the service CA and certificate
//   lockstep-service admit   SITE --db CONNINFO --tls_dir DIR --out DIR   a site's certificate
//   lockstep-service reader  NAME --db CONNINFO                 a reader token (printed once)
//   lockstep-service revoke  NAME --db CONNINFO
//   lockstep-service migrate --db CONNINFO
//   lockstep-service serve   --db CONNINFO --tls_dir DIR [--listen HOST:PORT]
//                            [--http_threads N] [--request_head_timeout_s S]
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <openssl/rand.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/files.h"
#include "common/flags.h"
#include "common/net.h"
#include "common/pem.h"
#include "common/tls_ca.h"
#include "controller/service/service_db.h"
#include "controller/service/service_http.h"
#include "controller/service/service_input.h"

namespace lockstep {
namespace {

constexpr std::array<FlagSpec, 9> kFlags = {{
    {.name = "db", .value_name = "CONNINFO",
     .default_value = "dbname=lockstep",
     .help = "the PostgreSQL database, as libpq's connection string"},
    {.name = "tls_dir", .value_name = "DIR", .default_value = "/etc/lockstep/service",
     .help = "the service's CA (ca.pem, ca.key) and certificate (service.pem, service.key)"},
    {.name = "listen", .value_name = "HOST:PORT", .default_value = "127.0.0.1:8443",
     .help = "serve: the address to listen on (HTTPS only; an IPv6 address in brackets, "
             "[::1]:8443)"},
    {.name = "http_threads", .kind = FlagKind::kUint, .value_name = "N", .default_value = "256",
     .help = "serve: connections served at once, a thread each (slow clients hold one too)",
     .min = 8, .max = 4096},
    {.name = "request_head_timeout_s", .kind = FlagKind::kUint, .value_name = "S",
     .default_value = "10",
     .help = "serve: close a connection that has not sent a whole request head this long after "
             "its TLS handshake began or its last answer",
     .min = 1, .max = 300},
    {.name = "out", .value_name = "DIR", .default_value = ".",
     .help = "admit: where the site's certificate and key are written (site-SITE.pem/.key)"},
    {.name = "host", .kind = FlagKind::kList, .value_name = "NAME,...",
     .default_value = "localhost,127.0.0.1",
     .help = "init: the names and addresses the service is reached at"},
    {.name = "days", .kind = FlagKind::kUint, .value_name = "N", .default_value = "825",
     .help = "init, admit: how long the certificates are valid", .min = 1, .max = 36500},
    {.name = "answer_delay_ms", .kind = FlagKind::kUint, .value_name = "MS",
     .help = "fault tests: answer a stored push this late", .max = 600000, .hidden = true},
}};

constexpr CommandSpec kSpec = {
    .program = "lockstep-service",
    .synopsis = "init|admit SITE|reader NAME|revoke NAME|migrate|serve [flags]",
    .summary = "the shared results service for many sites",
    .description =
        "Keeps the runs that sites push (lockstep push, lockstep run --push) in PostgreSQL and "
        "serves them over HTTPS: the web view for readers and sites, the API for lockstep's "
        "results commands. Sites authenticate with a certificate of the service's CA whose "
        "subject CN is the site; readers with a token. See docs/results-service.md.",
    .flags = kFlags,
};

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "lockstep-service: %s\n", std::string(s.message()).c_str());
  return s.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}

std::string NewToken() {
  unsigned char bytes[32];
  RAND_bytes(bytes, sizeof(bytes));
  std::string hex;
  for (unsigned char b : bytes) hex += absl::StrFormat("%02x", b);
  return hex;
}

void OnSignal(int) {
  static constexpr char kMessage[] = "lockstep-service: stopping\n";
  (void)!::write(2, kMessage, sizeof(kMessage) - 1);
  ::_exit(0);
}

int Serve(const ParsedFlags& f, ServiceDb& db) {
  auto listen = ParseListenAddress(f.GetString("listen"));
  if (!listen.ok()) return Fail(listen.status());
  ServiceOptions o;
  o.listen_host = listen->host;
  o.port = listen->port;
  o.http_threads = static_cast<int>(f.GetUint("http_threads"));
  o.request_head_timeout = absl::Seconds(f.GetUint("request_head_timeout_s"));
  const std::string dir = f.GetString("tls_dir");
  o.cert_path = dir + "/service.pem";
  o.key_path = dir + "/service.key";
  o.ca_path = dir + "/ca.pem";
  o.answer_delay_ms = static_cast<int>(f.GetUint("answer_delay_ms"));
  // The database may come later (systemd ordering, a restart): serve and say
  // 503 meanwhile; migrate as soon as it answers.
  absl::Status migrated = db.Migrate();
  if (!migrated.ok()) std::fprintf(stderr, "lockstep-service: %s\n", migrated.ToString().c_str());
  if (migrated.code() == absl::StatusCode::kFailedPrecondition) return Fail(migrated);
  ResultsService service(o, &db);
  if (absl::Status s = service.Start(); !s.ok()) return Fail(s);
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::printf("lockstep-service: serving https://%s/ (database %s)\n",
              JoinHostPort(o.listen_host, service.port()).c_str(),
              db.conninfo_for_display().c_str());
  std::fflush(stdout);
  while (!migrated.ok()) {  // keep trying until the database answers
    ::sleep(2);
    migrated = db.Migrate();
  }
  service.Wait();
  return 0;
}

// Places `staging`.pem and .key at `prefix`.pem and .key with link(2),
// which never replaces a file; `staging`'s files are removed either way.
absl::Status PlaceWithoutReplacing(const std::string& staging, const std::string& prefix) {
  absl::Status placed;
  std::vector<std::string> linked;
  for (const char* ext : {".key", ".pem"}) {
    const std::string to = prefix + ext;
    if (::link((staging + ext).c_str(), to.c_str()) != 0) {
      placed = absl::AlreadyExistsError(absl::StrCat(
          "cannot write ", to, ": ", std::strerror(errno),
          "; a credential's files are never written over: move them away or give another --out"));
      break;
    }
    linked.push_back(to);
  }
  if (!placed.ok()) {
    for (const std::string& path : linked) ::unlink(path.c_str());
  }
  for (const char* ext : {".key", ".pem"}) ::unlink((staging + ext).c_str());
  return placed;
}

// `admit SITE`: the name and the database are asked first, the certificate
// is written only where no file is (never over a site's credential: an
// admit of a site admitted already changes nothing), and its files are
// removed again when the database then refuses (an admit at the same time).
int AdmitSite(ServiceDb& db, const std::string& name, const std::string& tls_dir,
              const std::string& out, int days) {
  if (absl::Status s = CheckPrincipalName(name); !s.ok()) return Fail(s);
  auto p = db.FindPrincipal(name);
  if (p.ok() && p->revoked_unix_s == 0) {
    return Fail(absl::AlreadyExistsError(absl::StrCat(
        "\"", name, "\" is admitted already; revoke it first (lockstep-service revoke ", name,
        ") to issue a new credential; nothing was written")));
  }
  if (!p.ok() && !absl::IsNotFound(p.status())) return Fail(p.status());
  const std::string prefix = absl::StrCat(out, "/site-", name);
  for (const char* ext : {".pem", ".key"}) {
    if (::access((prefix + ext).c_str(), F_OK) == 0) {
      return Fail(absl::AlreadyExistsError(absl::StrCat(
          prefix, ext, " exists; a credential's files are never written over: move them away "
          "or give another --out; nothing was written")));
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  const std::string staging = absl::StrCat(out, "/.site-", name, ".", ::getpid());
  if (absl::Status s = IssueCertificate(tls_dir, staging, CertRole::kSite, name, {}, -3600, days);
      !s.ok()) {
    return Fail(s);
  }
  if (absl::Status s = PlaceWithoutReplacing(staging, prefix); !s.ok()) return Fail(s);
  auto pem = ReadFileToString(prefix + ".pem");
  auto cert = pem.ok() ? ParseCert(*pem, prefix + ".pem") : pem.status();
  absl::Status admitted =
      cert.ok() ? db.Admit(name, "site", "", CertSha256Hex(cert->get())) : cert.status();
  if (!admitted.ok()) {
    for (const char* ext : {".key", ".pem"}) ::unlink((prefix + ext).c_str());
    return Fail(admitted);
  }
  std::printf("admitted site %s: %s.pem and %s.key (give them to the site, with %s/ca.pem)\n",
              name.c_str(), prefix.c_str(), prefix.c_str(), tls_dir.c_str());
  return 0;
}

int Main(const std::vector<std::string>& args) {
  auto f = ParseFlags(args, kSpec);
  if (!f.ok()) return Fail(f.status());
  if (f->help() || f->positional().empty()) {
    std::printf("%s", FormatCommandHelp(kSpec).c_str());
    return f->help() ? 0 : 2;
  }
  const std::string cmd = f->positional()[0];
  const std::string name = f->positional().size() > 1 ? f->positional()[1] : "";
  const std::string dir = f->GetString("tls_dir");
  const int days = static_cast<int>(f->GetUint("days"));
  if (cmd == "init") {
    if (absl::Status s = CreateCa(dir, "lockstep results service CA", days); !s.ok()) {
      return Fail(s);
    }
    if (absl::Status s = IssueCertificate(dir, dir + "/service", CertRole::kService,
                                          f->GetList("host")[0],
                                          f->GetList("host"), -3600, days);
        !s.ok()) {
      return Fail(s);
    }
    std::printf("wrote %s/ca.pem, ca.key, service.pem, service.key\n", dir.c_str());
    return 0;
  }
  ServiceDb db(f->GetString("db"));
  if (cmd == "serve") return Serve(*f, db);
  if (absl::Status s = db.Migrate(); !s.ok()) return Fail(s);
  if (cmd == "migrate") {
    std::printf("schema version %d\n", kSchemaVersion);
    return 0;
  }
  if (name.empty()) return Fail(absl::InvalidArgumentError(absl::StrCat(cmd, ": give a name")));
  if (cmd == "admit") return AdmitSite(db, name, dir, f->GetString("out"), days);
  if (cmd == "reader") {
    const std::string token = NewToken();
    if (absl::Status s = db.Admit(name, "reader", Sha256Hex(token)); !s.ok()) return Fail(s);
    std::printf("%s\n", token.c_str());
    std::fprintf(stderr, "reader %s: sign in once at https://HOST:PORT/login?token=%s "
                 "(the token is shown only now)\n", name.c_str(), token.c_str());
    return 0;
  }
  if (cmd == "revoke") {
    if (absl::Status s = db.Revoke(name); !s.ok()) return Fail(s);
    std::printf("revoked %s\n", name.c_str());
    return 0;
  }
  return Fail(absl::InvalidArgumentError(absl::StrCat(
      "unknown command \"", cmd, "\" (init, admit, reader, revoke, migrate, serve)")));
}

}  // namespace
}  // namespace lockstep

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return lockstep::Main(args);
}
