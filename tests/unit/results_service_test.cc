// The results service's input checks (controller/service/service_input.h)
// and its HTTPS front in this process (service_http.h), on loopback with a
// CA made here and a database that cannot be reached: what the service
// answers before it asks PostgreSQL needs none. The pages, pushes and
// visibility against a real PostgreSQL are tests/service/service_test.sh.
#include <httplib.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "common/tls_ca.h"
#include "controller/service/service_db.h"
#include "controller/service/service_http.h"
#include "common/net.h"
#include "controller/service/service_input.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

std::string MessageOf(const absl::Status& s) { return std::string(s.message()); }

// Before this rule, `admit "team/a"` failed on the file site-team/a.key.
TEST(ServiceInput, APrincipalNameIsOneFileNameAndACommonName) {
  for (const char* ok : {"sitea", "hlrs-hawk", "site_1.b", "A"}) {
    EXPECT_TRUE(CheckPrincipalName(ok).ok()) << ok;
  }
  const absl::Status slash = CheckPrincipalName("team/a");
  EXPECT_TRUE(absl::IsInvalidArgument(slash));
  EXPECT_TRUE(absl::StrContains(MessageOf(slash), "it holds '/'")) << slash;
  EXPECT_TRUE(absl::StrContains(MessageOf(slash), "A-Z a-z 0-9 . _ -")) << slash;
  EXPECT_TRUE(absl::StrContains(MessageOf(CheckPrincipalName("a\xff")), "byte 0xff"));
  for (std::string bad : {std::string(""), std::string("."), std::string(".."),
                          std::string(65, 'a'), std::string("a b"), std::string("a\0b", 3)}) {
    EXPECT_TRUE(absl::IsInvalidArgument(CheckPrincipalName(bad))) << bad;
  }
  EXPECT_TRUE(CheckPrincipalName(std::string(64, 'a')).ok());
}

// PostgreSQL refuses bytes that are not UTF-8 (a 500 before) and libpq cuts
// a value at NUL (plan "night\0ly" was stored as "night").
TEST(ServiceInput, TextForPostgresIsUtf8WithoutNul) {
  EXPECT_TRUE(CheckStorableText("run.json name", "nightly ünicode").ok());
  const absl::Status nul = CheckStorableText("run.json name", std::string("night\0ly", 8));
  EXPECT_TRUE(absl::IsInvalidArgument(nul));
  EXPECT_TRUE(absl::StartsWith(MessageOf(nul), "run.json name holds a NUL byte (at offset 5)"))
      << nul;
  const absl::Status path = CheckRequestText("/runs/\xff", {});
  EXPECT_TRUE(absl::IsInvalidArgument(path));
  EXPECT_TRUE(absl::StartsWith(MessageOf(path), "the path is not UTF-8")) << path;
  const absl::Status site =
      CheckRequestText("/api/v1/runs", {{"plan", "nightly"}, {"site", "\xff\xfe"}});
  EXPECT_TRUE(absl::StartsWith(MessageOf(site), "the query parameter site is not UTF-8")) << site;
  EXPECT_TRUE(CheckRequestText("/sites/a/plans/team/nightly <b>", {{"site", "sitea"}}).ok());
}

// limit=-1 reached PostgreSQL's LIMIT and came back as a 500.
TEST(ServiceInput, TheRunsLimitIsANumberOfRuns) {
  for (const char* bad : {"-1", "0", "", "ten", "1e3", "100001", "99999999999"}) {
    const auto limit = ParseRunsLimit(bad);
    ASSERT_FALSE(limit.ok()) << bad;
    EXPECT_TRUE(absl::IsInvalidArgument(limit.status()));
    EXPECT_TRUE(absl::StrContains(MessageOf(limit.status()), "query parameter limit")) << bad;
  }
  EXPECT_EQ(*ParseRunsLimit("1"), 1);
  EXPECT_EQ(*ParseRunsLimit("100000"), 100000);
}

// --listen [::1]:P was refused while ::1:P worked.
TEST(ServiceInput, ListenTakesABracketedIpv6Address) {
  const auto bracketed = ParseListenAddress("[::1]:8443");
  ASSERT_TRUE(bracketed.ok()) << bracketed.status();
  EXPECT_EQ(bracketed->host, "::1");
  EXPECT_EQ(bracketed->port, 8443);
  const auto bare = ParseListenAddress("::1:8443");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->host, "::1");
  const auto v4 = ParseListenAddress("0.0.0.0:0");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->host, "0.0.0.0");
  EXPECT_EQ(v4->port, 0);
  for (const char* bad : {"[::1]", "[::1]8443", "8443", ":8443", "host:", "host:65536",
                          "[::1:8443"}) {
    EXPECT_FALSE(ParseListenAddress(bad).ok()) << bad;
  }
  EXPECT_EQ(JoinHostPort("::1", 8443), "[::1]:8443");
  EXPECT_EQ(JoinHostPort("127.0.0.1", 8443), "127.0.0.1:8443");
}

// ---- the HTTPS front, in this process ---------------------------------------

// A service on a free loopback port with its own CA, a site certificate of
// that CA, and a database that is not there.
class ServiceFront : public ::testing::Test {
 protected:
  void Start(int http_threads, absl::Duration head_timeout) {
    signal(SIGPIPE, SIG_IGN);  // a cut connection written to
    const std::string ca = dir_.path();
    ASSERT_TRUE(CreateCa(ca, "test results service CA", 2).ok());
    ASSERT_TRUE(IssueCertificate(ca, ca + "/service", CertRole::kService, "127.0.0.1",
                                 {"127.0.0.1"}, -60, 1).ok());
    ASSERT_TRUE(
        IssueCertificate(ca, ca + "/site-sitea", CertRole::kSite, "sitea", {}, -60, 1).ok());
    ServiceOptions o;
    o.port = 0;
    o.cert_path = ca + "/service.pem";
    o.key_path = ca + "/service.key";
    o.ca_path = ca + "/ca.pem";
    o.http_threads = http_threads;
    o.request_head_timeout = head_timeout;
    service_ = std::make_unique<ResultsService>(o, &db_);
    const absl::Status started = service_->Start();
    ASSERT_TRUE(started.ok()) << started;
  }
  void TearDown() override {
    if (service_ != nullptr) service_->Stop();
  }
  std::unique_ptr<httplib::SSLClient> Client(bool as_site) {
    auto c = as_site ? std::make_unique<httplib::SSLClient>("127.0.0.1", service_->port(),
                                                            dir_ / "site-sitea.pem",
                                                            dir_ / "site-sitea.key")
                     : std::make_unique<httplib::SSLClient>("127.0.0.1", service_->port());
    c->enable_server_certificate_verification(false);
    c->set_connection_timeout(10, 0);  // the TLS handshake included
    c->set_read_timeout(10, 0);
    return c;
  }

  testing::TempDir dir_;
  ServiceDb db_{"host=/nonexistent/lockstep-test dbname=none connect_timeout=1"};
  std::unique_ptr<ResultsService> service_;
};

// A TLS connection that sends a request head one byte every `gap` until
// the server cuts it or `stop` is set.
void Trickle(int port, std::chrono::milliseconds gap, const std::atomic<bool>& stop,
             std::atomic<int>& cut) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL* ssl = SSL_new(ctx);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      SSL_set_fd(ssl, fd) == 1 && SSL_connect(ssl) == 1) {
    const std::string head = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    for (size_t i = 0; !stop; ++i) {
      const char byte = i < head.size() ? head[i] : 'a';
      if (SSL_write(ssl, &byte, 1) != 1) {
        ++cut;
        break;
      }
      std::this_thread::sleep_for(gap);
    }
  }
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  close(fd);
}

// Before the head deadline, every thread of the pool was held by a client
// that sent its request head a byte at a time (below the 5 s read timeout),
// and nobody else was answered: the reviewer's 12 such connections stopped
// the service. Now each is closed when its head is not in within the
// deadline, and the request waiting behind them is answered.
TEST_F(ServiceFront, SlowClientsAreCutAndTheNextRequestIsAnswered) {
  Start(/*http_threads=*/2, /*head_timeout=*/absl::Seconds(1));
  std::atomic<bool> stop{false};
  std::atomic<int> cut{0};
  std::vector<std::thread> slow;
  for (int i = 0; i < 2; ++i) {
    slow.emplace_back(Trickle, service_->port(), std::chrono::milliseconds(200),
                      std::cref(stop), std::ref(cut));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // both hold a thread
  const auto begin = std::chrono::steady_clock::now();
  auto res = Client(false)->Get("/index.csv");
  const auto waited = std::chrono::steady_clock::now() - begin;
  // A write after the cut may still be taken by the kernel: the next fails.
  for (int i = 0; i < 50 && cut.load() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  stop = true;
  for (std::thread& t : slow) t.join();
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 401) << res->body;  // no credential: answered, not stalled
  EXPECT_LT(waited, std::chrono::seconds(6));
  EXPECT_EQ(cut.load(), 2);
}

// httplib's own 404 (no route) had an empty body.
TEST_F(ServiceFront, NoPageHereSaysSo) {
  Start(8, absl::Seconds(10));
  auto res = Client(false)->Get("/no/such/page");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_TRUE(absl::StrContains(res->body, "nothing is served at this path")) << res->body;
}

// A path or query parameter that is not UTF-8 reached PostgreSQL, which
// refused it: a 500. Now 400 naming it, before the credential is asked.
TEST_F(ServiceFront, APathOrParameterThatIsNotUtf8Is400) {
  Start(8, absl::Seconds(10));
  auto path = Client(false)->Get("/runs/%ff");
  ASSERT_TRUE(path);
  EXPECT_EQ(path->status, 400);
  EXPECT_TRUE(absl::StrContains(path->body, "the path is not UTF-8")) << path->body;
  auto site = Client(true)->Get("/api/v1/runs?site=%ff%fe");
  ASSERT_TRUE(site);
  EXPECT_EQ(site->status, 400);
  EXPECT_TRUE(absl::StrContains(site->body, "the query parameter site is not UTF-8"))
      << site->body;
}

// curl --data-binary sends a form's Content-Type; httplib read the body and
// refused it with an empty 413. (A multipart form, curl -F, is refused before
// its body is read: 415.)
TEST_F(ServiceFront, ABundleSentAsAFormIsToldTheContentType) {
  Start(8, absl::Seconds(10));
  auto res = Client(true)->Post("/api/v1/runs", std::string(20000, 'x'),
                                "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_TRUE(absl::StrContains(res->body, "is a form, taken up to 8192 bytes")) << res->body;
  EXPECT_TRUE(absl::StrContains(res->body, "Content-Type: application/x-lockstep-bundle"))
      << res->body;
}

}  // namespace
}  // namespace lockstep
