#include "common/tls.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include <grpc/grpc_security_constants.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/files.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

constexpr int kMaxValidDays = 36500;
constexpr int64_t kCaBackdateS = 3600;
constexpr size_t kMaxCommonNameBytes = 64;  // RFC 5280 ub-common-name

struct BioFree { void operator()(BIO* p) const { BIO_free_all(p); } };
struct X509Free { void operator()(X509* p) const { X509_free(p); } };
struct PkeyFree { void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); } };
struct StoreFree { void operator()(X509_STORE* p) const { X509_STORE_free(p); } };
struct StoreCtxFree { void operator()(X509_STORE_CTX* p) const { X509_STORE_CTX_free(p); } };
struct ExtFree { void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); } };
struct NamesFree { void operator()(GENERAL_NAMES* p) const { GENERAL_NAMES_free(p); } };
struct BnFree { void operator()(BIGNUM* p) const { BN_free(p); } };
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using StorePtr = std::unique_ptr<X509_STORE, StoreFree>;
using StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, StoreCtxFree>;
using ExtPtr = std::unique_ptr<X509_EXTENSION, ExtFree>;
using NamesPtr = std::unique_ptr<GENERAL_NAMES, NamesFree>;
using BnPtr = std::unique_ptr<BIGNUM, BnFree>;

// Drains OpenSSL's error queue into one line ("" when empty).
std::string OpensslErrors() {
  std::string out;
  unsigned long e;
  while ((e = ERR_get_error()) != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

absl::Status OpensslError(absl::string_view what) {
  std::string details = OpensslErrors();
  return absl::InternalError(
      details.empty() ? std::string(what) : absl::StrCat(what, ": ", details));
}

std::string DirName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Like WriteFileAtomically (common/files.h) but with an exact file mode, set
// on the temp file before any byte is written: a key is never readable by
// others, not even for a moment.
absl::Status WriteFileAtomicallyWithMode(const std::string& path, absl::string_view content,
                                         mode_t mode) {
  std::string tmp = absl::StrFormat("%s.tmp.%d", path, ::getpid());
  ::unlink(tmp.c_str());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 0600);
  if (fd < 0) {
    int err = errno;
    std::string msg = absl::StrFormat("cannot create %s: %s", tmp, std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(msg + " (create the directory first)");
    if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(msg);
    return absl::InternalError(msg);
  }
  auto fail = [&](absl::string_view what) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return absl::InternalError(
        absl::StrFormat("cannot %s %s: %s", std::string(what), tmp, std::strerror(err)));
  };
  if (::fchmod(fd, mode) != 0) return fail("chmod");
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("write");
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return fail("fsync");
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return absl::InternalError(
        absl::StrFormat("cannot rename %s to %s: %s", tmp, path, std::strerror(err)));
  }
  int dfd = ::open(DirName(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> CertToPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) return OpensslError("PEM-encoding a certificate");
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

absl::StatusOr<std::string> KeyToPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return OpensslError("PEM-encoding a private key");
  }
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

// Never prompts for a pass phrase: encrypted keys are refused.
int NoPassword(char*, int, int, void*) { return -1; }

absl::StatusOr<X509Ptr> ParseCert(const std::string& pem, const std::string& path) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509Ptr cert(bio ? PEM_read_bio_X509(bio.get(), nullptr, NoPassword, nullptr) : nullptr);
  if (!cert) {
    std::string details = OpensslErrors();
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not a PEM certificate (%s); point to the .pem file that `lockstep certs init` "
        "wrote",
        path, details));
  }
  return cert;
}

// Every certificate in a PEM bundle (a CA file may hold several during a CA
// change); InvalidArgument when there is none.
absl::StatusOr<std::vector<X509Ptr>> ParseCertBundle(const std::string& pem,
                                                     const std::string& path) {
  std::vector<X509Ptr> certs;
  ASSIGN_OR_RETURN(X509Ptr first, ParseCert(pem, path));
  certs.push_back(std::move(first));
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return OpensslError("reading a certificate bundle");
  X509Ptr skip(PEM_read_bio_X509(bio.get(), nullptr, NoPassword, nullptr));  // == first
  for (;;) {
    X509Ptr next(PEM_read_bio_X509(bio.get(), nullptr, NoPassword, nullptr));
    if (!next) break;
    certs.push_back(std::move(next));
  }
  ERR_clear_error();  // the read that ended the loop leaves "no start line"
  return certs;
}

absl::StatusOr<PkeyPtr> ParseKey(const std::string& pem, const std::string& path) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  PkeyPtr key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassword, nullptr) : nullptr);
  if (!key) {
    std::string details = OpensslErrors();
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not an unencrypted PEM private key (%s); point to the .key file that "
        "`lockstep certs init` wrote",
        path, details));
  }
  return key;
}

std::string AsnTimeToString(const ASN1_TIME* t) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || ASN1_TIME_print(bio.get(), t) != 1) return "?";
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

absl::StatusOr<std::string> ReadTlsFile(const std::string& path, absl::string_view what) {
  if (path.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "no path given for the TLS %s; pass the files that `lockstep certs init --dir DIR` "
        "wrote",
        std::string(what)));
  }
  absl::StatusOr<std::string> content = ReadFileToString(path);
  if (!content.ok()) {
    if (absl::IsNotFound(content.status())) {
      return absl::NotFoundError(absl::StrFormat(
          "TLS %s %s does not exist; run `lockstep certs init --dir %s` to create the CA and "
          "certificates (or fix the path)",
          std::string(what), path, DirName(path)));
    }
    if (absl::IsPermissionDenied(content.status())) {
      return absl::PermissionDeniedError(absl::StrFormat(
          "TLS %s: %s; run as the user that owns it (keys are mode 0600) or fix its "
          "permissions",
          std::string(what), content.status().message()));
    }
    return Annotate(content.status(), absl::StrCat("TLS ", what));
  }
  if (content->empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TLS %s %s is empty; run `lockstep certs init --dir %s` again", std::string(what), path,
        DirName(path)));
  }
  return content;
}

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

struct CertSpec {
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
    RETURN_IF_ERROR(AddExtension(cert.get(), signer_cert, NID_ext_key_usage, "serverAuth,clientAuth"));
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
  absl::Status written = WriteFileAtomicallyWithMode(prefix_or_dir_base + ".key", key_pem, 0600);
  OPENSSL_cleanse(key_pem.data(), key_pem.size());
  RETURN_IF_ERROR(written);
  RETURN_IF_ERROR(WriteFileAtomicallyWithMode(prefix_or_dir_base + ".pem", cert_pem, 0644));
  return absl::OkStatus();
}

absl::Status MakeDirs(const std::string& dir) {
  std::string path;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    path = dir.substr(0, pos);
    if (path.empty()) continue;
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::PermissionDeniedError(
          absl::StrFormat("cannot create directory %s: %s", path, std::strerror(errno)));
    }
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrFormat("%s is not a directory", dir));
  }
  return absl::OkStatus();
}

absl::string_view StripPort(absl::string_view s) {
  // "[v6]" or "[v6]:port"
  if (!s.empty() && s.front() == '[') {
    size_t close = s.find(']');
    if (close == absl::string_view::npos) return s;
    absl::string_view rest = s.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || rest.size() == 1 ||
                          !std::all_of(rest.begin() + 1, rest.end(), absl::ascii_isdigit))) {
      return s;
    }
    return s.substr(1, close - 1);
  }
  // "host:port" (exactly one colon; more colons means a bare IPv6 address)
  size_t colon = s.find(':');
  if (colon != absl::string_view::npos && s.find(':', colon + 1) == absl::string_view::npos) {
    absl::string_view port = s.substr(colon + 1);
    if (!port.empty() && std::all_of(port.begin(), port.end(), absl::ascii_isdigit)) {
      return s.substr(0, colon);
    }
  }
  return s;
}

}  // namespace

absl::StatusOr<TlsPem> LoadTlsFiles(const TlsFiles& files) {
  TlsPem pem;
  ASSIGN_OR_RETURN(pem.ca, ReadTlsFile(files.ca_pem, "CA certificate"));
  ASSIGN_OR_RETURN(pem.cert, ReadTlsFile(files.cert_pem, "certificate"));
  ASSIGN_OR_RETURN(pem.key, ReadTlsFile(files.key_pem, "private key"));
  ASSIGN_OR_RETURN(std::vector<X509Ptr> cas, ParseCertBundle(pem.ca, files.ca_pem));
  ASSIGN_OR_RETURN(X509Ptr cert, ParseCert(pem.cert, files.cert_pem));
  ASSIGN_OR_RETURN(PkeyPtr key, ParseKey(pem.key, files.key_pem));
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    OpensslErrors();
    return absl::InvalidArgumentError(absl::StrFormat(
        "private key %s does not belong to certificate %s; pass the .key file written next to "
        "that .pem",
        files.key_pem, files.cert_pem));
  }
  StorePtr store(X509_STORE_new());
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!store || !ctx) return OpensslError("setting up certificate verification");
  for (const X509Ptr& ca : cas) {
    if (X509_STORE_add_cert(store.get(), ca.get()) != 1) {
      return OpensslError(absl::StrFormat("adding CA certificate from %s", files.ca_pem));
    }
  }
  if (X509_STORE_CTX_init(ctx.get(), store.get(), cert.get(), nullptr) != 1) {
    return OpensslError("setting up certificate verification");
  }
  if (X509_verify_cert(ctx.get()) != 1) {
    int err = X509_STORE_CTX_get_error(ctx.get());
    int depth = X509_STORE_CTX_get_error_depth(ctx.get());
    OpensslErrors();
    const char* which = depth == 0 ? files.cert_pem.c_str() : files.ca_pem.c_str();
    X509* bad = X509_STORE_CTX_get_current_cert(ctx.get());
    if (bad == nullptr) bad = cert.get();
    switch (err) {
      case X509_V_ERR_CERT_HAS_EXPIRED:
        return absl::FailedPreconditionError(absl::StrFormat(
            "certificate %s expired on %s; issue new certificates with `lockstep certs init "
            "--dir DIR --force`",
            which, AsnTimeToString(X509_get0_notAfter(bad))));
      case X509_V_ERR_CERT_NOT_YET_VALID:
        return absl::FailedPreconditionError(absl::StrFormat(
            "certificate %s is not valid before %s; check this host's clock (or the clock of "
            "the host that made it)",
            which, AsnTimeToString(X509_get0_notBefore(bad))));
      case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
      case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
      case X509_V_ERR_CERT_SIGNATURE_FAILURE:
        return absl::FailedPreconditionError(absl::StrFormat(
            "certificate %s was not issued by the CA in %s; use the ca.pem from the same "
            "`lockstep certs init --dir DIR` run as the certificate",
            files.cert_pem, files.ca_pem));
      default:
        return absl::FailedPreconditionError(absl::StrFormat(
            "certificate %s does not verify against CA %s: %s", files.cert_pem, files.ca_pem,
            X509_verify_cert_error_string(err)));
    }
  }
  return pem;
}

absl::Status CreateCa(const std::string& dir, const std::string& common_name, int valid_days) {
  RETURN_IF_ERROR(CheckCommonName(common_name));
  RETURN_IF_ERROR(CheckValidDays(valid_days));
  if (dir.empty()) return absl::InvalidArgumentError("CA directory must not be empty");
  RETURN_IF_ERROR(MakeDirs(dir));
  ASSIGN_OR_RETURN(PkeyPtr key, NewKey());
  CertSpec spec;
  spec.common_name = common_name;
  spec.is_ca = true;
  spec.not_before_unix_s = static_cast<int64_t>(std::time(nullptr)) - kCaBackdateS;
  spec.not_after_unix_s = spec.not_before_unix_s + kCaBackdateS + int64_t{valid_days} * 86400;
  ASSIGN_OR_RETURN(X509Ptr cert, MakeCertificate(spec, key.get(), nullptr, key.get()));
  return WriteKeyAndCert(dir + "/ca", key.get(), cert.get());
}

absl::Status IssueCertificate(const std::string& ca_dir, const std::string& out_prefix,
                              const std::string& common_name,
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
  spec.common_name = common_name;
  spec.sans = sans;
  spec.not_before_unix_s = static_cast<int64_t>(std::time(nullptr)) + not_before_offset_s;
  spec.not_after_unix_s = spec.not_before_unix_s + int64_t{valid_days} * 86400;
  ASSIGN_OR_RETURN(X509Ptr cert, MakeCertificate(spec, key.get(), ca_cert.get(), ca_key.get()));
  return WriteKeyAndCert(out_prefix, key.get(), cert.get());
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsFiles& files) {
  ASSIGN_OR_RETURN(TlsPem pem, LoadTlsFiles(files));
  grpc::SslServerCredentialsOptions options(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = pem.ca;
  options.pem_key_cert_pairs.push_back({pem.key, pem.cert});
  std::shared_ptr<grpc::ServerCredentials> creds = grpc::SslServerCredentials(options);
  if (!creds) {
    return absl::InternalError(absl::StrFormat(
        "gRPC refused the TLS server credentials from %s, %s, %s", files.ca_pem, files.cert_pem,
        files.key_pem));
  }
  return creds;
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const TlsFiles& files) {
  ASSIGN_OR_RETURN(TlsPem pem, LoadTlsFiles(files));
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = pem.ca;  // never empty: empty would mean the system roots
  options.pem_private_key = pem.key;
  options.pem_cert_chain = pem.cert;
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::SslCredentials(options);
  if (!creds) {
    return absl::InternalError(absl::StrFormat(
        "gRPC refused the TLS channel credentials from %s, %s, %s", files.ca_pem,
        files.cert_pem, files.key_pem));
  }
  return creds;
}

void ApplyTlsTargetNameOverride(const std::string& name, grpc::ChannelArguments* args) {
  if (!name.empty()) args->SetSslTargetNameOverride(name);
}

absl::Status CheckPeerAllowed(const grpc::AuthContext& ctx,
                              const std::vector<std::string>& allowed_names) {
  if (!ctx.IsPeerAuthenticated()) {
    return absl::UnauthenticatedError(
        "peer presented no verified TLS client certificate; start the controller with its "
        "TLS certificate (see `lockstep certs init`)");
  }
  std::vector<std::string> peer_names;
  for (const char* property :
       {GRPC_X509_CN_PROPERTY_NAME, GRPC_X509_SAN_PROPERTY_NAME, GRPC_PEER_DNS_PROPERTY_NAME,
        GRPC_PEER_IP_PROPERTY_NAME}) {
    for (const grpc::string_ref& value : ctx.FindPropertyValues(property)) {
      std::string name(value.data(), value.size());
      if (std::find(peer_names.begin(), peer_names.end(), name) == peer_names.end()) {
        peer_names.push_back(std::move(name));
      }
    }
  }
  if (allowed_names.empty()) return absl::OkStatus();
  for (const std::string& peer : peer_names) {
    for (const std::string& allowed : allowed_names) {
      if (absl::EqualsIgnoreCase(peer, allowed)) return absl::OkStatus();
    }
  }
  return absl::PermissionDeniedError(absl::StrFormat(
      "peer certificate names [%s] are not in the allow list [%s]; add one of them to the "
      "allow list or connect with an allowed certificate",
      absl::StrJoin(peer_names, ", "), absl::StrJoin(allowed_names, ", ")));
}

bool IsLoopbackHost(std::string_view host_or_address) {
  absl::string_view s(host_or_address.data(), host_or_address.size());
  for (absl::string_view prefix : {"dns:///", "ipv4:", "ipv6:"}) {
    if (absl::StartsWith(s, prefix)) {
      s.remove_prefix(prefix.size());
      break;
    }
  }
  s = StripPort(s);
  if (absl::EqualsIgnoreCase(s, "localhost") || absl::EqualsIgnoreCase(s, "localhost.")) {
    return true;
  }
  std::string host(s);
  unsigned char addr[16];
  if (inet_pton(AF_INET, host.c_str(), addr) == 1) return addr[0] == 127;
  if (inet_pton(AF_INET6, host.c_str(), addr) == 1) {
    static const unsigned char kLoopback6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    if (std::memcmp(addr, kLoopback6, 16) == 0) return true;
    static const unsigned char kMappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return std::memcmp(addr, kMappedPrefix, 12) == 0 && addr[12] == 127;
  }
  return false;
}

}  // namespace lockstep
