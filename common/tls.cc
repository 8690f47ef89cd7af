#include "common/tls.h"

#include <arpa/inet.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cstring>

#include <grpc/grpc_security_constants.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/pem.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

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

// Why a certificate of role `has` (CN `cn`, `what`: "certificate F" or
// "peer certificate") is not one of role `want`, with the command to issue one.
std::string WrongRole(const std::string& what, const std::string& cn, CertRole has,
                      CertRole want) {
  if (has == CertRole::kNone) {
    return absl::StrFormat(
        "%s (CN=%s) carries no Lockstep role: it was issued by an older `lockstep certs`, "
        "before controller and agent certificates differed; a %s certificate is needed: "
        "reissue it with `%s` (DIR: the directory of ca.pem and ca.key)",
        what, cn, CertRoleName(want), ReissueCommand(want, cn));
  }
  return absl::StrFormat(
      "%s (CN=%s) carries the role %s, not %s; issue a %s certificate with `%s` (DIR: the "
      "directory of ca.pem and ca.key)",
      what, cn, CertRoleName(has), CertRoleName(want), CertRoleName(want),
      ReissueCommand(want, ""));
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

absl::Status CheckOwnRole(const std::string& cert_pem, const std::string& path, CertRole role) {
  ASSIGN_OR_RETURN(CertRole has, CertRoleOfPem(cert_pem, path));
  if (has == role) return absl::OkStatus();
  std::string cn = "?";
  if (auto cert = ParseCert(cert_pem, path); cert.ok()) {
    char buf[256];
    if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert->get()), NID_commonName, buf,
                                  sizeof(buf)) > 0) {
      cn = buf;
    }
  }
  return absl::FailedPreconditionError(
      WrongRole(absl::StrCat("certificate ", path), cn, has, role));
}

absl::Status CheckPeerRole(const grpc::AuthContext& ctx, CertRole role) {
  if (!ctx.IsPeerAuthenticated()) {
    return absl::UnauthenticatedError("peer presented no verified TLS certificate");
  }
  std::vector<grpc::string_ref> pems = ctx.FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME);
  std::vector<grpc::string_ref> cns = ctx.FindPropertyValues(GRPC_X509_CN_PROPERTY_NAME);
  const std::string cn = cns.empty() ? "?" : std::string(cns[0].data(), cns[0].size());
  if (pems.empty()) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "peer certificate (CN=%s) could not be read to check its role", cn));
  }
  auto has = CertRoleOfPem(std::string(pems[0].data(), pems[0].size()), "peer certificate");
  if (!has.ok()) return absl::PermissionDeniedError(has.status().message());
  if (*has == role) return absl::OkStatus();
  return absl::PermissionDeniedError(WrongRole("peer certificate", cn, *has, role));
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsFiles& files, CertRole own_role) {
  ASSIGN_OR_RETURN(TlsPem pem, LoadTlsFiles(files));
  RETURN_IF_ERROR(CheckOwnRole(pem.cert, files.cert_pem, own_role));
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
  RETURN_IF_ERROR(CheckOwnRole(pem.cert, files.cert_pem, CertRole::kController));
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
