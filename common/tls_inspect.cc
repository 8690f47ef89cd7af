#include "common/tls_inspect.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmath>
#include <memory>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/files.h"
#include "common/net.h"
#include "common/pem.h"

namespace lockstep {
namespace {

struct CtxFree { void operator()(SSL_CTX* p) const { SSL_CTX_free(p); } };
struct SslFree { void operator()(SSL* p) const { SSL_free(p); } };

absl::Time AsnToTime(const ASN1_TIME* t) {
  struct tm tm = {};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return absl::InfinitePast();
  return absl::FromUnixSeconds(timegm(&tm));
}

CertInfo InfoOf(X509* cert) {
  CertInfo info;
  char cn[256] = {};
  if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof(cn)) > 0) {
    info.common_name = cn;
  }
  auto* names = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; names != nullptr && i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names, i);
    if (n->type == GEN_DNS) {
      const ASN1_STRING* s = n->d.dNSName;
      info.sans.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                             static_cast<size_t>(ASN1_STRING_length(s)));
    } else if (n->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* ip = n->d.iPAddress;
      char text[INET6_ADDRSTRLEN] = {};
      const int family = ASN1_STRING_length(ip) == 4 ? AF_INET : AF_INET6;
      if (inet_ntop(family, ASN1_STRING_get0_data(ip), text, sizeof(text)) != nullptr) {
        info.sans.emplace_back(text);
      }
    }
  }
  GENERAL_NAMES_free(names);
  info.not_before = AsnToTime(X509_get0_notBefore(cert));
  info.not_after = AsnToTime(X509_get0_notAfter(cert));
  return info;
}

std::string Day(absl::Time t) { return absl::FormatTime("%Y-%m-%d %H:%M UTC", t, absl::UTCTimeZone()); }

// A TCP connection to host:port within `timeout`; -1 when none.
int ConnectTcp(const std::string& host, int port, absl::Duration timeout) {
  struct addrinfo hints = {};
  hints.ai_socktype = SOCK_STREAM;
  struct addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0) return -1;
  int fd = -1;
  const int timeout_ms = static_cast<int>(absl::ToInt64Milliseconds(timeout));
  for (struct addrinfo* ai = res; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno == EINPROGRESS) {
      struct pollfd p = {fd, POLLOUT, 0};
      int err = 0;
      socklen_t len = sizeof(err);
      if (::poll(&p, 1, timeout_ms) == 1 &&
          ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
        break;
      }
    } else if (errno == 0 || errno == EISCONN) {
      break;
    }
    ::close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  if (fd < 0) return -1;
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  struct timeval tv = {static_cast<time_t>(timeout_ms / 1000),
                       static_cast<suseconds_t>((timeout_ms % 1000) * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  return fd;
}

// What is wrong with the agent's certificate for `host`, or "".
std::string CheckPeerCert(X509* peer, const std::string& host, const TlsFiles& files) {
  const CertInfo info = InfoOf(peer);
  const std::string names =
      absl::StrFormat("[%s]", absl::StrJoin(info.sans, ", ")) +
      (info.common_name.empty() ? "" : absl::StrFormat(" (CN %s)", info.common_name));
  unsigned char ip[16];
  const bool is_ip = inet_pton(AF_INET, host.c_str(), ip) == 1 || inet_pton(AF_INET6, host.c_str(), ip) == 1;
  const bool matches = is_ip ? X509_check_ip_asc(peer, host.c_str(), 0) == 1
                             : X509_check_host(peer, host.c_str(), host.size(), 0, nullptr) == 1;
  if (!matches) {
    return absl::StrFormat(
        "it presents a certificate for %s, which does not name %s, the host we dial: issue it "
        "one that does (lockstep certs issue --dir DIR --agent %s,%s --force) or dial it by a "
        "name it has",
        names, host, info.common_name.empty() ? host : info.common_name, host);
  }
  const absl::Time now = absl::Now();
  if (info.not_after < now) {
    return absl::StrFormat(
        "its certificate %s expired on %s: issue a new one (lockstep certs issue --dir DIR "
        "--agent %s --force) and restart the agent",
        names, Day(info.not_after), info.common_name.empty() ? host : info.common_name);
  }
  if (info.not_before > now) {
    return absl::StrFormat("its certificate %s is not valid before %s: check the clocks",
                           names, Day(info.not_before));
  }
  auto ca_pem = ReadFileToString(files.ca_pem);
  if (!ca_pem.ok()) return "";
  StorePtr store(X509_STORE_new());
  BioPtr bio(BIO_new_mem_buf(ca_pem->data(), static_cast<int>(ca_pem->size())));
  while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(store.get(), ca);
    X509_free(ca);
  }
  ERR_clear_error();
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (X509_STORE_CTX_init(ctx.get(), store.get(), peer, nullptr) == 1 &&
      X509_verify_cert(ctx.get()) != 1) {
    const int err = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return absl::StrFormat(
        "its certificate %s does not verify against our CA %s (%s): it was issued by another "
        "CA; give the agent a certificate from ours (lockstep certs issue --dir DIR --agent %s)",
        names, files.ca_pem, X509_verify_cert_error_string(err),
        info.common_name.empty() ? host : info.common_name);
  }
  return "";
}

}  // namespace

absl::StatusOr<CertInfo> InspectCertificate(const std::string& pem, const std::string& source) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509Ptr cert(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!cert) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is not a PEM certificate (%s)", source, OpensslErrors()));
  }
  return InfoOf(cert.get());
}

std::vector<std::string> ExpiryWarnings(const TlsFiles& files, absl::Time now,
                                        absl::Duration within) {
  std::vector<std::string> out;
  for (const std::string* path : {&files.ca_pem, &files.cert_pem}) {
    if (path->empty()) continue;
    auto pem = ReadFileToString(*path);
    if (!pem.ok()) continue;
    auto info = InspectCertificate(*pem, *path);
    if (!info.ok() || info->not_after - now > within) continue;
    const double days = std::floor(absl::ToDoubleHours(info->not_after - now) / 24);
    const bool is_ca = path == &files.ca_pem;
    out.push_back(absl::StrFormat(
        "certificate %s (CN %s) %s on %s%s: %s", *path, info->common_name,
        info->not_after < now ? "expired" : "expires", Day(info->not_after),
        info->not_after < now ? "" : absl::StrFormat(", in %.0f days", days),
        is_ca ? "make a new CA and certificates (lockstep certs init --dir DIR --force) and "
                "hand them out before then"
              : "issue a new one from the same CA (lockstep certs issue --dir DIR --agent NAME "
                "--force, or --controller NAME)"));
  }
  return out;
}

std::string DiagnoseTlsPeer(const std::string& address, const TlsFiles& files,
                            absl::Duration timeout) {
  auto hp = SplitHostPort(address);
  if (!hp.ok()) return "";
  const int fd = ConnectTcp(hp->first, hp->second, timeout);
  if (fd < 0) return "";
  std::unique_ptr<SSL_CTX, CtxFree> ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) {
    ::close(fd);
    return "";
  }
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);  // we check the peer ourselves
  if (!files.cert_pem.empty() && !files.key_pem.empty()) {
    SSL_CTX_use_certificate_chain_file(ctx.get(), files.cert_pem.c_str());
    SSL_CTX_use_PrivateKey_file(ctx.get(), files.key_pem.c_str(), SSL_FILETYPE_PEM);
  }
  static const unsigned char kAlpn[] = {2, 'h', '2'};
  SSL_CTX_set_alpn_protos(ctx.get(), kAlpn, sizeof(kAlpn));
  std::unique_ptr<SSL, SslFree> ssl(SSL_new(ctx.get()));
  SSL_set_fd(ssl.get(), fd);
  SSL_set_tlsext_host_name(ssl.get(), hp->first.c_str());
  ERR_clear_error();
  std::string why;
  if (SSL_connect(ssl.get()) != 1) {
    const std::string errors = OpensslErrors();
    why = absl::StrFormat(
        "the TLS handshake failed before any certificate was seen (%s): the agent probably runs "
        "plaintext (--insecure), or something else listens on that port",
        errors.empty() ? "connection closed" : errors);
  } else {
    X509Ptr peer(SSL_get1_peer_certificate(ssl.get()));
    if (peer) why = CheckPeerCert(peer.get(), hp->first, files);
    if (why.empty()) {
      // TLS 1.3: the agent judges our certificate after the handshake; its
      // verdict is the first thing read (an alert, or HTTP/2 SETTINGS).
      char byte = 0;
      if (SSL_read(ssl.get(), &byte, 1) <= 0) {
        const std::string errors = OpensslErrors();
        if (!errors.empty()) {
          why = absl::StrFormat(
              "the agent refused our certificate %s (%s): the agent's --tls_ca is not the CA "
              "that issued ours, or our certificate expired",
              files.cert_pem, errors);
        }
      }
    }
  }
  SSL_shutdown(ssl.get());
  ::close(fd);
  ERR_clear_error();
  return why;
}

}  // namespace lockstep
