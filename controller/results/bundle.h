// A run as it travels (issue 40): one immutable RunBundle
// (proto/lockstep/v1/bundle.proto) made from a run directory, addressed by
// the SHA-256 of its content bytes and signed by the site that made it.
//
// The content is a BundleContent serialised once, deterministically, and
// kept verbatim: the hash and the signature are over those bytes, never over
// a re-serialisation, so a later lockstep that adds fields still verifies an
// old bundle. The signature is ECDSA P-256 with SHA-256 ("ecdsa-p256-sha256",
// the key type `lockstep certs` makes) over the 32 digest bytes, i.e. the
// signer signs SHA-256(content) as its message digest; the site's
// certificate travels with it. A site certificate names the site in its
// Subject CN and is issued by the results service's CA.
//
// Checks, in order (VerifyBundle): the bundle parses and names the
// algorithm; the hash of the content equals content_sha256; the signature
// verifies with the certificate's public key; the certificate chains to the
// CA (when one is given; time checked too); the content's site equals the
// certificate's CN. The first that fails is the answer, named by BundleCheck.
#ifndef LOCKSTEP_CONTROLLER_RESULTS_BUNDLE_H_
#define LOCKSTEP_CONTROLLER_RESULTS_BUNDLE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/v1/bundle.pb.h"

namespace lockstep {

inline constexpr char kBundleExtension[] = ".lsbundle";
inline constexpr char kBundleSignatureAlgorithm[] = "ecdsa-p256-sha256";
inline constexpr uint32_t kBundleVersion = 1;
// The largest bundle a results service takes (its request limit), and so
// the largest one push sends and a bundle file read may be.
inline constexpr size_t kMaxBundleBytes = size_t{512} << 20;

// A site's signing credential: an EC P-256 private key and its certificate
// (PEM text), with the files they came from for messages.
struct SiteCredential {
  std::string key_pem;
  std::string cert_pem;
  std::string key_path;   // "" when given as text
  std::string cert_path;
};

// Reads the key and certificate files. Errors name the file and say how to
// get a site credential (`lockstep certs issue ... --name SITE`).
absl::StatusOr<SiteCredential> ReadSiteCredential(const std::string& key_path,
                                                  const std::string& cert_path);
// A credential directory as `lockstep certs` writes one (PREFIX.pem and
// PREFIX.key): the first pair found of DIR/site-SITE, DIR/SITE (when `site`
// is given), DIR/site, else the only pair in DIR besides ca.*. NotFound
// names what was looked for.
absl::StatusOr<SiteCredential> ReadSiteCredentialDir(const std::string& dir,
                                                     const std::string& site);

// The Subject CN of the first certificate of `cert_pem` (`origin` named in
// errors).
absl::StatusOr<std::string> CertificateSite(const std::string& cert_pem, std::string_view origin);

// The files of run directory `run_dir` (controller/run/run_store.h:
// run.json, plan.toml, journal.jsonl, summary.txt, telemetry.pb.gz) as
// BundleContent, with run_id, workload_hash and workload_class from run.json
// (controller/results/workload.h), bundle_version, created_unix_ns (the
// run's started_at, so that exporting a run twice gives the same bytes) and
// lockstep_version. run.json is required (a run without one: rebuild it
// with `lockstep report DIR` first); the others are taken when present.
// `site` and `system` are set as given.
absl::StatusOr<v1::BundleContent> BundleContentFromRunDir(const std::string& run_dir,
                                                          const std::string& site,
                                                          const v1::SystemDescription& system);
// The same from a run.json text alone (a run kept only in a history db):
// run_json as given, the other files empty. `origin` is named in errors.
absl::StatusOr<v1::BundleContent> BundleContentFromRunJson(std::string_view run_json,
                                                           std::string_view origin,
                                                           const std::string& site,
                                                           const v1::SystemDescription& system);

// Serialises `content` deterministically, hashes and signs it. The key must
// be the certificate's (else InvalidArgument naming both files), EC P-256,
// and the certificate's CN must equal content.site() (else InvalidArgument
// naming both: a site signs only its own runs).
absl::StatusOr<v1::RunBundle> SignBundle(const v1::BundleContent& content,
                                         const SiteCredential& credential);

// BundleContentFromRunDir then SignBundle; the site is the certificate's CN
// when `site` is empty.
absl::StatusOr<v1::RunBundle> MakeBundle(const std::string& run_dir, const std::string& site,
                                         const SiteCredential& credential,
                                         const v1::SystemDescription& system);

// Which check of a bundle failed.
enum class BundleCheck {
  kOk,
  kMalformed,    // not a RunBundle, or content is not a BundleContent, or unknown algorithm
  kHash,         // SHA-256(content) != content_sha256
  kSignature,    // the signature does not verify with the certificate's key
  kCertificate,  // the certificate is unreadable, or does not chain to the CA (or expired)
  kSite,         // content.site != the certificate's CN
};
// "hash", "signature", "certificate chain", "site", "format", "ok".
const char* BundleCheckName(BundleCheck check);

struct BundleVerdict {
  BundleCheck failed = BundleCheck::kOk;
  // OK, or InvalidArgument (kMalformed), DataLoss (kHash), Unauthenticated
  // (kSignature, kCertificate), PermissionDenied (kSite): "BUNDLE: CHECK
  // check failed: WHY" naming `origin`, the check and the values.
  absl::Status status;
  bool chain_checked = false;  // a CA was given and the chain verified
  std::string content_sha256;  // as computed
  std::string signer_site;     // the certificate's CN (when readable)
  v1::BundleContent content;   // parsed (when the bytes parse)
  bool ok() const { return failed == BundleCheck::kOk; }
};

// Checks `bundle` as described above. `ca_pem` "" skips the chain check
// (chain_checked stays false: say so to the user). `origin` (a file or URL)
// is named in every message.
BundleVerdict VerifyBundle(const v1::RunBundle& bundle, const std::string& ca_pem,
                           std::string_view origin);

// The binary RunBundle in a file (conventionally NAME.lsbundle), written
// atomically; reading refuses a file that is not a RunBundle, naming it.
absl::Status WriteBundleFile(const std::string& path, const v1::RunBundle& bundle);
absl::StatusOr<v1::RunBundle> ReadBundleFile(const std::string& path);
// Parses bundle bytes (a file's or a request body's); `origin` is named.
absl::StatusOr<v1::RunBundle> ParseBundle(std::string_view bytes, std::string_view origin);

// (Lower-case hex SHA-256 of bytes: Sha256Hex of common/files.h.)

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_BUNDLE_H_
