// OpenSSL handles and PEM material, shared by the run-time TLS set-up
// (common/tls), the CA of `lockstep certs` (common/tls_ca) and certificate
// inspection (common/tls_inspect). Every error names the file and says which
// `lockstep certs` command makes a good one.
#ifndef LOCKSTEP_COMMON_PEM_H_
#define LOCKSTEP_COMMON_PEM_H_

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace lockstep {

// Owning handles for the OpenSSL objects we use.
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


// Drains OpenSSL's error queue into one line ("" when it was empty).
std::string OpensslErrors();

// Internal error "<what>: <OpenSSL's queued errors>" (the queue is drained).
absl::Status OpensslError(absl::string_view what);

// PEM text of a certificate / an unencrypted private key.
absl::StatusOr<std::string> CertToPem(X509* cert);
absl::StatusOr<std::string> KeyToPem(EVP_PKEY* key);

// The first certificate of `pem` (read from `path`, named in errors);
// InvalidArgument when there is none. Never prompts for a pass phrase.
absl::StatusOr<X509Ptr> ParseCert(const std::string& pem, const std::string& path);

// Every certificate in a PEM bundle (a CA file may hold several during a CA
// change); InvalidArgument when there is none.
absl::StatusOr<std::vector<X509Ptr>> ParseCertBundle(const std::string& pem,
                                                     const std::string& path);

// Lower-case hex SHA-256 of the certificate's DER: one certificate, not a
// subject (a name admitted again gets a new one). "" when it cannot encode.
std::string CertSha256Hex(X509* cert);

// An unencrypted private key; encrypted keys are refused (InvalidArgument).
absl::StatusOr<PkeyPtr> ParseKey(const std::string& pem, const std::string& path);

// "Jan  2 03:04:05 2027 GMT" (OpenSSL's print), "?" when it cannot print.
std::string AsnTimeToString(const ASN1_TIME* t);

// The content of TLS file `path` ("the TLS <what> ..." in errors): NotFound
// for a missing file and InvalidArgument for an empty one, both saying to run
// `lockstep certs init --dir DIR`; PermissionDenied saying who may read it.
absl::StatusOr<std::string> ReadTlsFile(const std::string& path, absl::string_view what);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_PEM_H_
