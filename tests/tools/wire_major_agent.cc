// wire_major_agent: a test-only stand-in for an agent of another wire protocol
// major, to test the controller's side of common/wire_version.h's rule with
// real processes (the real agent always speaks this build's major).
//
//   wire_major_agent --wire_major N [--wire_minor M]
//
// Serves lockstep.v1's Agent service, plaintext, on an ephemeral port of
// 127.0.0.1 and prints "listening on 127.0.0.1:PORT" once ready. Attach is
// answered with a session and HostFacts of wire protocol N.M (release
// "0.0.0-other", host "other-major-host"), as an agent of that release that does
// not check the controller's version would answer; Detach and Heartbeat
// succeed; every other call is UNIMPLEMENTED. Serves until SIGINT or
// SIGTERM. Exit 2 for a bad command line.
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/strings/numbers.h"
#include "lockstep/v1/agent.grpc.pb.h"

namespace {

class OtherMajorAgent final : public lockstep::v1::Agent::Service {
 public:
  OtherMajorAgent(uint32_t major, uint32_t minor) : major_(major), minor_(minor) {}

  grpc::Status Attach(grpc::ServerContext*, const lockstep::v1::AttachRequest*,
                      lockstep::v1::AttachReply* reply) override {
    reply->set_session_id("other-major-session");
    lockstep::v1::HostFacts* f = reply->mutable_facts();
    f->set_hostname("other-major-host");
    f->set_agent_version("0.0.0-other");
    f->set_wire_version(major_);
    f->set_wire_minor(minor_);
    f->set_cores(1);
    return grpc::Status::OK;
  }
  grpc::Status Detach(grpc::ServerContext*, const lockstep::v1::DetachRequest*,
                      lockstep::v1::DetachReply*) override {
    return grpc::Status::OK;
  }
  grpc::Status Heartbeat(grpc::ServerContext*, const lockstep::v1::HeartbeatRequest*,
                         lockstep::v1::HeartbeatReply*) override {
    return grpc::Status::OK;
  }

 private:
  const uint32_t major_;
  const uint32_t minor_;
};

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

}  // namespace

int main(int argc, char** argv) {
  uint32_t major = 0, minor = 0;
  bool have_major = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    uint32_t* target = flag == "--wire_major" ? &major : flag == "--wire_minor" ? &minor : nullptr;
    if (target == nullptr || !absl::SimpleAtoi(argv[i + 1], target)) {
      std::fprintf(stderr, "wire_major_agent: %s %s: expected --wire_major N [--wire_minor M]\n",
                   argv[i], argv[i + 1]);
      return 2;
    }
    have_major |= target == &major;
  }
  if (!have_major || argc % 2 == 0) {
    std::fprintf(stderr, "usage: wire_major_agent --wire_major N [--wire_minor M]\n");
    return 2;
  }
  OtherMajorAgent service(major, minor);
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "wire_major_agent: cannot listen on 127.0.0.1\n");
    return 1;
  }
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::printf("listening on 127.0.0.1:%d\n", port);
  std::fflush(stdout);
  while (!g_stop) pause();
  server->Shutdown();
  return 0;
}
