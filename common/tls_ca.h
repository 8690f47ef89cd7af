// The private CA of `lockstep certs`: makes the CA and issues the controller's
// and agents' certificates (OpenSSL 3; ECDSA P-256 keys, SHA-256 signatures).
// What the run-time side does with them is common/tls.h.
#ifndef LOCKSTEP_COMMON_TLS_CA_H_
#define LOCKSTEP_COMMON_TLS_CA_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lockstep {

// What a leaf certificate is for, signed into it by the CA as an extended key
// usage (EKU): the TLS purpose of the role (RFC 5280 4.2.1.12: clientAuth or
// serverAuth, checked by OpenSSL in every handshake) plus one Lockstep role
// OID per role, below the UUID arc 2.25 (ITU-T X.667: an OID no registry has
// to hand out). An agent accepts as controller only kController, the
// controller accepts as agent only kAgent (common/tls.h CheckPeerRole).
// Extend by appending: the OID of a role never changes.
enum class CertRole {
  kNone = 0,    // no Lockstep role: a certificate from before roles, refused
                // everywhere (IssueCertificate makes one only for tests)
  kController,  // `lockstep`: clientAuth + kControllerRoleOid
  kAgent,       // `lockstep-agent`: serverAuth + kAgentRoleOid
  kSite,        // a site pushing to the results service (CN = the site
                // name; it also signs the site's bundles): clientAuth +
                // kSiteRoleOid. lockstep-service accepts pushes from it only.
  kService,     // lockstep-service's HTTPS certificate: serverAuth + kServiceRoleOid
};
inline constexpr char kLockstepRoleArc[] = "2.25.282725516736918236083537311734699386127";
inline constexpr char kControllerRoleOid[] = "2.25.282725516736918236083537311734699386127.1";
inline constexpr char kAgentRoleOid[] = "2.25.282725516736918236083537311734699386127.2";
inline constexpr char kSiteRoleOid[] = "2.25.282725516736918236083537311734699386127.3";
inline constexpr char kServiceRoleOid[] = "2.25.282725516736918236083537311734699386127.4";

// "controller", "agent", "site", "service"; "none" for kNone.
std::string_view CertRoleName(CertRole role);

// The Lockstep role a PEM certificate carries: kNone when it carries none.
// InvalidArgument naming `source` when the text is not a certificate or it
// carries two roles.
absl::StatusOr<CertRole> CertRoleOfPem(const std::string& pem, const std::string& source);

// The `lockstep certs issue` command that (re)issues a certificate of `role`
// for `common_name`, for messages: "lockstep certs issue --dir DIR
// --controller NAME --force" / "... --agent NAME,HOST,IP --force".
std::string ReissueCommand(CertRole role, const std::string& common_name);

// Makes a self-signed CA valid from one hour ago (clock skew between hosts)
// for `valid_days` days: writes dir/ca.pem (0644) and dir/ca.key (0600),
// each atomically (temp file + rename). Creates `dir` (0700) if missing.
// Replaces an existing CA: callers decide whether that is allowed.
// InvalidArgument for an empty common name or valid_days outside [1, 36500].
absl::Status CreateCa(const std::string& dir, const std::string& common_name, int valid_days);

// Issues a leaf certificate of `role` signed by ca_dir/ca.pem + ca_dir/ca.key
// (basicConstraints CA:FALSE, keyUsage digitalSignature -- keyEncipherment is
// for RSA keys only, RFC 5480 -- extendedKeyUsage as CertRole says; kNone
// makes the role-less serverAuth + clientAuth certificate of old versions).
// Writes <out_prefix>.pem (0644) and <out_prefix>.key (0600) atomically.
// `sans` become subjectAltNames: entries that parse as IPv4/IPv6 addresses are
// IP SANs, others DNS SANs ("*.x" allowed). The certificate is valid from
// now + not_before_offset_s for valid_days days (a negative offset backdates;
// tests make an expired certificate with offset -10 days, valid 1 day).
// NotFound when the CA files are missing, InvalidArgument for a bad SAN,
// common name or day count.
absl::Status IssueCertificate(const std::string& ca_dir, const std::string& out_prefix,
                              CertRole role, const std::string& common_name,
                              const std::vector<std::string>& sans,
                              int64_t not_before_offset_s, int valid_days);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TLS_CA_H_
