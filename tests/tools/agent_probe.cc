// agent_probe: a test-only tool that asks one agent what state it is in.
//
//   agent_probe ADDRESS [--tls_ca FILE [--tls_cert FILE --tls_key FILE]]
//
// Sends a Heartbeat for a session the agent cannot know and prints one line:
// "idle" (no session), "busy" (another session holds it) or
// "code N: MESSAGE" (any other answer, e.g. 14 for a failed handshake).
// Exit 0 when it printed a line, 2 for a bad command line or unreadable file.
// Without --tls_ca: plaintext. With it: TLS from the files as they are (no
// validity check, so tests can present an expired or foreign certificate).
// A process rather than a function so that a test can run it inside a
// network namespace (ip netns exec NS agent_probe ...).
#include <chrono>
#include <cstdio>
#include <string>

#include <grpcpp/grpcpp.h>

#include "common/files.h"
#include "lockstep/v1/agent.grpc.pb.h"

namespace {

// Reads `path` into *out; false (and *out unchanged) if it cannot.
bool Slurp(const std::string& path, std::string* out) {
  absl::StatusOr<std::string> text = lockstep::ReadFileToString(path);
  if (text.ok()) *out = *std::move(text);
  return text.ok();
}

int Usage(const char* why) {
  std::fprintf(stderr,
               "agent_probe: %s\nusage: agent_probe ADDRESS [--tls_ca FILE [--tls_cert FILE "
               "--tls_key FILE]]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string address, ca, cert, key;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    std::string* value = a == "--tls_ca"     ? &ca
                         : a == "--tls_cert" ? &cert
                         : a == "--tls_key"  ? &key
                                             : nullptr;
    if (value != nullptr) {
      if (++i == argc) return Usage(("missing value for " + a).c_str());
      *value = argv[i];
    } else if (a.rfind("--", 0) == 0 || !address.empty()) {
      return Usage(("unexpected argument " + a).c_str());
    } else {
      address = a;
    }
  }
  if (address.empty()) return Usage("no ADDRESS");
  if (cert.empty() != key.empty()) return Usage("--tls_cert and --tls_key go together");

  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (!ca.empty()) {
    grpc::SslCredentialsOptions o;
    if (!Slurp(ca, &o.pem_root_certs)) return Usage(("cannot read " + ca).c_str());
    if (!cert.empty() &&
        (!Slurp(cert, &o.pem_cert_chain) || !Slurp(key, &o.pem_private_key))) {
      return Usage(("cannot read " + cert + " or " + key).c_str());
    }
    creds = grpc::SslCredentials(o);
  }
  auto stub = lockstep::v1::Agent::NewStub(grpc::CreateChannel(address, creds));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  lockstep::v1::HeartbeatRequest req;
  req.set_session_id("probe-from-agent_probe");
  lockstep::v1::HeartbeatReply reply;
  const grpc::Status s = stub->Heartbeat(&ctx, req, &reply);
  if (s.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
    if (s.error_message().rfind("no session", 0) == 0) return std::puts("idle") < 0;
    if (s.error_message().rfind("busy:", 0) == 0) return std::puts("busy") < 0;
  }
  std::printf("code %d: %s\n", static_cast<int>(s.error_code()), s.error_message().c_str());
  return 0;
}
