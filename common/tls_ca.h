// The private CA of `lockstep certs`: makes the CA and issues the controller's
// and agents' certificates (OpenSSL 3; ECDSA P-256 keys, SHA-256 signatures).
// What the run-time side does with them is common/tls.h.
#ifndef LOCKSTEP_COMMON_TLS_CA_H_
#define LOCKSTEP_COMMON_TLS_CA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace lockstep {

// Makes a self-signed CA valid from one hour ago (clock skew between hosts)
// for `valid_days` days: writes dir/ca.pem (0644) and dir/ca.key (0600),
// each atomically (temp file + rename). Creates `dir` (0700) if missing.
// Replaces an existing CA: callers decide whether that is allowed.
// InvalidArgument for an empty common name or valid_days outside [1, 36500].
absl::Status CreateCa(const std::string& dir, const std::string& common_name, int valid_days);

// Issues a leaf certificate signed by ca_dir/ca.pem + ca_dir/ca.key, usable
// both as TLS server and client (basicConstraints CA:FALSE, keyUsage
// digitalSignature -- keyEncipherment is for RSA keys only, RFC 5480 --
// extendedKeyUsage serverAuth + clientAuth).
// Writes <out_prefix>.pem (0644) and <out_prefix>.key (0600) atomically.
// `sans` become subjectAltNames: entries that parse as IPv4/IPv6 addresses are
// IP SANs, others DNS SANs ("*.x" allowed). The certificate is valid from
// now + not_before_offset_s for valid_days days (a negative offset backdates;
// tests make an expired certificate with offset -10 days, valid 1 day).
// NotFound when the CA files are missing, InvalidArgument for a bad SAN,
// common name or day count.
absl::Status IssueCertificate(const std::string& ca_dir, const std::string& out_prefix,
                              const std::string& common_name,
                              const std::vector<std::string>& sans,
                              int64_t not_before_offset_s, int valid_days);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TLS_CA_H_
