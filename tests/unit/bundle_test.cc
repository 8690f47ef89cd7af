// Run bundles (controller/results/bundle.h): made from a real run directory,
// signed with keys and certificates `lockstep certs`' CA code makes, and
// each check of VerifyBundle attacked on its own.
#include "controller/results/bundle.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "common/files.h"
#include "common/pem.h"
#include "common/tls_ca.h"
#include "controller/results/run_json.h"
#include "controller/results/workload.h"
#include "gtest/gtest.h"
#include "unit/results_fixtures.h"

namespace lockstep {
namespace {

using testing::TempDir;

void Check(const absl::Status& s) { ASSERT_TRUE(s.ok()) << s; }

// ECDSA over SHA-256(bytes) with `key_pem`, as a forger with a site's key
// would sign, without SignBundle's checks.
std::string SignRaw(const std::string& key_pem, const std::string& bytes) {
  auto key = ParseKey(key_pem, "key");
  EXPECT_TRUE(key.ok());
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), md);
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new(key->get(), nullptr);
  EVP_PKEY_sign_init(ctx);
  EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha256());
  size_t len = 0;
  EVP_PKEY_sign(ctx, nullptr, &len, md, sizeof(md));
  std::string sig(len, '\0');
  EVP_PKEY_sign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len, md, sizeof(md));
  EVP_PKEY_CTX_free(ctx);
  sig.resize(len);
  return sig;
}

// Two CAs (the service's and another), site certificates from them, and a
// run directory with every file a run writes.
class BundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir("bundle");
    Check(CreateCa(dir_ + "/ca", "results service CA", 2));
    Check(CreateCa(dir_ + "/other-ca", "someone else's CA", 2));
    Check(IssueCertificate(dir_ + "/ca", dir_ + "/ca/site-hlrs", CertRole::kSite, "hlrs", {}, -60, 1));
    Check(IssueCertificate(dir_ + "/ca", dir_ + "/ca/site-lrz", CertRole::kSite, "lrz", {}, -60, 1));
    Check(IssueCertificate(dir_ + "/other-ca", dir_ + "/other-ca/site-hlrs", CertRole::kSite, "hlrs", {}, -60, 1));
    run_dir_ = dir_ + "/run-1";
    Check(MakeDirectories(run_dir_, 0755));
    SynthRun s;
    s.run_id = "run-1";
    s.results = {{"write", 4, Reps(1000, 0.01, 3)}, {"read", 4, Reps(1500, 0.01, 3)}};
    run_ = MakeRun(s);
    Check(WriteFileAtomically(run_dir_ + "/run.json", RunToJson(run_)));
    Check(WriteFileAtomically(run_dir_ + "/plan.toml", "[run]\nname = \"seed\"\n"));
    Check(WriteFileAtomically(run_dir_ + "/journal.jsonl", "{\"phase\":1}\n"));
    Check(WriteFileAtomically(run_dir_ + "/summary.txt", "write 1000 MiB/s\n"));
    Check(WriteFileAtomically(run_dir_ + "/telemetry.pb.gz", std::string("\x1f\x8b\x08\0", 4)));
    ca_pem_ = *ReadFileToString(dir_ + "/ca/ca.pem");
  }

  SiteCredential Cred(const std::string& prefix) {
    auto c = ReadSiteCredential(dir_ + prefix + ".key", dir_ + prefix + ".pem");
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *c : SiteCredential{};
  }

  v1::RunBundle Make(const std::string& prefix = "/ca/site-hlrs") {
    v1::SystemDescription system;
    system.mutable_site()->set_system("testbed-a");
    auto b = MakeBundle(run_dir_, "", Cred(prefix), system);
    EXPECT_TRUE(b.ok()) << b.status();
    return b.ok() ? *b : v1::RunBundle{};
  }

  std::string dir_, run_dir_, ca_pem_;
  v1::RunRecord run_;
};

TEST_F(BundleTest, RoundTripThroughAFileKeepsEveryRunFileAndVerifies) {
  const v1::RunBundle b = Make();
  const std::string path = dir_ + "/run-1.lsbundle";
  Check(WriteBundleFile(path, b));
  auto read = ReadBundleFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  const BundleVerdict v = VerifyBundle(*read, ca_pem_, path);
  ASSERT_TRUE(v.ok()) << v.status;
  EXPECT_TRUE(v.chain_checked);
  EXPECT_EQ(v.signer_site, "hlrs");
  EXPECT_EQ(v.content_sha256, Sha256Hex(read->content()));
  EXPECT_EQ(read->signature_algorithm(), "ecdsa-p256-sha256");
  const v1::BundleContent& c = v.content;
  EXPECT_EQ(c.run_id(), "run-1");
  EXPECT_EQ(c.site(), "hlrs");
  EXPECT_EQ(c.run_json(), *ReadFileToString(run_dir_ + "/run.json"));
  EXPECT_EQ(c.plan_toml(), "[run]\nname = \"seed\"\n");
  EXPECT_EQ(c.journal_jsonl(), "{\"phase\":1}\n");
  EXPECT_EQ(c.summary_txt(), "write 1000 MiB/s\n");
  EXPECT_EQ(c.telemetry_pb_gz(), std::string("\x1f\x8b\x08\0", 4));
  EXPECT_EQ(c.system().site().system(), "testbed-a");
  EXPECT_EQ(c.system().site().site(), "hlrs");
  EXPECT_EQ(c.workload_hash(), WorkloadOf(run_).hash);
  EXPECT_FALSE(c.workload_class().empty());
  EXPECT_EQ(c.bundle_version(), kBundleVersion);
  // Without a CA the chain is not checked, and the verdict says so.
  const BundleVerdict no_ca = VerifyBundle(*read, "", path);
  EXPECT_TRUE(no_ca.ok()) << no_ca.status;
  EXPECT_FALSE(no_ca.chain_checked);
}

TEST_F(BundleTest, OneTamperedContentByteFailsTheHashCheckNamingIt) {
  v1::RunBundle b = Make();
  std::string content = b.content();
  content[content.size() / 2] ^= 0x01;
  b.set_content(content);
  const BundleVerdict v = VerifyBundle(b, ca_pem_, "x.lsbundle");
  EXPECT_EQ(v.failed, BundleCheck::kHash);
  EXPECT_EQ(v.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(Has(std::string(v.status.message()), "x.lsbundle: hash check failed")) << v.status;
}

TEST_F(BundleTest, ContentReSignedWithAnotherKeyFailsTheSignatureCheck) {
  // Altered content with a matching hash, signed by lrz's key, but carrying
  // hlrs's certificate: the signature does not verify with hlrs's key.
  v1::RunBundle b = Make();
  const v1::RunBundle lrz = Make("/ca/site-lrz");
  v1::BundleContent c;
  ASSERT_TRUE(c.ParseFromString(b.content()));
  c.set_summary_txt("write 9999 MiB/s\n");
  c.set_site("lrz");
  auto forged = SignBundle(c, Cred("/ca/site-lrz"));
  ASSERT_TRUE(forged.ok()) << forged.status();
  forged->set_signer_certificate_pem(b.signer_certificate_pem());
  const BundleVerdict v = VerifyBundle(*forged, ca_pem_, "f.lsbundle");
  EXPECT_EQ(v.failed, BundleCheck::kSignature) << v.status;
  EXPECT_TRUE(Has(std::string(v.status.message()), "signature check failed")) << v.status;
  // And a valid lrz bundle with its signature swapped onto hlrs's content.
  v1::RunBundle swapped = b;
  swapped.set_signature(lrz.signature());
  EXPECT_EQ(VerifyBundle(swapped, ca_pem_, "s").failed, BundleCheck::kSignature);
}

TEST_F(BundleTest, ACertificateFromAnotherCaFailsTheChainCheck) {
  const v1::RunBundle b = Make("/other-ca/site-hlrs");
  const BundleVerdict v = VerifyBundle(b, ca_pem_, "o.lsbundle");
  EXPECT_EQ(v.failed, BundleCheck::kCertificate) << v.status;
  EXPECT_EQ(v.status.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(Has(std::string(v.status.message()), "certificate chain check failed")) << v.status;
  // Under its own CA it verifies.
  EXPECT_TRUE(VerifyBundle(b, *ReadFileToString(dir_ + "/other-ca/ca.pem"), "o").ok());
}

TEST_F(BundleTest, ASiteThatIsNotTheCertificatesCnFailsTheSiteCheck) {
  // SignBundle refuses to sign another site's run...
  const v1::RunBundle good = Make("/ca/site-lrz");
  v1::BundleContent lie;
  ASSERT_TRUE(lie.ParseFromString(good.content()));
  lie.set_site("hlrs");
  auto refused = SignBundle(lie, Cred("/ca/site-lrz"));
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(Has(std::string(refused.status().message()),
                  "names site \"lrz\" but the bundle is for site \"hlrs\""))
      << refused.status();
  // ...so a forger signs it by hand with lrz's key: hash and signature hold,
  // the chain holds, and the site check catches it.
  v1::RunBundle forged = good;
  std::string bytes;
  ASSERT_TRUE(lie.SerializeToString(&bytes));
  forged.set_content(bytes);
  forged.set_content_sha256(Sha256Hex(bytes));
  forged.set_signature(SignRaw(Cred("/ca/site-lrz").key_pem, bytes));
  const BundleVerdict v = VerifyBundle(forged, ca_pem_, "l.lsbundle");
  EXPECT_EQ(v.failed, BundleCheck::kSite) << v.status;
  EXPECT_EQ(v.status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(Has(std::string(v.status.message()),
                  "site check failed: the run is for site \"hlrs\" but was signed by site "
                  "\"lrz\""))
      << v.status;
}

TEST_F(BundleTest, ARunDirectoryWithoutRunJsonIsRefusedSayingHowToRebuildIt) {
  const std::string empty = dir_ + "/run-2";
  Check(MakeDirectories(empty, 0755));
  auto b = MakeBundle(empty, "", Cred("/ca/site-hlrs"), {});
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(Has(std::string(b.status().message()), "lockstep report " + empty)) << b.status();
}

TEST_F(BundleTest, AKeyThatIsNotTheCertificatesIsRefused) {
  SiteCredential mixed = Cred("/ca/site-hlrs");
  mixed.key_pem = Cred("/ca/site-lrz").key_pem;
  mixed.key_path = dir_ + "/ca/site-lrz.key";
  auto b = MakeBundle(run_dir_, "", mixed, {});
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(Has(std::string(b.status().message()), "is not the key of the certificate"))
      << b.status();
}

TEST_F(BundleTest, AFileThatIsNotABundleIsRefusedNamingIt) {
  Check(WriteFileAtomically(dir_ + "/junk.lsbundle", "not a bundle"));
  auto b = ReadBundleFile(dir_ + "/junk.lsbundle");
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(Has(std::string(b.status().message()), dir_ + "/junk.lsbundle is not a run bundle"))
      << b.status();
}

TEST_F(BundleTest, ACredentialDirectoryIsSearchedBySiteName) {
  auto c = ReadSiteCredentialDir(dir_ + "/ca", "lrz");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->cert_path, dir_ + "/ca/site-lrz.pem");
  auto none = ReadSiteCredentialDir(dir_ + "/ca", "");
  ASSERT_FALSE(none.ok());  // two pairs and no site named
  EXPECT_TRUE(Has(std::string(none.status().message()), "name the site")) << none.status();
}

// A run id becomes a URL segment of the results service and a file name in
// a mirror: only plain ids are taken (a pushed bundle's run id is checked
// with it before it is stored).
TEST(RunId, OnlyPlainIdsAreSafe) {
  EXPECT_TRUE(IsSafeRunId("20261207-162812-seq-write-1a2b"));
  EXPECT_TRUE(IsSafeRunId("run.v2_A-1"));
  EXPECT_FALSE(IsSafeRunId(""));
  EXPECT_FALSE(IsSafeRunId("."));
  EXPECT_FALSE(IsSafeRunId(".."));
  EXPECT_FALSE(IsSafeRunId("a/b"));
  EXPECT_FALSE(IsSafeRunId("x1\",\"site\":\"siteB"));
  EXPECT_FALSE(IsSafeRunId(std::string("a\0b", 3)));
  EXPECT_FALSE(IsSafeRunId("a b"));
  EXPECT_FALSE(IsSafeRunId(std::string(129, 'a')));
  EXPECT_TRUE(IsSafeRunId(std::string(128, 'a')));
}

}  // namespace
}  // namespace lockstep
