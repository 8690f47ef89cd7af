// Looking at certificates rather than using them: when they expire, which
// names they carry, and why a TLS handshake with an agent failed. gRPC says
// only "handshake failed"; these name the certificate and the fix.
#ifndef LOCKSTEP_COMMON_TLS_INSPECT_H_
#define LOCKSTEP_COMMON_TLS_INSPECT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/tls.h"

namespace lockstep {

// Certificates expiring within this are warned about (controller and agent).
inline constexpr absl::Duration kCertExpiryWarning = absl::Hours(24 * 30);

struct CertInfo {
  std::string common_name;
  std::vector<std::string> sans;  // DNS names and IP addresses
  absl::Time not_before;
  absl::Time not_after;
};

// The first certificate of a PEM text; InvalidArgument naming `source`.
absl::StatusOr<CertInfo> InspectCertificate(const std::string& pem, const std::string& source);

// One line per certificate of `files` (CA and own; missing or unreadable
// files are skipped: LoadTlsFiles reports those) that expires within
// `within` of `now`: "certificate F (CN x) expires on D, in N days: ...fix".
std::vector<std::string> ExpiryWarnings(const TlsFiles& files, absl::Time now,
                                        absl::Duration within);

// Why a TLS handshake with the agent at `address` (HOST:PORT) fails, found by
// one handshake of our own with OpenSSL (presenting files' certificate,
// trusting files' CA, waiting at most `timeout`): "presents a certificate
// for [n4, 10.0.0.4], which does not name n3: ...", "...expired on ...",
// "...not issued by our CA (ca.pem)", "refused our certificate (...)", or
// "answers in plaintext". Empty when the handshake succeeds or nothing
// could be learnt (no TCP connection).
std::string DiagnoseTlsPeer(const std::string& address, const TlsFiles& files,
                            absl::Duration timeout);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TLS_INSPECT_H_
