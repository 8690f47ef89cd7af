// agent_probe: a test-only tool that asks one agent what state it is in.
//
//   agent_probe ADDRESS [--tls_ca FILE [--tls_cert FILE --tls_key FILE]]
//               [--attach_wire_major N | --repeat N | --malformed]
//
// Sends a Heartbeat for a session the agent cannot know and prints one line:
// "idle" (no session), "busy" (another session holds it) or
// "code N: MESSAGE" (any other answer, e.g. 14 for a failed handshake).
// With --attach_wire_major N it is a controller that speaks wire protocol
// N.0 (release "0.0.0-probe") instead: it Attaches and prints "attached: wire
// MAJOR.MINOR agent VERSION" (the agent's HostFacts) and Detaches, or prints
// "code N: MESSAGE" for a refusal (the test of common/wire_version.h's rule).
// With --repeat N it Attaches and sends N Heartbeats in that session, one
// after another, and prints "N calls in T ms" (tests/bench/rpc_cost.sh reads
// the agent's CPU around it).
// With --malformed it sends every RPC with an empty request, and a few with
// absurd fields, and prints one line per call, "CALL(case): code N: MESSAGE"
// (the test of agent/request_checks.h: each is refused with code 3,
// INVALID_ARGUMENT, naming the field).
// Exit 0 when it printed a line (--repeat: 1 when a call failed, printed as
// "code N: MESSAGE"), 2 for a bad command line or unreadable file.
// Without --tls_ca: plaintext. With it: TLS from the files as they are (no
// validity check, so tests can present an expired or foreign certificate).
// A process rather than a function so that a test can run it inside a
// network namespace (ip netns exec NS agent_probe ...).
#include <chrono>
#include <cstdio>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/strings/numbers.h"
#include "common/files.h"
#include "common/wire_version.h"
#include "lockstep/v1/agent.grpc.pb.h"

namespace {

// Reads `path` into *out; false (and *out unchanged) if it cannot.
bool Slurp(const std::string& path, std::string* out) {
  absl::StatusOr<std::string> text = lockstep::ReadFileToString(path);
  if (text.ok()) *out = *std::move(text);
  return text.ok();
}

std::chrono::system_clock::time_point Deadline() {
  return std::chrono::system_clock::now() + std::chrono::seconds(2);
}

void PrintCode(const grpc::Status& s) {
  std::printf("code %d: %s\n", static_cast<int>(s.error_code()), s.error_message().c_str());
}

// Attaches as controller "agent_probe" (release 0.0.0-probe) of wire
// protocol `major`.`minor`; `lease_ms` 0: the agent's default.
grpc::Status Attach(lockstep::v1::Agent::Stub* stub, uint32_t major, uint32_t minor,
                    uint32_t lease_ms, lockstep::v1::AttachReply* reply) {
  lockstep::v1::AttachRequest req;
  req.set_run_id("agent_probe");
  req.set_controller("agent_probe");
  req.set_lease_ms(lease_ms);
  req.set_wire_major(major);
  req.set_wire_minor(minor);
  req.set_controller_version("0.0.0-probe");
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  return stub->Attach(&ctx, req, reply);
}

bool Detach(lockstep::v1::Agent::Stub* stub, const std::string& session_id) {
  lockstep::v1::DetachRequest req;
  req.set_session_id(session_id);
  lockstep::v1::DetachReply reply;
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  return stub->Detach(&ctx, req, &reply).ok();
}

// Attach as a controller of wire protocol `major`.0, then Detach.
int AttachAs(lockstep::v1::Agent::Stub* stub, uint32_t major) {
  lockstep::v1::AttachReply reply;
  if (grpc::Status s = Attach(stub, major, 0, 0, &reply); !s.ok()) {
    PrintCode(s);
    return 0;
  }
  std::printf("attached: wire %u.%u agent %s\n", reply.facts().wire_version(),
              reply.facts().wire_minor(), reply.facts().agent_version().c_str());
  return Detach(stub, reply.session_id()) ? 0 : 1;
}

// Attaches, sends `calls` Heartbeats one after another in the session (the
// agent's cost per unary call: read its CPU time around this), Detaches;
// prints "N calls in T ms".
int Repeat(lockstep::v1::Agent::Stub* stub, uint32_t calls) {
  lockstep::v1::AttachReply attached;
  if (grpc::Status s = Attach(stub, lockstep::kWireMajor, lockstep::kWireMinor, 60000, &attached);
      !s.ok()) {
    PrintCode(s);
    return 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (uint32_t i = 0; i < calls; ++i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    lockstep::v1::HeartbeatRequest req;
    req.set_session_id(attached.session_id());
    lockstep::v1::HeartbeatReply reply;
    if (grpc::Status s = stub->Heartbeat(&ctx, req, &reply); !s.ok()) {
      PrintCode(s);
      return 1;
    }
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  Detach(stub, attached.session_id());
  std::printf("%u calls in %.1f ms\n", calls, ms);
  return 0;
}

template <typename Req, typename Reply, typename Call>
void Try(const char* name, const Req& req, Call call) {
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  Reply reply;
  grpc::Status s = call(&ctx, req, &reply);
  std::printf("%s: ", name);
  PrintCode(s);
}

// --malformed: every call with an empty request, then absurd fields.
int Malformed(lockstep::v1::Agent::Stub* stub) {
  namespace v1 = lockstep::v1;
#define LOCKSTEP_PROBE(Method, Req, Reply, name, req)                                   \
  Try<v1::Req, v1::Reply>(name, req, [stub](grpc::ClientContext* c, const v1::Req& r, \
                                            v1::Reply* out) { return stub->Method(c, r, out); })
  LOCKSTEP_PROBE(Attach, AttachRequest, AttachReply, "Attach(empty)", v1::AttachRequest());
  LOCKSTEP_PROBE(Heartbeat, HeartbeatRequest, HeartbeatReply, "Heartbeat(empty)",
                 v1::HeartbeatRequest());
  LOCKSTEP_PROBE(Detach, DetachRequest, DetachReply, "Detach(empty)", v1::DetachRequest());
  LOCKSTEP_PROBE(Clock, ClockRequest, ClockReply, "Clock(empty)", v1::ClockRequest());
  LOCKSTEP_PROBE(Prepare, PrepareRequest, PrepareReply, "Prepare(empty)", v1::PrepareRequest());
  LOCKSTEP_PROBE(CacheBarrier, CacheRequest, CacheReply, "CacheBarrier(empty)",
                 v1::CacheRequest());
  LOCKSTEP_PROBE(Abort, AbortRequest, AbortReply, "Abort(empty)", v1::AbortRequest());
  LOCKSTEP_PROBE(Release, ReleaseRequest, ReleaseReply, "Release(empty)", v1::ReleaseRequest());
  LOCKSTEP_PROBE(Telemetry, TelemetryRequest, TelemetryReply, "Telemetry(empty)",
                 v1::TelemetryRequest());
  LOCKSTEP_PROBE(Cleanup, CleanupRequest, CleanupReply, "Cleanup(empty)", v1::CleanupRequest());
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    auto reader = stub->Start(&ctx, v1::StartRequest());
    v1::PhaseEvent event;
    while (reader->Read(&event)) {
    }
    std::printf("Start(empty): ");
    PrintCode(reader->Finish());
  }
  v1::AttachRequest a;
  a.set_run_id("probe");
  a.set_controller("agent_probe");
  a.set_wire_major(lockstep::kWireMajor);
  a.set_controller_version("0.0.0-probe");
  a.set_lease_ms(4'000'000'000u);
  LOCKSTEP_PROBE(Attach, AttachRequest, AttachReply, "Attach(lease_ms 4000000000)", a);
  a.set_lease_ms(0);
  a.set_run_id("\x1b[2Jprobe");
  LOCKSTEP_PROBE(Attach, AttachRequest, AttachReply, "Attach(run_id with ESC)", a);
  a.set_run_id(std::string(100000, 'r'));
  LOCKSTEP_PROBE(Attach, AttachRequest, AttachReply, "Attach(run_id of 100000 bytes)", a);
  v1::HeartbeatRequest h;
  h.set_session_id("s");
  h.set_stall_ms(4'000'000'000u);
  LOCKSTEP_PROBE(Heartbeat, HeartbeatRequest, HeartbeatReply, "Heartbeat(stall_ms 4000000000)",
                 h);
#undef LOCKSTEP_PROBE
  {
    v1::StartRequest st;
    st.set_session_id("s");
    st.set_phase_id("p");
    st.set_start_at_unix_ns(1);
    st.set_spin_duration_ns(-5);
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    auto reader = stub->Start(&ctx, st);
    v1::PhaseEvent event;
    while (reader->Read(&event)) {
    }
    std::printf("Start(spin_duration_ns -5): ");
    PrintCode(reader->Finish());
  }
  return 0;
}

int Usage(const char* why) {
  std::fprintf(stderr,
               "agent_probe: %s\nusage: agent_probe ADDRESS [--tls_ca FILE [--tls_cert FILE "
               "--tls_key FILE]] [--attach_wire_major N | --repeat N]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string address, ca, cert, key, wire_major, repeat;
  bool malformed = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--malformed") {
      malformed = true;
      continue;
    }
    std::string* value = a == "--tls_ca"              ? &ca
                         : a == "--tls_cert"          ? &cert
                         : a == "--tls_key"           ? &key
                         : a == "--attach_wire_major" ? &wire_major
                         : a == "--repeat"            ? &repeat
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
  if (!wire_major.empty() && !repeat.empty()) {
    return Usage("--attach_wire_major and --repeat do not go together; give one");
  }
  uint32_t major = 0;
  if (!wire_major.empty() && !absl::SimpleAtoi(wire_major, &major)) {
    return Usage(("--attach_wire_major wants a number, got " + wire_major).c_str());
  }

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
  if (!wire_major.empty()) return AttachAs(stub.get(), major);
  if (malformed) return Malformed(stub.get());
  uint32_t calls = 0;
  if (!repeat.empty() && (!absl::SimpleAtoi(repeat, &calls) || calls == 0)) {
    return Usage(("--repeat wants a count of calls, got " + repeat).c_str());
  }
  if (calls > 0) return Repeat(stub.get(), calls);
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  lockstep::v1::HeartbeatRequest req;
  req.set_session_id("probe-from-agent_probe");
  lockstep::v1::HeartbeatReply reply;
  const grpc::Status s = stub->Heartbeat(&ctx, req, &reply);
  if (s.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
    if (s.error_message().rfind("no session", 0) == 0) return std::puts("idle") < 0;
    if (s.error_message().rfind("busy:", 0) == 0) return std::puts("busy") < 0;
  }
  PrintCode(s);
  return 0;
}
