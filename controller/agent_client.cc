#include "controller/agent_client.h"

#include "absl/strings/str_format.h"

namespace lockstep {

absl::Status FromGrpc(const grpc::Status& status, const std::string& address) {
  if (status.ok()) return absl::OkStatus();
  std::string msg = status.error_message();
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED && msg.empty()) {
    msg = "no answer before the deadline";
  }
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrFormat("agent %s: %s", address, msg));
}

AgentClient::AgentClient(std::string address, v1::Role role,
                         std::shared_ptr<grpc::ChannelCredentials> credentials)
    : address_(std::move(address)), role_(role) {
  grpc::ChannelArguments args;
  // Keepalive so that a dead peer is noticed (conventions.md): 10 s / 5 s.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  args.SetMaxReceiveMessageSize(64 << 20);
  // Fail fast and reconnect quickly in tests and after an agent restart.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  channel_ = grpc::CreateCustomChannel(address_, credentials, args);
  stub_ = v1::Agent::NewStub(channel_);
}

absl::Status AgentClient::Connect(absl::Duration timeout) {
  auto deadline = std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout);
  if (channel_->WaitForConnected(deadline)) return absl::OkStatus();
  return absl::UnavailableError(absl::StrFormat(
      "agent %s did not answer within %s: check that lockstep-agent runs there, listens on that "
      "port, and that TLS settings match (connect_timeout_ms in [run] sets the wait)",
      address_, absl::FormatDuration(timeout)));
}

}  // namespace lockstep
