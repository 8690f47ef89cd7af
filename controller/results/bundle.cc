#include "controller/results/bundle.h"

#include <dirent.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <sys/stat.h>

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/pem.h"
#include "common/status_macros.h"
#include "controller/results/run_json.h"
#include "controller/results/workload.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace lockstep {
namespace {

constexpr char kGetCredential[] =
    "a site signs with its key and the certificate the results service's CA issued for it "
    "(Subject CN = the site's name); give --credentials DIR (as `lockstep-service admit` "
    "wrote it), or for export --key FILE --cert FILE";

bool IsFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The 32 bytes of SHA-256(data).
std::string Sha256Bytes(std::string_view data) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
  return std::string(reinterpret_cast<const char*>(md), sizeof(md));
}

std::string CommonNameOf(X509* cert) {
  char cn[256] = {};
  if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof(cn)) <= 0) {
    return "";
  }
  return cn;
}

// Whether `key` is an EC key on P-256.
bool IsP256(EVP_PKEY* key) {
  if (EVP_PKEY_get_base_id(key) != EVP_PKEY_EC) return false;
  char group[64] = {};
  size_t len = 0;
  if (EVP_PKEY_get_group_name(key, group, sizeof(group), &len) != 1) return false;
  return std::string(group, len) == SN_X9_62_prime256v1 || std::string(group, len) == "P-256";
}

// DER ECDSA signature of the 32 digest bytes (the digest is the message
// digest; no second hash).
absl::StatusOr<std::string> SignDigest(EVP_PKEY* key, const std::string& digest) {
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new(key, nullptr),
                                                                  EVP_PKEY_CTX_free);
  if (ctx == nullptr || EVP_PKEY_sign_init(ctx.get()) != 1 ||
      EVP_PKEY_CTX_set_signature_md(ctx.get(), EVP_sha256()) != 1) {
    return OpensslError("cannot set up the bundle signature");
  }
  const auto* md = reinterpret_cast<const unsigned char*>(digest.data());
  size_t len = 0;
  if (EVP_PKEY_sign(ctx.get(), nullptr, &len, md, digest.size()) != 1) {
    return OpensslError("cannot size the bundle signature");
  }
  std::string sig(len, '\0');
  if (EVP_PKEY_sign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, md,
                    digest.size()) != 1) {
    return OpensslError("cannot sign the bundle");
  }
  sig.resize(len);
  return sig;
}

bool VerifyDigest(EVP_PKEY* key, const std::string& digest, const std::string& sig) {
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new(key, nullptr),
                                                                  EVP_PKEY_CTX_free);
  if (ctx == nullptr || EVP_PKEY_verify_init(ctx.get()) != 1 ||
      EVP_PKEY_CTX_set_signature_md(ctx.get(), EVP_sha256()) != 1) {
    (void)OpensslErrors();
    return false;
  }
  const int ok = EVP_PKEY_verify(ctx.get(), reinterpret_cast<const unsigned char*>(sig.data()),
                                 sig.size(), reinterpret_cast<const unsigned char*>(digest.data()),
                                 digest.size());
  (void)OpensslErrors();
  return ok == 1;
}

// Why `cert` does not chain to a CA of `ca_pem` ("" when it does).
absl::StatusOr<std::string> ChainProblem(X509* cert, const std::string& ca_pem) {
  ASSIGN_OR_RETURN(std::vector<X509Ptr> cas, ParseCertBundle(ca_pem, "the CA file"));
  StorePtr store(X509_STORE_new());
  for (const X509Ptr& ca : cas) X509_STORE_add_cert(store.get(), ca.get());
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (store == nullptr || ctx == nullptr ||
      X509_STORE_CTX_init(ctx.get(), store.get(), cert, nullptr) != 1) {
    return OpensslError("cannot set up the certificate check");
  }
  if (X509_verify_cert(ctx.get()) == 1) return std::string();
  const int err = X509_STORE_CTX_get_error(ctx.get());
  (void)OpensslErrors();
  return std::string(X509_verify_cert_error_string(err));
}

std::string Deterministic(const v1::BundleContent& content) {
  std::string out;
  google::protobuf::io::StringOutputStream raw(&out);
  {
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.SetSerializationDeterministic(true);
    content.SerializeToCodedStream(&coded);
  }
  return out;
}

}  // namespace

absl::StatusOr<SiteCredential> ReadSiteCredential(const std::string& key_path,
                                                  const std::string& cert_path) {
  SiteCredential c;
  c.key_path = key_path;
  c.cert_path = cert_path;
  auto key = ReadFileToString(key_path);
  if (!key.ok()) return Annotate(key.status(), absl::StrCat("the site key; ", kGetCredential));
  auto cert = ReadFileToString(cert_path);
  if (!cert.ok()) {
    return Annotate(cert.status(), absl::StrCat("the site certificate; ", kGetCredential));
  }
  c.key_pem = std::move(*key);
  c.cert_pem = std::move(*cert);
  return c;
}

absl::StatusOr<SiteCredential> ReadSiteCredentialDir(const std::string& dir,
                                                     const std::string& site) {
  std::vector<std::string> prefixes;
  if (!site.empty()) {
    prefixes.push_back(absl::StrCat(dir, "/site-", site));
    prefixes.push_back(absl::StrCat(dir, "/", site));
  }
  prefixes.push_back(dir + "/site");
  for (const std::string& p : prefixes) {
    if (IsFile(p + ".key") && IsFile(p + ".pem")) return ReadSiteCredential(p + ".key", p + ".pem");
  }
  std::vector<std::string> pairs;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (!absl::EndsWith(name, ".key") || name == "ca.key") continue;
      std::string base = absl::StrCat(dir, "/", name.substr(0, name.size() - 4));
      if (IsFile(base + ".pem")) pairs.push_back(base);
    }
    ::closedir(d);
  }
  if (pairs.size() == 1) return ReadSiteCredential(pairs[0] + ".key", pairs[0] + ".pem");
  std::vector<std::string> looked;
  for (const std::string& p : prefixes) looked.push_back(p + ".{key,pem}");
  return absl::NotFoundError(absl::StrFormat(
      "no site credential in %s: looked for %s%s; %s", dir, absl::StrJoin(looked, ", "),
      pairs.empty() ? " and found no other key/certificate pair"
                    : absl::StrCat(" and found several pairs (", absl::StrJoin(pairs, ", "),
                                   "): name the site"),
      kGetCredential));
}

absl::StatusOr<std::string> CertificateSite(const std::string& cert_pem, std::string_view origin) {
  ASSIGN_OR_RETURN(X509Ptr cert, ParseCert(cert_pem, std::string(origin)));
  std::string cn = CommonNameOf(cert.get());
  if (cn.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the certificate has no Subject CN, so it names no site; %s", origin, kGetCredential));
  }
  return cn;
}

absl::StatusOr<v1::BundleContent> BundleContentFromRunJson(std::string_view run_json,
                                                           std::string_view origin,
                                                           const std::string& site,
                                                           const v1::SystemDescription& system) {
  ASSIGN_OR_RETURN(v1::RunRecord run, ParseRunJson(run_json, origin));
  v1::BundleContent c;
  c.set_bundle_version(kBundleVersion);
  c.set_run_id(run.run_id());
  c.set_site(site);
  c.set_run_json(std::string(run_json));
  *c.mutable_system() = system;
  const WorkloadIdentity w = WorkloadOf(run);
  c.set_workload_hash(w.hash);
  c.set_workload_class(w.workload_class);
  // The run's start, not the export's time: a run exported twice (pushed
  // again from the spool, or from history) is the same bytes, so the
  // service stores it once (same run id, same content sha256).
  absl::Time started;
  std::string parse_error;
  if (!run.started_at().empty() &&
      absl::ParseTime(absl::RFC3339_full, run.started_at(), &started, &parse_error)) {
    c.set_created_unix_ns(absl::ToUnixNanos(started));
  }
  c.set_lockstep_version(LOCKSTEP_VERSION);
  return c;
}

absl::StatusOr<v1::BundleContent> BundleContentFromRunDir(const std::string& run_dir,
                                                          const std::string& site,
                                                          const v1::SystemDescription& system) {
  const std::string run_json_path = run_dir + "/run.json";
  auto text = ReadFileToString(run_json_path);
  if (!text.ok()) {
    return Annotate(text.status(),
                    absl::StrFormat("a bundle needs the run's run.json; for a run that ended "
                                    "without one, rebuild it with `lockstep report %s` first",
                                    run_dir));
  }
  ASSIGN_OR_RETURN(v1::BundleContent c,
                   BundleContentFromRunJson(*text, run_json_path, site, system));
  struct Side {
    const char* name;
    std::string* field;
  };
  const Side sides[] = {{"plan.toml", c.mutable_plan_toml()},
                        {"journal.jsonl", c.mutable_journal_jsonl()},
                        {"summary.txt", c.mutable_summary_txt()},
                        {"telemetry.pb.gz", c.mutable_telemetry_pb_gz()}};
  for (const Side& s : sides) {
    const std::string path = absl::StrCat(run_dir, "/", s.name);
    if (!IsFile(path)) continue;
    ASSIGN_OR_RETURN(*s.field, ReadFileToString(path));
  }
  return c;
}

absl::StatusOr<v1::RunBundle> SignBundle(const v1::BundleContent& content,
                                         const SiteCredential& credential) {
  const std::string key_origin = credential.key_path.empty() ? "the site key" : credential.key_path;
  const std::string cert_origin =
      credential.cert_path.empty() ? "the site certificate" : credential.cert_path;
  ASSIGN_OR_RETURN(PkeyPtr key, ParseKey(credential.key_pem, key_origin));
  ASSIGN_OR_RETURN(X509Ptr cert, ParseCert(credential.cert_pem, cert_origin));
  if (!IsP256(key.get())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not an EC P-256 key (bundles are signed %s); %s", key_origin,
        kBundleSignatureAlgorithm, kGetCredential));
  }
  if (EVP_PKEY_eq(key.get(), X509_get0_pubkey(cert.get())) != 1) {
    (void)OpensslErrors();
    return absl::InvalidArgumentError(absl::StrFormat(
        "the key %s is not the key of the certificate %s; give the pair `lockstep certs` made "
        "together",
        key_origin, cert_origin));
  }
  const std::string cn = CommonNameOf(cert.get());
  if (cn != content.site()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the certificate %s names site \"%s\" but the bundle is for site \"%s\": a site signs "
        "only its own runs; give --site %s or that site's credential",
        cert_origin, cn, content.site(), cn.empty() ? "NAME" : cn));
  }
  v1::RunBundle b;
  b.set_content(Deterministic(content));
  const std::string digest = Sha256Bytes(b.content());
  b.set_content_sha256(Sha256Hex(b.content()));
  ASSIGN_OR_RETURN(*b.mutable_signature(), SignDigest(key.get(), digest));
  b.set_signature_algorithm(kBundleSignatureAlgorithm);
  b.set_signer_certificate_pem(credential.cert_pem);
  return b;
}

absl::StatusOr<v1::RunBundle> MakeBundle(const std::string& run_dir, const std::string& site,
                                         const SiteCredential& credential,
                                         const v1::SystemDescription& system) {
  std::string name = site;
  if (name.empty()) {
    ASSIGN_OR_RETURN(name, CertificateSite(credential.cert_pem, credential.cert_path));
  }
  v1::SystemDescription described = system;
  if (described.site().site().empty()) described.mutable_site()->set_site(name);
  ASSIGN_OR_RETURN(v1::BundleContent content, BundleContentFromRunDir(run_dir, name, described));
  return SignBundle(content, credential);
}

const char* BundleCheckName(BundleCheck check) {
  switch (check) {
    case BundleCheck::kOk: return "ok";
    case BundleCheck::kMalformed: return "format";
    case BundleCheck::kHash: return "hash";
    case BundleCheck::kSignature: return "signature";
    case BundleCheck::kCertificate: return "certificate chain";
    case BundleCheck::kSite: return "site";
  }
  return "?";
}

namespace {

BundleVerdict Fail(BundleVerdict v, BundleCheck check, absl::StatusCode code,
                   std::string_view origin, const std::string& why) {
  v.failed = check;
  v.status = absl::Status(code, absl::StrFormat("%s: %s check failed: %s", origin,
                                                BundleCheckName(check), why));
  return v;
}

}  // namespace

BundleVerdict VerifyBundle(const v1::RunBundle& bundle, const std::string& ca_pem,
                           std::string_view origin) {
  BundleVerdict v;
  using C = absl::StatusCode;
  if (bundle.signature_algorithm() != kBundleSignatureAlgorithm) {
    return Fail(std::move(v), BundleCheck::kMalformed, C::kInvalidArgument, origin,
                absl::StrFormat("signature algorithm \"%s\" is not %s",
                                bundle.signature_algorithm(), kBundleSignatureAlgorithm));
  }
  v.content_sha256 = Sha256Hex(bundle.content());
  if (v.content_sha256 != bundle.content_sha256()) {
    return Fail(std::move(v), BundleCheck::kHash, C::kDataLoss, origin,
                absl::StrFormat("the content's SHA-256 is %s but the bundle says %s: the content "
                                "was altered after it was signed",
                                v.content_sha256, bundle.content_sha256()));
  }
  if (!v.content.ParseFromString(bundle.content())) {
    return Fail(std::move(v), BundleCheck::kMalformed, C::kInvalidArgument, origin,
                "the content is not a BundleContent");
  }
  auto cert = ParseCert(bundle.signer_certificate_pem(), std::string(origin));
  if (!cert.ok()) {
    return Fail(std::move(v), BundleCheck::kCertificate, C::kUnauthenticated, origin,
                absl::StrCat("the signer's certificate: ", cert.status().message()));
  }
  v.signer_site = CommonNameOf(cert->get());
  if (!VerifyDigest(X509_get0_pubkey(cert->get()), Sha256Bytes(bundle.content()),
                    bundle.signature())) {
    return Fail(std::move(v), BundleCheck::kSignature, C::kUnauthenticated, origin,
                absl::StrFormat("the signature does not verify with the key of the signer's "
                                "certificate (CN \"%s\"): not signed by that site's key",
                                v.signer_site));
  }
  if (!ca_pem.empty()) {
    auto problem = ChainProblem(cert->get(), ca_pem);
    if (!problem.ok() || !problem->empty()) {
      return Fail(std::move(v), BundleCheck::kCertificate, C::kUnauthenticated, origin,
                  absl::StrFormat("the signer's certificate (CN \"%s\") is not valid under the "
                                  "given CA: %s",
                                  v.signer_site,
                                  problem.ok() ? *problem : problem.status().message()));
    }
    v.chain_checked = true;
  }
  if (v.content.site() != v.signer_site) {
    return Fail(std::move(v), BundleCheck::kSite, C::kPermissionDenied, origin,
                absl::StrFormat("the run is for site \"%s\" but was signed by site \"%s\" (the "
                                "certificate's CN): a site signs only its own runs",
                                v.content.site(), v.signer_site));
  }
  return v;
}

absl::Status WriteBundleFile(const std::string& path, const v1::RunBundle& bundle) {
  std::string bytes;
  if (!bundle.SerializeToString(&bytes)) {
    return absl::InternalError(absl::StrFormat("%s: cannot serialise the bundle", path));
  }
  return WriteFileAtomically(path, bytes);
}

absl::StatusOr<v1::RunBundle> ParseBundle(std::string_view bytes, std::string_view origin) {
  v1::RunBundle b;
  if (bytes.empty() || !b.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
      b.content().empty() || b.content_sha256().empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not a run bundle (%s file, as `lockstep export --bundle RUN FILE` writes)", origin,
        kBundleExtension));
  }
  return b;
}

absl::StatusOr<v1::RunBundle> ReadBundleFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFileAtMost(path, kMaxBundleBytes, "a run bundle"));
  return ParseBundle(bytes, path);
}

}  // namespace lockstep
