#include "agent/agent_service.h"

#include <unistd.h>

#include <deque>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "agent/loopback_peer.h"
#include "common/clock.h"
#include "common/errors.h"
#include "common/http2_flow.h"
#include "common/log.h"
#include "common/tls.h"

namespace lockstep {

namespace {

using AgentBase = v1::Agent::WithCallbackMethod_Start<v1::Agent::Service>;

// The events of one phase, from the runner's monitor thread to the stream.
// Shared by the reactor and the runner's sink so that either may go first.
class Outbox {
 public:
  explicit Outbox(grpc::ServerWriteReactor<v1::PhaseEvent>* reactor) : reactor_(reactor) {}

  // From the runner: queue an event and start writing if idle.
  void Push(const v1::PhaseEvent& event) {
    grpc::ServerWriteReactor<v1::PhaseEvent>* r = nullptr;
    {
      absl::MutexLock lock(&mu_);
      // The call is gone, or finished (a failed write): no StartWrite after
      // Finish, and none racing OnDone's delete.
      if (reactor_ == nullptr || finished_) return;
      queue_.push_back(event);
      if (writing_) return;
      writing_ = true;
      current_ = std::move(queue_.front());
      queue_.pop_front();
      r = reactor_;
    }
    r->StartWrite(&current_);
  }

  // From the reactor after a write: next event, or finish after the result.
  void WriteDone(bool ok) {
    grpc::ServerWriteReactor<v1::PhaseEvent>* r = nullptr;
    bool finish = false;
    {
      absl::MutexLock lock(&mu_);
      if (reactor_ == nullptr) return;
      r = reactor_;
      if (!ok) {
        finish = !finished_;
        finished_ = true;
        writing_ = false;
      } else if (current_.has_result()) {
        finish = !finished_;
        finished_ = true;
        writing_ = false;
      } else if (queue_.empty()) {
        writing_ = false;
        return;
      } else {
        current_ = std::move(queue_.front());
        queue_.pop_front();
      }
    }
    if (finish) {
      r->Finish(ok ? grpc::Status::OK : grpc::Status(grpc::StatusCode::CANCELLED, "write failed"));
    } else {
      r->StartWrite(&current_);
    }
  }

  void FinishWith(const grpc::Status& status) {
    grpc::ServerWriteReactor<v1::PhaseEvent>* r = nullptr;
    {
      absl::MutexLock lock(&mu_);
      if (reactor_ == nullptr || finished_) return;
      finished_ = true;
      r = reactor_;
    }
    r->Finish(status);
  }

  void Detach() {
    absl::MutexLock lock(&mu_);
    reactor_ = nullptr;
  }

 private:
  absl::Mutex mu_;
  grpc::ServerWriteReactor<v1::PhaseEvent>* reactor_ ABSL_GUARDED_BY(mu_);
  std::deque<v1::PhaseEvent> queue_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  // Owned by the in-flight write; touched only by the writer of the moment.
  v1::PhaseEvent current_;
};

class StartReactor : public grpc::ServerWriteReactor<v1::PhaseEvent> {
 public:
  StartReactor(AgentCore* core, const v1::StartRequest& request)
      : outbox_(std::make_shared<Outbox>(this)) {
    if (core == nullptr) return;  // refused: see Refuse()
    std::shared_ptr<Outbox> outbox = outbox_;
    absl::Status s =
        core->Start(request, [outbox](const v1::PhaseEvent& event) { outbox->Push(event); });
    if (!s.ok()) outbox_->FinishWith(ToGrpcStatus(s));
  }

  void Refuse(const grpc::Status& status) { outbox_->FinishWith(status); }
  void OnWriteDone(bool ok) override { outbox_->WriteDone(ok); }
  void OnCancel() override {
    // The lease decides about the phase; a dropped stream alone does not.
    LogWarning("the controller cancelled a Start stream");
  }
  void OnDone() override {
    outbox_->Detach();
    delete this;
  }

 private:
  std::shared_ptr<Outbox> outbox_;
};

// A plaintext call on loopback to an agent running as root: from root or
// the agent's own account only (AgentServiceOptions.local_accounts_port).
absl::Status CheckLocalAccount(const std::string& peer, const std::string& ip, int port) {
  auto uid = LoopbackPeerUid(peer, ip, static_cast<uint16_t>(port));
  if (!uid.ok()) {
    return absl::UnauthenticatedError(absl::StrFormat(
        "cannot tell which account called from %s (%s): an agent with --insecure as root "
        "answers only root and its own account",
        peer, uid.status().message()));
  }
  if (*uid == 0 || *uid == ::geteuid()) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrFormat(
      "the call from %s came from uid %d: an agent with --insecure as root answers only root "
      "and its own account (uid %d); other accounts need mutual TLS (deploy/certs.sh)",
      peer, *uid, ::geteuid()));
}

class AgentServiceImpl final : public AgentBase {
 public:
  AgentServiceImpl(AgentCore* core, AgentServiceOptions options)
      : core_(core), options_(std::move(options)) {}

  grpc::Status Identify(grpc::ServerContext* ctx, const v1::IdentifyRequest*,
                        v1::HostFacts* reply) override {
    if (auto s = Authorize(ctx, "Identify"); !s.ok()) return s;
    *reply = core_->Facts();
    return grpc::Status::OK;
  }

  grpc::Status Attach(grpc::ServerContext* ctx, const v1::AttachRequest* request,
                      v1::AttachReply* reply) override {
    return Serve(ctx, "Attach", &AgentCore::Attach, request, reply);
  }
  grpc::Status Heartbeat(grpc::ServerContext* ctx, const v1::HeartbeatRequest* request,
                         v1::HeartbeatReply* reply) override {
    return Serve(ctx, "Heartbeat", &AgentCore::Heartbeat, request, reply);
  }
  grpc::Status Detach(grpc::ServerContext* ctx, const v1::DetachRequest* request,
                      v1::DetachReply*) override {
    if (auto s = Authorize(ctx, "Detach"); !s.ok()) return s;
    return Log(ctx, "Detach", core_->Detach(*request));
  }
  grpc::Status Clock(grpc::ServerContext* ctx, const v1::ClockRequest* request,
                     v1::ClockReply* reply) override {
    int64_t received = RealtimeNs();
    if (auto s = Authorize(ctx, "Clock"); !s.ok()) return s;
    return Reply(ctx, "Clock", core_->Clock(*request, received), reply);
  }
  grpc::Status Prepare(grpc::ServerContext* ctx, const v1::PrepareRequest* request,
                       v1::PrepareReply* reply) override {
    return Serve(ctx, "Prepare", &AgentCore::Prepare, request, reply);
  }
  grpc::Status CacheBarrier(grpc::ServerContext* ctx, const v1::CacheRequest* request,
                            v1::CacheReply* reply) override {
    return Serve(ctx, "CacheBarrier", &AgentCore::CacheBarrier, request, reply);
  }
  grpc::ServerWriteReactor<v1::PhaseEvent>* Start(grpc::CallbackServerContext* ctx,
                                                  const v1::StartRequest* request) override {
    if (auto s = Authorize(ctx, "Start"); !s.ok()) {
      auto* reactor = new StartReactor(nullptr, *request);
      reactor->Refuse(s);
      return reactor;
    }
    return new StartReactor(core_, *request);
  }
  grpc::Status Abort(grpc::ServerContext* ctx, const v1::AbortRequest* request,
                     v1::AbortReply* reply) override {
    return Serve(ctx, "Abort", &AgentCore::Abort, request, reply);
  }
  grpc::Status Release(grpc::ServerContext* ctx, const v1::ReleaseRequest* request,
                       v1::ReleaseReply* reply) override {
    return Serve(ctx, "Release", &AgentCore::Release, request, reply);
  }
  grpc::Status Telemetry(grpc::ServerContext* ctx, const v1::TelemetryRequest* request,
                         v1::TelemetryReply* reply) override {
    return Serve(ctx, "Telemetry", &AgentCore::Telemetry, request, reply);
  }
  grpc::Status Cleanup(grpc::ServerContext* ctx, const v1::CleanupRequest* request,
                       v1::CleanupReply* reply) override {
    return Serve(ctx, "Cleanup", &AgentCore::Cleanup, request, reply);
  }

 private:
  // A unary call's one shape: refuse a peer Authorize refuses, else answer
  // with what the core's `handle` makes of the request.
  template <typename Request, typename Response>
  grpc::Status Serve(grpc::ServerContext* ctx, const char* method,
                     absl::StatusOr<Response> (AgentCore::*handle)(const Request&),
                     const Request* request, Response* reply) {
    if (auto s = Authorize(ctx, method); !s.ok()) return s;
    return Reply(ctx, method, (core_->*handle)(*request), reply);
  }
  template <typename T>
  grpc::Status Reply(grpc::ServerContext* ctx, const char* method, absl::StatusOr<T> result,
                     T* reply) {
    if (!result.ok()) return Log(ctx, method, result.status());
    *reply = std::move(*result);
    return grpc::Status::OK;
  }
  grpc::Status Log(grpc::ServerContext* ctx, const char* method, const absl::Status& s) {
    if (!s.ok()) LogWarning("%s from %s: %s", method, ctx->peer(), s.ToString());
    return ToGrpcStatus(s);
  }

  template <typename Ctx>
  grpc::Status Authorize(Ctx* ctx, const char* method) {
    absl::Status s;
    if (options_.local_accounts_port != nullptr) {
      s = CheckLocalAccount(ctx->peer(), options_.local_accounts_ip,
                            options_.local_accounts_port->load());
    } else if (!options_.require_tls_peer) {
      return grpc::Status::OK;
    } else {
      s = CheckPeerRole(*ctx->auth_context(), CertRole::kController);
      if (s.ok()) s = CheckPeerAllowed(*ctx->auth_context(), options_.allowed_controllers);
    }
    if (!s.ok()) {
      LogWarning("%s from %s refused: %s", method, ctx->peer(), s.ToString());
      return ToGrpcStatus(s);
    }
    return grpc::Status::OK;
  }

  AgentCore* core_;
  AgentServiceOptions options_;
};

}  // namespace

std::unique_ptr<grpc::Service> MakeAgentService(AgentCore* core,
                                                const AgentServiceOptions& options) {
  return std::make_unique<AgentServiceImpl>(core, options);
}

void ApplyAgentServerOptions(grpc::ServerBuilder* builder) {
  builder->SetMaxReceiveMessageSize(64 << 20);
  builder->SetMaxSendMessageSize(64 << 20);
  // Let controllers keep the connection alive with pings (conventions.md).
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // gRPC sets SO_REUSEPORT by default: a second agent on a taken port would
  // start and take half of its connections. One agent per port.
  builder->AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // No BDP pings; a fixed window instead (common/http2_flow.h).
  builder->AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  builder->AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, kHttp2StreamWindowBytes);
}

}  // namespace lockstep
