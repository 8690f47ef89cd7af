// Mutual TLS between the controller and its agents.
//
// One private CA (made by `lockstep certs init`, common/tls_ca.h) signs a certificate for the
// controller and one for each agent. Both sides present their certificate and
// accept only a peer whose certificate chains to that CA:
//   agent:      MakeServerCredentials(files)  -- requires and verifies a client cert
//   controller: MakeChannelCredentials(files) -- presents its own cert, verifies the agent
//
// Host names: gRPC checks the agent's certificate against the host part of the
// target the controller dials ("node7:7070" -> "node7", "10.0.0.5:7070" ->
// IP 10.0.0.5). An agent certificate therefore needs a SAN for every name or
// IP address the controller uses for it (`--agent node7,node7.ib,10.0.0.5`).
// ApplyTlsTargetNameOverride() makes gRPC check a different name instead
// (for tests, or when dialing through a tunnel).
//
// Plaintext is allowed only with --insecure and only to loopback addresses
// (IsLoopbackHost).
#ifndef LOCKSTEP_COMMON_TLS_H_
#define LOCKSTEP_COMMON_TLS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <grpcpp/security/auth_context.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/tls_ca.h"

namespace lockstep {

// Paths of one side's TLS material (PEM files).
struct TlsFiles {
  std::string ca_pem;    // the CA certificate that peers must chain to
  std::string cert_pem;  // this side's certificate
  std::string key_pem;   // this side's private key (mode 0600)
};

// The contents of a TlsFiles, read and checked.
struct TlsPem {
  std::string ca;
  std::string cert;
  std::string key;
};

// Reads the three files and checks them: each parses as PEM, the key belongs
// to the certificate, the certificate is signed by the CA and valid now.
// Errors name the file and say what to do: NotFound for a missing file (run
// `lockstep certs init --dir DIR`), InvalidArgument for a file that is not
// what it should be, FailedPrecondition for an expired, not-yet-valid or
// foreign (other CA) certificate.
absl::StatusOr<TlsPem> LoadTlsFiles(const TlsFiles& files);

// ---- gRPC credentials ------------------------------------------------------

// OK when the certificate `cert_pem` (read from `path`) carries `role`;
// FailedPrecondition otherwise, naming the file, the role it has and the
// `lockstep certs issue` command that makes the right one.
absl::Status CheckOwnRole(const std::string& cert_pem, const std::string& path, CertRole role);

// Agent side: TLS server credentials that require a client certificate
// chained to files.ca_pem (GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY).
// files.cert_pem must carry `own_role` (CheckOwnRole). Errors are those of
// LoadTlsFiles and CheckOwnRole.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsFiles& files, CertRole own_role = CertRole::kAgent);

// Controller side: TLS channel credentials presenting files.cert_pem (which
// must carry the controller role) and trusting only files.ca_pem (never the
// system roots). Errors are those of LoadTlsFiles and CheckOwnRole.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const TlsFiles& files);

// Makes gRPC check the server certificate against `name` instead of the host
// part of the dialed target. Empty `name`: no change.
void ApplyTlsTargetNameOverride(const std::string& name, grpc::ChannelArguments* args);

// ---- Authorization ---------------------------------------------------------

// Call in a handler with *context->auth_context(). OK when the peer presented
// a certificate that chained to the CA and either `allowed_names` is empty or
// the certificate's CN or one of its SANs (DNS or IP) is in it (compared
// ignoring ASCII case). Unauthenticated when the connection carries no
// verified certificate (plaintext); PermissionDenied naming the peer's names
// and the allow list otherwise.
absl::Status CheckPeerAllowed(const grpc::AuthContext& ctx,
                              const std::vector<std::string>& allowed_names);

// Call in a handler (agent: kController) or on a finished client call
// (controller: kAgent) with the call's auth context. OK when the peer's
// verified certificate carries `role` (tls_ca.h CertRole); Unauthenticated
// without a verified certificate; PermissionDenied naming the peer's CN, the
// role it has and the `lockstep certs issue` command to reissue it otherwise
// (a role-less certificate of an older version included).
absl::Status CheckPeerRole(const grpc::AuthContext& ctx, CertRole role);

// True for "localhost" (any case, optional trailing dot), any 127.0.0.0/8
// address, ::1 and ::ffff:127.x.y.z. Accepts a bare host or address, a
// "host:port" / "[v6]:port" target and gRPC's "dns:///", "ipv4:", "ipv6:"
// prefixes. Other names are false: they are not resolved, since what they
// resolve to can change.
bool IsLoopbackHost(std::string_view host_or_address);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TLS_H_
