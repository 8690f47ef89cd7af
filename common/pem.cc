#include "common/pem.h"

#include <openssl/err.h>
#include <openssl/pem.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/files.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

// Never prompts for a pass phrase: encrypted keys are refused.
int NoPassword(char*, int, int, void*) { return -1; }

std::string DirName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// A read-only memory BIO over `pem`; null when OpenSSL cannot make one.
BioPtr MemoryBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// All that was written into the memory BIO `bio`.
std::string MemoryBioText(BIO* bio) {
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(len));
}

}  // namespace

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

absl::StatusOr<std::string> CertToPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) return OpensslError("PEM-encoding a certificate");
  return MemoryBioText(bio.get());
}

absl::StatusOr<std::string> KeyToPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return OpensslError("PEM-encoding a private key");
  }
  return MemoryBioText(bio.get());
}

absl::StatusOr<X509Ptr> ParseCert(const std::string& pem, const std::string& path) {
  BioPtr bio = MemoryBio(pem);
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

absl::StatusOr<std::vector<X509Ptr>> ParseCertBundle(const std::string& pem,
                                                     const std::string& path) {
  std::vector<X509Ptr> certs;
  ASSIGN_OR_RETURN(X509Ptr first, ParseCert(pem, path));
  certs.push_back(std::move(first));
  BioPtr bio = MemoryBio(pem);
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

std::string CertSha256Hex(X509* cert) {
  unsigned char* der = nullptr;
  const int len = i2d_X509(cert, &der);
  if (len <= 0) return "";
  std::string hex = Sha256Hex(std::string_view(reinterpret_cast<const char*>(der), len));
  OPENSSL_free(der);
  return hex;
}

absl::StatusOr<PkeyPtr> ParseKey(const std::string& pem, const std::string& path) {
  BioPtr bio = MemoryBio(pem);
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
  return MemoryBioText(bio.get());
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

}  // namespace lockstep
