// Mutual TLS: certificate generation checked with OpenSSL, then real gRPC
// over a loopback socket with the credentials from common/tls.h.
#include "common/tls.h"
#include "common/tls_ca.h"

#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "common/files.h"
#include "controller/cli/certs_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lockstep/v1/agent.grpc.pb.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kDayS = 86400;

std::string MakeTempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "lockstep-tls-XXXXXX").string();
  char* made = ::mkdtemp(tmpl.data());
  EXPECT_NE(made, nullptr);
  return tmpl;
}

struct X509Deleter { void operator()(X509* p) const { X509_free(p); } };
using X509Ptr = std::unique_ptr<X509, X509Deleter>;

X509Ptr LoadCert(const std::string& path) {
  absl::StatusOr<std::string> pem = ReadFileToString(path);
  EXPECT_TRUE(pem.ok()) << pem.status();
  if (!pem.ok()) return nullptr;
  BIO* bio = BIO_new_mem_buf(pem->data(), static_cast<int>(pem->size()));
  X509Ptr cert(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  return cert;
}

// X509_verify_cert of `leaf` against the single trusted `ca`: X509_V_OK or the error.
int VerifyAgainst(X509* ca, X509* leaf) {
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf, nullptr);
  int rc = X509_verify_cert(ctx);
  int err = rc == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  return err;
}

int FileMode(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return -1;
  return static_cast<int>(st.st_mode & 07777);
}

// Everything the tests need, made once: CA "a" with its leaves, and CA "b".
class TlsEnv {
 public:
  static TlsEnv& Get() {
    static TlsEnv env;
    return env;
  }
  ~TlsEnv() {
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }
  std::string root;
  std::string a, b;  // CA dirs
  TlsFiles Files(const std::string& ca_dir, const std::string& name) const {
    return TlsFiles{ca_dir + "/ca.pem", ca_dir + "/" + name + ".pem", ca_dir + "/" + name + ".key"};
  }

 private:
  TlsEnv() {
    root = MakeTempDir();
    a = root + "/a";
    b = root + "/b";
    Check(CreateCa(a, "test CA a", 2));
    Check(CreateCa(b, "test CA b", 2));
    Check(IssueCertificate(a, a + "/agent", CertRole::kAgent, "agent-a", {"localhost", "127.0.0.1", "::1"}, -60, 1));
    Check(IssueCertificate(a, a + "/elsewhere", CertRole::kAgent, "elsewhere", {"elsewhere.example"}, -60, 1));
    Check(IssueCertificate(a, a + "/controller", CertRole::kController, "controller", {"controller"}, -60, 1));
    Check(IssueCertificate(a, a + "/intruder", CertRole::kController, "intruder", {"intruder.example"}, -60, 1));
    Check(IssueCertificate(a, a + "/expired", CertRole::kController, "controller", {"controller"}, -10 * kDayS, 1));
    Check(IssueCertificate(b, b + "/controller", CertRole::kController, "controller", {"controller"}, -60, 1));
  }
  static void Check(const absl::Status& s) {
    if (!s.ok()) {
      ADD_FAILURE() << s;
      std::abort();
    }
  }
};

// ---- Certificates, checked with OpenSSL -------------------------------------

TEST(TlsCertificates, LeafChainsToCaExpiredAndForeignFail) {
  TlsEnv& env = TlsEnv::Get();
  X509Ptr ca_a = LoadCert(env.a + "/ca.pem");
  X509Ptr ca_b = LoadCert(env.b + "/ca.pem");
  ASSERT_TRUE(ca_a && ca_b);
  X509Ptr agent = LoadCert(env.a + "/agent.pem");
  X509Ptr controller = LoadCert(env.a + "/controller.pem");
  X509Ptr expired = LoadCert(env.a + "/expired.pem");
  X509Ptr foreign = LoadCert(env.b + "/controller.pem");
  ASSERT_TRUE(agent && controller && expired && foreign);

  EXPECT_EQ(VerifyAgainst(ca_a.get(), agent.get()), X509_V_OK);
  EXPECT_EQ(VerifyAgainst(ca_a.get(), controller.get()), X509_V_OK);
  EXPECT_EQ(VerifyAgainst(ca_a.get(), expired.get()), X509_V_ERR_CERT_HAS_EXPIRED);
  EXPECT_EQ(VerifyAgainst(ca_a.get(), foreign.get()), X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
  EXPECT_EQ(VerifyAgainst(ca_b.get(), foreign.get()), X509_V_OK);
}

TEST(TlsCertificates, ExtensionsSansModesAndSerials) {
  TlsEnv& env = TlsEnv::Get();
  X509Ptr ca = LoadCert(env.a + "/ca.pem");
  X509Ptr agent = LoadCert(env.a + "/agent.pem");
  X509Ptr controller = LoadCert(env.a + "/controller.pem");
  ASSERT_TRUE(ca && agent && controller);

  // CA: v3, basicConstraints critical CA:TRUE, keyCertSign.
  EXPECT_EQ(X509_get_version(ca.get()), X509_VERSION_3);
  EXPECT_EQ(X509_check_ca(ca.get()), 1);
  int crit = -1;
  BASIC_CONSTRAINTS* bc = static_cast<BASIC_CONSTRAINTS*>(
      X509_get_ext_d2i(ca.get(), NID_basic_constraints, &crit, nullptr));
  ASSERT_NE(bc, nullptr);
  EXPECT_TRUE(bc->ca);
  EXPECT_EQ(crit, 1);
  BASIC_CONSTRAINTS_free(bc);
  EXPECT_TRUE(X509_get_key_usage(ca.get()) & KU_KEY_CERT_SIGN);

  // Leaf: not a CA, digitalSignature (no keyEncipherment: EC key); an
  // agent's is serverAuth only (with its role), a controller's clientAuth.
  EXPECT_EQ(X509_get_version(agent.get()), X509_VERSION_3);
  EXPECT_EQ(X509_check_ca(agent.get()), 0);
  EXPECT_EQ(X509_get_key_usage(agent.get()), uint32_t{KU_DIGITAL_SIGNATURE});
  EXPECT_EQ(X509_get_extended_key_usage(agent.get()) & (XKU_SSL_SERVER | XKU_SSL_CLIENT),
            uint32_t{XKU_SSL_SERVER});
  EXPECT_EQ(X509_get_extended_key_usage(controller.get()) & (XKU_SSL_SERVER | XKU_SSL_CLIENT),
            uint32_t{XKU_SSL_CLIENT});
  EXPECT_EQ(X509_get_signature_nid(agent.get()), NID_ecdsa_with_SHA256);

  // SANs: DNS and IP entries, and nothing else.
  EXPECT_EQ(X509_check_host(agent.get(), "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(agent.get(), "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(agent.get(), "::1", 0), 1);
  EXPECT_EQ(X509_check_host(agent.get(), "127.0.0.1", 0, 0, nullptr), 0);  // not a DNS SAN
  EXPECT_EQ(X509_check_host(agent.get(), "otherhost", 0, 0, nullptr), 0);

  // Random, distinct, positive serials.
  EXPECT_NE(ASN1_INTEGER_cmp(X509_get0_serialNumber(agent.get()),
                             X509_get0_serialNumber(controller.get())),
            0);

  EXPECT_EQ(FileMode(env.a + "/ca.key"), 0600);
  EXPECT_EQ(FileMode(env.a + "/agent.key"), 0600);
  EXPECT_EQ(FileMode(env.a + "/agent.pem"), 0644);
  EXPECT_EQ(FileMode(env.a), 0700);
  // Atomic writes leave no temp files behind.
  for (const auto& entry : std::filesystem::directory_iterator(env.a)) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

TEST(TlsCertificates, BadInputsAreRefusedWithTheValue) {
  TlsEnv& env = TlsEnv::Get();
  absl::Status s = IssueCertificate(env.a, env.root + "/bad", CertRole::kAgent, "bad", {"no spaces allowed"}, 0, 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("\"no spaces allowed\""));
  s = IssueCertificate(env.a, env.root + "/bad", CertRole::kAgent, "bad", {}, 0, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  s = IssueCertificate(env.root + "/nope", env.root + "/bad", CertRole::kAgent, "bad", {}, 0, 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr(env.root + "/nope/ca.pem"));
  EXPECT_THAT(s.message(), HasSubstr("lockstep certs init --dir"));
  EXPECT_EQ(CreateCa(env.root + "/c", "", 1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(env.root + "/bad.pem"));
}

// ---- Loading ----------------------------------------------------------------

TEST(TlsLoad, GoodFilesLoad) {
  TlsEnv& env = TlsEnv::Get();
  absl::StatusOr<TlsPem> pem = LoadTlsFiles(env.Files(env.a, "agent"));
  ASSERT_TRUE(pem.ok()) << pem.status();
  EXPECT_THAT(pem->cert, HasSubstr("BEGIN CERTIFICATE"));
  EXPECT_THAT(pem->key, HasSubstr("BEGIN PRIVATE KEY"));
}

TEST(TlsLoad, MissingFileNamesThePathAndTheFix) {
  TlsEnv& env = TlsEnv::Get();
  TlsFiles files = env.Files(env.a, "agent");
  files.cert_pem = env.root + "/missing/agent.pem";
  absl::StatusOr<TlsPem> pem = LoadTlsFiles(files);
  ASSERT_EQ(pem.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(pem.status().message(), HasSubstr(files.cert_pem));
  EXPECT_THAT(pem.status().message(),
              HasSubstr("lockstep certs init --dir " + env.root + "/missing"));
}

TEST(TlsLoad, ExpiredForeignAndMismatchedAreRefusedBeforeAnyHandshake) {
  TlsEnv& env = TlsEnv::Get();
  auto expired = MakeChannelCredentials(env.Files(env.a, "expired"));
  ASSERT_EQ(expired.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(expired.status().message(), HasSubstr("expired"));
  EXPECT_THAT(expired.status().message(), HasSubstr(env.a + "/expired.pem"));

  TlsFiles foreign{env.a + "/ca.pem", env.b + "/controller.pem", env.b + "/controller.key"};
  auto f = MakeServerCredentials(foreign);
  ASSERT_EQ(f.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(f.status().message(), HasSubstr("not issued by the CA"));

  TlsFiles mismatched{env.a + "/ca.pem", env.a + "/agent.pem", env.a + "/controller.key"};
  auto m = MakeServerCredentials(mismatched);
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("does not belong to certificate"));

  TlsFiles not_pem{env.a + "/ca.key", env.a + "/agent.pem", env.a + "/agent.key"};
  EXPECT_EQ(LoadTlsFiles(not_pem).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TlsLoad, CaBundleWithSeveralCasIsAccepted) {
  TlsEnv& env = TlsEnv::Get();
  const std::string bundle = env.root + "/bundle.pem";
  ASSERT_TRUE(WriteFileAtomically(bundle, *ReadFileToString(env.b + "/ca.pem") +
                                              *ReadFileToString(env.a + "/ca.pem"))
                  .ok());
  EXPECT_TRUE(LoadTlsFiles({bundle, env.a + "/agent.pem", env.a + "/agent.key"}).ok());
  EXPECT_TRUE(LoadTlsFiles({bundle, env.b + "/controller.pem", env.b + "/controller.key"}).ok());
}

// ---- Loopback rule ----------------------------------------------------------

TEST(TlsLoopback, IsLoopbackHost) {
  for (const char* yes : {"localhost", "LOCALHOST", "localhost.", "localhost:7070", "127.0.0.1",
                          "127.1.2.3:80", "::1", "[::1]", "[::1]:7070", "::ffff:127.0.0.1",
                          "dns:///localhost:7070", "ipv4:127.0.0.1:7070", "ipv6:[::1]:7070"}) {
    EXPECT_TRUE(IsLoopbackHost(yes)) << yes;
  }
  for (const char* no : {"", "10.0.0.5", "10.0.0.5:7070", "128.0.0.1", "::2", "[::2]:1",
                         "0.0.0.0", "::", "node7", "localhost.example", "mylocalhost",
                         "127.0.0.1.example", "[::1]x", "localhost:http"}) {
    EXPECT_FALSE(IsLoopbackHost(no)) << no;
  }
}

// ---- Real gRPC over loopback ------------------------------------------------

// Answers Identify only; checks the peer against `allowed` when `check_peer`.
class IdentifyOnlyAgent final : public v1::Agent::Service {
 public:
  IdentifyOnlyAgent(bool check_peer, std::vector<std::string> allowed)
      : check_peer_(check_peer), allowed_(std::move(allowed)) {}

  grpc::Status Identify(grpc::ServerContext* context, const v1::IdentifyRequest*,
                        v1::HostFacts* reply) override {
    if (check_peer_) {
      absl::Status s = CheckPeerAllowed(*context->auth_context(), allowed_);
      if (!s.ok()) {
        return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
      }
    }
    reply->set_hostname("tls-test-agent");
    for (const grpc::string_ref& cn : context->auth_context()->FindPropertyValues("x509_common_name")) {
      (*reply->mutable_extra())["peer_cn"] = std::string(cn.data(), cn.size());
    }
    return grpc::Status::OK;
  }

 private:
  bool check_peer_;
  std::vector<std::string> allowed_;
};

class TestServer {
 public:
  TestServer(std::shared_ptr<grpc::ServerCredentials> creds, bool check_peer,
             std::vector<std::string> allowed)
      : service_(check_peer, std::move(allowed)) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", creds, &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
  }
  ~TestServer() {
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  }
  bool ok() const { return server_ != nullptr && port_ > 0; }
  std::string target() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  IdentifyOnlyAgent service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

struct CallResult {
  grpc::Status status;
  v1::HostFacts facts;
};

CallResult CallIdentify(const std::string& target, std::shared_ptr<grpc::ChannelCredentials> creds,
                        const std::string& name_override = "") {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // no connection reuse across tests
  ApplyTlsTargetNameOverride(name_override, &args);
  auto channel = grpc::CreateCustomChannel(target, creds, args);
  auto stub = v1::Agent::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  CallResult r;
  r.status = stub->Identify(&ctx, v1::IdentifyRequest(), &r.facts);
  return r;
}

std::shared_ptr<grpc::ChannelCredentials> MustChannelCreds(const TlsFiles& files) {
  auto creds = MakeChannelCredentials(files);
  EXPECT_TRUE(creds.ok()) << creds.status();
  return creds.ok() ? *creds : nullptr;
}

// Raw gRPC credentials, bypassing LoadTlsFiles' checks, so the *server* is
// the one that has to refuse.
std::shared_ptr<grpc::ChannelCredentials> RawChannelCreds(const std::string& ca_pem_path,
                                                          const std::string& cert_path,
                                                          const std::string& key_path) {
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = *ReadFileToString(ca_pem_path);
  if (!cert_path.empty()) {
    options.pem_cert_chain = *ReadFileToString(cert_path);
    options.pem_private_key = *ReadFileToString(key_path);
  }
  return grpc::SslCredentials(options);
}

class TlsGrpc : public ::testing::Test {
 protected:
  void SetUp() override {
    TlsEnv& env = TlsEnv::Get();
    auto creds = MakeServerCredentials(env.Files(env.a, "agent"));
    ASSERT_TRUE(creds.ok()) << creds.status();
    server_ = std::make_unique<TestServer>(*creds, /*check_peer=*/false, std::vector<std::string>{});
    ASSERT_TRUE(server_->ok());
  }
  std::unique_ptr<TestServer> server_;
};

TEST_F(TlsGrpc, MutualTlsWorks) {
  TlsEnv& env = TlsEnv::Get();
  CallResult r = CallIdentify(server_->target(), MustChannelCreds(env.Files(env.a, "controller")));
  ASSERT_TRUE(r.status.ok()) << r.status.error_code() << " " << r.status.error_message();
  EXPECT_EQ(r.facts.hostname(), "tls-test-agent");
  EXPECT_EQ(r.facts.extra().at("peer_cn"), "controller");
}

TEST_F(TlsGrpc, ClientWithCertFromAnotherCaIsRefused) {
  TlsEnv& env = TlsEnv::Get();
  // Trusts the right CA (so the client side would accept the server) but
  // presents a certificate from CA b.
  CallResult r = CallIdentify(server_->target(),
                              RawChannelCreds(env.a + "/ca.pem", env.b + "/controller.pem",
                                              env.b + "/controller.key"));
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAVAILABLE) << r.status.error_message();
}

TEST_F(TlsGrpc, ClientTrustingAnotherCaRefusesTheServer) {
  TlsEnv& env = TlsEnv::Get();
  CallResult r = CallIdentify(server_->target(), MustChannelCreds(env.Files(env.b, "controller")));
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAVAILABLE) << r.status.error_message();
}

TEST_F(TlsGrpc, ClientWithoutCertificateIsRefused) {
  TlsEnv& env = TlsEnv::Get();
  CallResult r = CallIdentify(server_->target(), RawChannelCreds(env.a + "/ca.pem", "", ""));
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAVAILABLE) << r.status.error_message();
}

TEST_F(TlsGrpc, ExpiredClientCertificateIsRefused) {
  TlsEnv& env = TlsEnv::Get();
  CallResult r = CallIdentify(server_->target(),
                              RawChannelCreds(env.a + "/ca.pem", env.a + "/expired.pem",
                                              env.a + "/expired.key"));
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAVAILABLE) << r.status.error_message();
}

TEST_F(TlsGrpc, PlaintextClientIsRefused) {
  CallResult r = CallIdentify(server_->target(), grpc::InsecureChannelCredentials());
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAVAILABLE) << r.status.error_message();
}

TEST(TlsGrpcNames, ServerCertMustNameTheDialedHostUnlessOverridden) {
  TlsEnv& env = TlsEnv::Get();
  auto creds = MakeServerCredentials(env.Files(env.a, "elsewhere"));
  ASSERT_TRUE(creds.ok()) << creds.status();
  TestServer server(*creds, false, {});
  ASSERT_TRUE(server.ok());
  auto client = MustChannelCreds(env.Files(env.a, "controller"));
  // Dialing 127.0.0.1 but the certificate only names elsewhere.example.
  CallResult r = CallIdentify(server.target(), client);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAVAILABLE) << r.status.error_message();
  r = CallIdentify(server.target(), client, "elsewhere.example");
  EXPECT_TRUE(r.status.ok()) << r.status.error_code() << " " << r.status.error_message();
}

TEST(TlsGrpcPeer, CheckPeerAllowedAcceptsAndRefusesByName) {
  TlsEnv& env = TlsEnv::Get();
  auto creds = MakeServerCredentials(env.Files(env.a, "agent"));
  ASSERT_TRUE(creds.ok()) << creds.status();
  TestServer restricted(*creds, true, {"CONTROLLER", "other"});  // case-insensitive
  TestServer open(*creds, true, {});
  ASSERT_TRUE(restricted.ok() && open.ok());
  auto controller = MustChannelCreds(env.Files(env.a, "controller"));
  auto intruder = MustChannelCreds(env.Files(env.a, "intruder"));

  EXPECT_TRUE(CallIdentify(restricted.target(), controller).status.ok());
  CallResult r = CallIdentify(restricted.target(), intruder);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(r.status.error_message(), HasSubstr("intruder"));
  EXPECT_THAT(r.status.error_message(), HasSubstr("intruder.example"));
  EXPECT_THAT(r.status.error_message(), HasSubstr("CONTROLLER, other"));

  // Empty allow list: any peer that chained to the CA.
  EXPECT_TRUE(CallIdentify(open.target(), intruder).status.ok());
  EXPECT_TRUE(CallIdentify(open.target(), controller).status.ok());
}

TEST(TlsGrpcPeer, PlaintextPeerIsUnauthenticated) {
  TestServer plain(grpc::InsecureServerCredentials(), true, {});
  ASSERT_TRUE(plain.ok());
  CallResult r = CallIdentify(plain.target(), grpc::InsecureChannelCredentials());
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << r.status.error_message();
}

// ---- lockstep certs init ----------------------------------------------------

TEST(TlsCertsCommand, InitWritesUsableFilesAndRefusesToOverwrite) {
  std::string dir = MakeTempDir() + "/pki";
  std::vector<std::string> args = {"init", "--dir", dir, "--agent", "node7,10.0.0.7,node7.ib",
                                   "--agent=node8", "--controller", "ctl", "--days", "30"};
  testing::internal::CaptureStdout();
  ASSERT_EQ(RunCertsCommand(args), 0);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_THAT(out, HasSubstr(dir + "/agent-node7.pem"));
  EXPECT_THAT(out, HasSubstr("--tls_cert " + dir + "/controller.pem"));

  for (const char* f : {"ca", "controller", "agent-node7", "agent-node8"}) {
    EXPECT_EQ(FileMode(dir + "/" + f + ".key"), 0600) << f;
  }
  auto agent = LoadTlsFiles({dir + "/ca.pem", dir + "/agent-node7.pem", dir + "/agent-node7.key"});
  ASSERT_TRUE(agent.ok()) << agent.status();
  auto ctl = LoadTlsFiles({dir + "/ca.pem", dir + "/controller.pem", dir + "/controller.key"});
  ASSERT_TRUE(ctl.ok()) << ctl.status();
  X509Ptr node7 = LoadCert(dir + "/agent-node7.pem");
  ASSERT_TRUE(node7);
  EXPECT_EQ(X509_check_ip_asc(node7.get(), "10.0.0.7", 0), 1);
  EXPECT_EQ(X509_check_host(node7.get(), "node7.ib", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(node7.get(), "node7", 0, 0, nullptr), 1);

  std::string ca_before = *ReadFileToString(dir + "/ca.pem");
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunCertsCommand({"init", "--dir", dir}), 1);
  EXPECT_THAT(testing::internal::GetCapturedStderr(), HasSubstr("--force"));
  EXPECT_EQ(*ReadFileToString(dir + "/ca.pem"), ca_before);

  testing::internal::CaptureStdout();
  EXPECT_EQ(RunCertsCommand({"init", "--dir", dir, "--force"}), 0);
  testing::internal::GetCapturedStdout();
  EXPECT_NE(*ReadFileToString(dir + "/ca.pem"), ca_before);
  // The old agent certificate no longer chains to the new CA.
  agent = LoadTlsFiles({dir + "/ca.pem", dir + "/agent-node7.pem", dir + "/agent-node7.key"});
  EXPECT_EQ(agent.status().code(), absl::StatusCode::kFailedPrecondition);
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}

TEST(TlsCertsCommand, IssueAddsAnAgentToTheExistingCa) {
  std::string dir = MakeTempDir() + "/pki";
  testing::internal::CaptureStdout();
  ASSERT_EQ(RunCertsCommand({"init", "--dir", dir, "--agent", "node1"}), 0);
  std::string ca_before = *ReadFileToString(dir + "/ca.pem");
  ASSERT_EQ(RunCertsCommand({"issue", "--dir", dir, "--agent", "node2,10.1.1.2"}), 0);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_THAT(out, HasSubstr(dir + "/agent-node2.pem"));
  EXPECT_EQ(*ReadFileToString(dir + "/ca.pem"), ca_before);  // same CA
  auto node1 = LoadTlsFiles({dir + "/ca.pem", dir + "/agent-node1.pem", dir + "/agent-node1.key"});
  auto node2 = LoadTlsFiles({dir + "/ca.pem", dir + "/agent-node2.pem", dir + "/agent-node2.key"});
  EXPECT_TRUE(node1.ok()) << node1.status();
  EXPECT_TRUE(node2.ok()) << node2.status();

  testing::internal::CaptureStderr();
  EXPECT_EQ(RunCertsCommand({"issue", "--dir", dir, "--agent", "node2"}), 1);  // exists
  EXPECT_EQ(RunCertsCommand({"issue", "--dir", dir + "/none", "--agent", "n"}), 1);  // no CA
  EXPECT_EQ(RunCertsCommand({"issue", "--dir", dir}), 2);  // nothing to issue
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr(dir + "/agent-node2.pem"));
  EXPECT_THAT(err, HasSubstr(dir + "/none/ca.pem"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/none"));
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}

TEST(TlsCertsCommand, UsageErrors) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunCertsCommand({}), 2);
  EXPECT_EQ(RunCertsCommand({"frobnicate"}), 2);
  EXPECT_EQ(RunCertsCommand({"init"}), 2);                            // no --dir
  EXPECT_EQ(RunCertsCommand({"init", "--dir"}), 2);                   // no value
  EXPECT_EQ(RunCertsCommand({"init", "--dir", "x", "--days", "0"}), 2);
  EXPECT_EQ(RunCertsCommand({"init", "--dir", "x", "--agent", "../evil"}), 2);
  EXPECT_EQ(RunCertsCommand({"init", "--dir", "x", "--agent", "a", "--agent", "a"}), 2);
  EXPECT_EQ(RunCertsCommand({"init", "--dir", "x", "--bogus"}), 2);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("usage: lockstep certs init"));
  EXPECT_THAT(err, HasSubstr("\"../evil\""));
  EXPECT_FALSE(std::filesystem::exists("x"));
}

}  // namespace
}  // namespace lockstep
