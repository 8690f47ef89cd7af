#include "common/tls_ca.h"

#include <arpa/inet.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <ctime>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/files.h"
#include "common/pem.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

constexpr int kMaxValidDays = 36500;
constexpr int64_t kCaBackdateS = 3600;
constexpr size_t kMaxCommonNameBytes = 64;  // RFC 5280 ub-common-name

absl::Status CheckCommonName(const std::string& common_name) {
  if (common_name.empty() || common_name.size() > kMaxCommonNameBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "certificate common name \"%s\" must be 1..%d bytes", common_name, kMaxCommonNameBytes));
  }
  return absl::OkStatus();
}

absl::Status CheckValidDays(int valid_days) {
  if (valid_days < 1 || valid_days > kMaxValidDays) {
    return absl::InvalidArgumentError(
        absl::StrFormat("certificate validity of %d days is outside 1..%d", valid_days,
                        kMaxValidDays));
  }
  return absl::OkStatus();
}

absl::StatusOr<PkeyPtr> NewKey() {
  PkeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return OpensslError("generating an ECDSA P-256 key");
  return key;
}

// A random positive 127-bit serial (RFC 5280: at most 20 octets, positive).
absl::Status SetRandomSerial(X509* cert) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) return OpensslError("drawing a random serial");
  bytes[0] &= 0x7f;
  bytes[0] |= 0x01;  // never zero, never shorter than 16 bytes' worth
  BnPtr bn(BN_bin2bn(bytes, sizeof(bytes), nullptr));
  if (!bn || !BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert))) {
    return OpensslError("setting the certificate serial");
  }
  return absl::OkStatus();
}

absl::Status AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  ExtPtr ext(X509V3_EXT_nconf_nid(nullptr, &ctx, nid, value));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return OpensslError(absl::StrFormat("adding extension %s = %s", OBJ_nid2sn(nid), value));
  }
  return absl::OkStatus();
}

bool IsDnsNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ||
         c == '_' || c == '*';
}

absl::StatusOr<NamesPtr> BuildSans(const std::vector<std::string>& sans) {
  NamesPtr names(GENERAL_NAMES_new());
  if (!names) return OpensslError("allocating subjectAltName");
  for (const std::string& san : sans) {
    GENERAL_NAME* name = GENERAL_NAME_new();
    if (!name) return OpensslError("allocating subjectAltName");
    unsigned char ip[16];
    int ip_len = 0;
    if (inet_pton(AF_INET, san.c_str(), ip) == 1) {
      ip_len = 4;
    } else if (inet_pton(AF_INET6, san.c_str(), ip) == 1) {
      ip_len = 16;
    }
    if (ip_len > 0) {
      ASN1_OCTET_STRING* octets = ASN1_OCTET_STRING_new();
      if (!octets || ASN1_OCTET_STRING_set(octets, ip, ip_len) != 1) {
        ASN1_OCTET_STRING_free(octets);
        GENERAL_NAME_free(name);
        return OpensslError("encoding an IP subjectAltName");
      }
      GENERAL_NAME_set0_value(name, GEN_IPADD, octets);
    } else {
      if (san.empty() || san.size() > 253 || !std::all_of(san.begin(), san.end(), IsDnsNameChar)) {
        GENERAL_NAME_free(name);
        return absl::InvalidArgumentError(absl::StrFormat(
            "subjectAltName \"%s\" is neither an IPv4/IPv6 address nor a DNS name (letters, "
            "digits, '-', '.', '_', '*'; at most 253 bytes)",
            san));
      }
      ASN1_IA5STRING* dns = ASN1_IA5STRING_new();
      if (!dns || ASN1_STRING_set(dns, san.data(), static_cast<int>(san.size())) != 1) {
        ASN1_IA5STRING_free(dns);
        GENERAL_NAME_free(name);
        return OpensslError("encoding a DNS subjectAltName");
      }
      GENERAL_NAME_set0_value(name, GEN_DNS, dns);
    }
    if (sk_GENERAL_NAME_push(names.get(), name) == 0) {
      GENERAL_NAME_free(name);
      return OpensslError("adding a subjectAltName");
    }
  }
  return names;
}

// The extendedKeyUsage value of a leaf certificate of `role`.
std::string ExtendedKeyUsage(CertRole role) {
  switch (role) {
    case CertRole::kController:
      return absl::StrCat("clientAuth,", kControllerRoleOid);
    case CertRole::kAgent:
      return absl::StrCat("serverAuth,", kAgentRoleOid);
    case CertRole::kSite:
      return absl::StrCat("clientAuth,", kSiteRoleOid);
    case CertRole::kService:
      return absl::StrCat("serverAuth,", kServiceRoleOid);
    case CertRole::kNone:
      break;
  }
  return "serverAuth,clientAuth";
}

struct CertSpec {
  CertRole role = CertRole::kNone;
  std::string common_name;
  int64_t not_before_unix_s = 0;
  int64_t not_after_unix_s = 0;
  bool is_ca = false;
  std::vector<std::string> sans;
};

// Builds and signs a certificate for `subject_key`. issuer == nullptr: self-signed.
absl::StatusOr<X509Ptr> MakeCertificate(const CertSpec& spec, EVP_PKEY* subject_key,
                                        X509* issuer, EVP_PKEY* issuer_key) {
  X509Ptr cert(X509_new());
  if (!cert) return OpensslError("allocating a certificate");
  if (X509_set_version(cert.get(), X509_VERSION_3) != 1) return OpensslError("setting version 3");
  RETURN_IF_ERROR(SetRandomSerial(cert.get()));
  if (!ASN1_TIME_set(X509_getm_notBefore(cert.get()), static_cast<time_t>(spec.not_before_unix_s)) ||
      !ASN1_TIME_set(X509_getm_notAfter(cert.get()), static_cast<time_t>(spec.not_after_unix_s))) {
    return OpensslError("setting the validity period");
  }
  X509_NAME* subject = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_txt(subject, "O", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>("lockstep"), -1, -1, 0) != 1 ||
      X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(spec.common_name.c_str()),
                                 -1, -1, 0) != 1) {
    return OpensslError(absl::StrFormat("setting subject CN=%s", spec.common_name));
  }
  X509* signer_cert = issuer != nullptr ? issuer : cert.get();
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(signer_cert)) != 1 ||
      X509_set_pubkey(cert.get(), subject_key) != 1) {
    return OpensslError("setting issuer and public key");
  }
  if (spec.is_ca) {
    RETURN_IF_ERROR(AddExtension(cert.get(), signer_cert, NID_basic_constraints, "critical,CA:TRUE"));
    RETURN_IF_ERROR(AddExtension(cert.get(), signer_cert, NID_key_usage, "critical,keyCertSign,cRLSign"));
    RETURN_IF_ERROR(AddExtension(cert.get(), signer_cert, NID_subject_key_identifier, "hash"));
  } else {
    RETURN_IF_ERROR(AddExtension(cert.get(), signer_cert, NID_basic_constraints, "critical,CA:FALSE"));
    // keyEncipherment only for RSA keys: RFC 5480 does not allow it for EC
    // keys (and TLS 1.3 / ECDHE never encrypts to the certificate key).
    const bool rsa = EVP_PKEY_get_base_id(subject_key) == EVP_PKEY_RSA;
    RETURN_IF_ERROR(AddExtension(
        cert.get(), signer_cert, NID_key_usage,
        rsa ? "critical,digitalSignature,keyEncipherment" : "critical,digitalSignature"));
    const std::string eku = ExtendedKeyUsage(spec.role);
    RETURN_IF_ERROR(AddExtension(cert.get(), signer_cert, NID_ext_key_usage, eku.c_str()));
    RETURN_IF_ERROR(AddExtension(cert.get(), signer_cert, NID_subject_key_identifier, "hash"));
    RETURN_IF_ERROR(AddExtension(cert.get(), signer_cert, NID_authority_key_identifier, "keyid:always"));
    if (!spec.sans.empty()) {
      ASSIGN_OR_RETURN(NamesPtr names, BuildSans(spec.sans));
      if (X509_add1_ext_i2d(cert.get(), NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) != 1) {
        return OpensslError("adding subjectAltName");
      }
    }
  }
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) <= 0) {
    return OpensslError(absl::StrFormat("signing the certificate for CN=%s", spec.common_name));
  }
  return cert;
}

absl::Status WriteKeyAndCert(const std::string& prefix_or_dir_base, EVP_PKEY* key, X509* cert) {
  ASSIGN_OR_RETURN(std::string key_pem, KeyToPem(key));
  ASSIGN_OR_RETURN(std::string cert_pem, CertToPem(cert));
  // Key first: a cert whose key is missing would be the more confusing half.
  absl::Status written = WriteFileAtomically(prefix_or_dir_base + ".key", key_pem, 0600);
  OPENSSL_cleanse(key_pem.data(), key_pem.size());
  RETURN_IF_ERROR(written);
  RETURN_IF_ERROR(WriteFileAtomically(prefix_or_dir_base + ".pem", cert_pem, 0644));
  return absl::OkStatus();
}

}  // namespace

absl::Status CreateCa(const std::string& dir, const std::string& common_name, int valid_days) {
  RETURN_IF_ERROR(CheckCommonName(common_name));
  RETURN_IF_ERROR(CheckValidDays(valid_days));
  if (dir.empty()) return absl::InvalidArgumentError("CA directory must not be empty");
  RETURN_IF_ERROR(MakeDirectories(dir, 0700));
  ASSIGN_OR_RETURN(PkeyPtr key, NewKey());
  CertSpec spec;
  spec.common_name = common_name;
  spec.is_ca = true;
  spec.not_before_unix_s = static_cast<int64_t>(std::time(nullptr)) - kCaBackdateS;
  spec.not_after_unix_s = spec.not_before_unix_s + kCaBackdateS + int64_t{valid_days} * 86400;
  ASSIGN_OR_RETURN(X509Ptr cert, MakeCertificate(spec, key.get(), nullptr, key.get()));
  return WriteKeyAndCert(dir + "/ca", key.get(), cert.get());
}

std::string_view CertRoleName(CertRole role) {
  switch (role) {
    case CertRole::kController:
      return "controller";
    case CertRole::kAgent:
      return "agent";
    case CertRole::kSite:
      return "site";
    case CertRole::kService:
      return "service";
    case CertRole::kNone:
      break;
  }
  return "none";
}

absl::StatusOr<CertRole> CertRoleOfPem(const std::string& pem, const std::string& source) {
  ASSIGN_OR_RETURN(X509Ptr cert, ParseCert(pem, source));
  auto* eku = static_cast<EXTENDED_KEY_USAGE*>(
      X509_get_ext_d2i(cert.get(), NID_ext_key_usage, nullptr, nullptr));
  if (eku == nullptr) return CertRole::kNone;
  CertRole found = CertRole::kNone;
  bool twice = false;
  for (int i = 0; i < sk_ASN1_OBJECT_num(eku); ++i) {
    char oid[128];
    if (OBJ_obj2txt(oid, sizeof(oid), sk_ASN1_OBJECT_value(eku, i), /*no_name=*/1) <= 0) continue;
    for (CertRole role :
         {CertRole::kController, CertRole::kAgent, CertRole::kSite, CertRole::kService}) {
      const char* want = role == CertRole::kController ? kControllerRoleOid
                         : role == CertRole::kAgent    ? kAgentRoleOid
                         : role == CertRole::kSite     ? kSiteRoleOid
                                                       : kServiceRoleOid;
      if (std::string_view(oid) != want) continue;
      twice = twice || found != CertRole::kNone;
      found = role;
    }
  }
  EXTENDED_KEY_USAGE_free(eku);
  if (twice) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s carries more than one Lockstep role; issue one certificate per role "
        "with `lockstep certs issue`",
        source));
  }
  return found;
}

std::string ReissueCommand(CertRole role, const std::string& common_name) {
  const std::string name = common_name.empty() ? "NAME" : common_name;
  if (role == CertRole::kController) {
    return absl::StrCat("lockstep certs issue --dir DIR --controller ", name, " --force");
  }
  if (role == CertRole::kSite) {
    return absl::StrCat("lockstep-service revoke ", name, " --db DB && lockstep-service admit ",
                        name, " --db DB --tls_dir DIR --out OUT");
  }
  if (role == CertRole::kService) {
    return "lockstep-service init --tls_dir DIR --host HOST,IP (a new CA: admit the sites again)";
  }
  return absl::StrCat("lockstep certs issue --dir DIR --agent ", name, ",HOST,IP --force");
}

absl::Status IssueCertificate(const std::string& ca_dir, const std::string& out_prefix,
                              CertRole role, const std::string& common_name,
                              const std::vector<std::string>& sans,
                              int64_t not_before_offset_s, int valid_days) {
  RETURN_IF_ERROR(CheckCommonName(common_name));
  RETURN_IF_ERROR(CheckValidDays(valid_days));
  if (out_prefix.empty()) return absl::InvalidArgumentError("certificate output prefix must not be empty");
  const std::string ca_cert_path = ca_dir + "/ca.pem";
  const std::string ca_key_path = ca_dir + "/ca.key";
  ASSIGN_OR_RETURN(std::string ca_cert_pem, ReadTlsFile(ca_cert_path, "CA certificate"));
  ASSIGN_OR_RETURN(std::string ca_key_pem, ReadTlsFile(ca_key_path, "CA private key"));
  ASSIGN_OR_RETURN(X509Ptr ca_cert, ParseCert(ca_cert_pem, ca_cert_path));
  ASSIGN_OR_RETURN(PkeyPtr ca_key, ParseKey(ca_key_pem, ca_key_path));
  if (X509_check_private_key(ca_cert.get(), ca_key.get()) != 1) {
    OpensslErrors();
    return absl::InvalidArgumentError(absl::StrFormat(
        "CA key %s does not belong to CA certificate %s; recreate the CA with `lockstep certs "
        "init --dir %s --force`",
        ca_key_path, ca_cert_path, ca_dir));
  }
  ASSIGN_OR_RETURN(PkeyPtr key, NewKey());
  CertSpec spec;
  spec.role = role;
  spec.common_name = common_name;
  spec.sans = sans;
  spec.not_before_unix_s = static_cast<int64_t>(std::time(nullptr)) + not_before_offset_s;
  spec.not_after_unix_s = spec.not_before_unix_s + int64_t{valid_days} * 86400;
  ASSIGN_OR_RETURN(X509Ptr cert, MakeCertificate(spec, key.get(), ca_cert.get(), ca_key.get()));
  return WriteKeyAndCert(out_prefix, key.get(), cert.get());
}

}  // namespace lockstep
