#include "controller/run/agent_client.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "common/http2_flow.h"
#include "common/status_macros.h"
#include "common/tls_inspect.h"
#include "common/wire_version.h"
#include "controller/run/bounded_parallel.h"
#include "controller/run/tcp_probe.h"

namespace lockstep {

AgentClient::AgentClient(std::string address, v1::Role role,
                         std::shared_ptr<grpc::ChannelCredentials> credentials,
                         TlsFiles tls_files, absl::Duration keepalive_timeout)
    : address_(std::move(address)), role_(role), tls_files_(std::move(tls_files)) {
  grpc::ChannelArguments args;
  // Keepalive pings every 10 s, answered within 5 s, even between calls: a
  // peer that died without closing its socket (power loss, a cut link) is
  // noticed in seconds, not after the kernel's TCP timeouts. The agent
  // allows such pings (agent/main.cc).
  // The answer may take longer than 5 s from a healthy but busy peer (many
  // agents on few cores): whether an agent is alive is the lease's call
  // (Heartbeater), so keepalive waits 20 s, or the lease when longer, before
  // dropping a connection: never an agent the lease still holds alive.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
              static_cast<int>(absl::ToInt64Milliseconds(
                  std::clamp(keepalive_timeout, kKeepaliveTimeout, absl::Hours(1)))));
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  args.SetMaxReceiveMessageSize(64 << 20);
  // No BDP pings; a fixed window instead (common/http2_flow.h).
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, kHttp2StreamWindowBytes);
  // Fail fast and reconnect quickly in tests and after an agent restart.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // Neither channelz's per-call counters nor the retry filter's per-call
  // state: no call of ours has a retry policy, and each is one of N agents'
  // calls per phase (tests/bench/README.md section 25).
  args.SetInt(GRPC_ARG_ENABLE_CHANNELZ, 0);
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  channel_ = grpc::CreateCustomChannel(address_, credentials, args);
  stub_ = v1::Agent::NewStub(channel_);
}

absl::Status CallWatch::Check(const AgentClient* agent) const {
  if (interrupted != nullptr && interrupted->load()) {
    return absl::CancelledError("interrupted by the operator");
  }
  if (!lost) return absl::OkStatus();
  std::string why = lost(agent);
  if (why.empty()) return absl::OkStatus();
  return absl::UnavailableError(absl::StrFormat("agent %s: %s", agent->address(), why));
}

absl::Status AgentClient::Connect(absl::Duration timeout, const ConnectOptions& options) {
  const ConnectWait wait = WaitConnected(timeout, options);
  if (wait.connected) return absl::OkStatus();
  if (wait.interrupted) {
    return absl::CancelledError(absl::StrFormat("agent %s: interrupted while connecting", address_));
  }
  return ExplainNotConnected(timeout, wait, TcpProbe({address_})[0], options.timeout_setting);
}

std::vector<absl::Status> ConnectAll(const std::vector<AgentClient*>& agents,
                                     absl::Duration timeout, AgentClient::ConnectOptions options,
                                     size_t threads) {
  for (AgentClient* a : agents) a->StartConnecting();
  options.deadline = std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout);
  std::vector<AgentClient::ConnectWait> waits(agents.size());
  BoundedParallelFor(agents.size(), threads,
                     [&](size_t i) { waits[i] = agents[i]->WaitConnected(timeout, options); });
  std::vector<absl::Status> connected(agents.size());
  std::vector<size_t> silent;
  std::vector<std::string> addresses;
  const bool interrupted = options.interrupted != nullptr && options.interrupted->load();
  for (size_t i = 0; i < agents.size(); ++i) {
    if (waits[i].interrupted || (interrupted && !waits[i].connected)) {  // no probe
      connected[i] = absl::CancelledError(
          absl::StrFormat("agent %s: interrupted while connecting", agents[i]->address()));
    } else if (!waits[i].connected) {
      silent.push_back(i);
      addresses.push_back(agents[i]->address());
    }
  }
  const std::vector<std::string> tcp = TcpProbe(addresses, kTcpProbeTimeout, options.interrupted);
  BoundedParallelFor(silent.size(), threads, [&](size_t k) {
    const size_t i = silent[k];
    connected[i] =
        agents[i]->ExplainNotConnected(timeout, waits[i], tcp[k], options.timeout_setting);
  });
  return connected;
}

AgentClient::ConnectWait AgentClient::WaitConnected(absl::Duration timeout,
                                                    const ConnectOptions& options) {
  const auto deadline =
      options.deadline != std::chrono::system_clock::time_point{}
          ? options.deadline
          : std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout);
  ConnectWait wait;
  for (grpc_connectivity_state state = channel_->GetState(/*try_to_connect=*/true);
       state != GRPC_CHANNEL_READY; state = channel_->GetState(/*try_to_connect=*/true)) {
    if (options.interrupted != nullptr && options.interrupted->load()) {
      wait.interrupted = true;
      return wait;
    }
    // Whether an attempt failed (a refused or broken handshake), or all
    // were only slow: a timeout does not blame TLS.
    wait.failed_once |= state == GRPC_CHANNEL_TRANSIENT_FAILURE;
    if (wait.failed_once && options.fail_fast) break;
    const auto now = std::chrono::system_clock::now();
    if (now >= deadline) break;
    channel_->WaitForStateChange(state, std::min(deadline, now + std::chrono::milliseconds(50)));
  }
  wait.connected = channel_->GetState(false) == GRPC_CHANNEL_READY;
  return wait;
}

absl::Status AgentClient::CheckAgentRole(const grpc::ClientContext& ctx) {
  if (role_checked_.load()) return absl::OkStatus();
  // A TLS channel's calls always have a verified peer (the agent's certificate
  // chained to our CA); no verified peer means plaintext (--insecure).
  std::shared_ptr<const grpc::AuthContext> auth = ctx.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) return absl::OkStatus();
  RETURN_IF_ERROR(CheckPeerRole(*auth, CertRole::kAgent));
  role_checked_.store(true);
  return absl::OkStatus();
}

absl::Status AgentClient::ExplainNotConnected(absl::Duration timeout, const ConnectWait& wait,
                                              const std::string& tcp,
                                              const char* timeout_setting) const {
  const bool failed_once = wait.failed_once;
  if (tcp.empty() && !failed_once) {
    return absl::DeadlineExceededError(absl::StrFormat(
        "agent %s accepts TCP connections but its gRPC handshake was still in progress after "
        "%s: the agent or this machine is too busy to answer in time (many agents connecting "
        "at once); raise %s",
        address_, absl::FormatDuration(timeout), timeout_setting));
  }
  if (tcp.empty()) {
    if (!tls_files_.ca_pem.empty()) {
      const std::string why = DiagnoseTlsPeer(address_, tls_files_, absl::Seconds(2));
      if (!why.empty()) {
        return absl::UnavailableError(
            absl::StrFormat("agent %s: TLS handshake failed: %s", address_, why));
      }
    }
    return absl::UnavailableError(absl::StrFormat(
        "agent %s accepts TCP connections but the gRPC handshake %s: "
        "the TLS settings do not match (the agent's certificate is not from our CA or lacks "
        "this name/IP as a SAN, ours is not from its CA, or one side runs plaintext "
        "--insecure and the other TLS)",
        address_,
        failed_once ? "failed" : "did not complete within " + absl::FormatDuration(timeout)));
  }
  if (failed_once) {
    return absl::UnavailableError(absl::StrFormat(
        "agent %s cannot be reached: %s: check that lockstep-agent runs there and listens on "
        "that port",
        address_, tcp));
  }
  return absl::UnavailableError(absl::StrFormat(
      "agent %s did not answer within %s: check that lockstep-agent runs there, listens on that "
      "port, and that TLS settings match (%s sets the wait); TCP: %s",
      address_, absl::FormatDuration(timeout), timeout_setting, tcp));
}

void SetWireVersion(v1::AttachRequest* request) {
  const WireVersion own = OwnWireVersion();
  request->set_wire_major(own.major);
  request->set_wire_minor(own.minor);
  request->set_controller_version(own.release);
}

absl::Status CheckAgentWireVersion(const v1::HostFacts& facts, const std::string& address) {
  const std::string host = facts.hostname().empty() ? "" : " (host " + facts.hostname() + ")";
  return CheckWireVersions(OwnWireVersion(),
                           {facts.wire_version(), facts.wire_minor(), facts.agent_version()},
                           address + host);
}

}  // namespace lockstep
