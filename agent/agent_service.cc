#include "agent/agent_service.h"

#include <deque>
#include <memory>

#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/errors.h"
#include "common/log.h"
#include "common/tls.h"

namespace lockstep {

namespace {

// A Start call's events, from the runner's monitor thread to the call's
// handler thread. Shared with the runner's sink, which may outlive the call.
class EventQueue {
 public:
  void Push(const v1::PhaseEvent& event) {
    absl::MutexLock lock(&mu_);
    queue_.push_back(event);
  }
  // The next event, waiting up to `timeout`; false if none came.
  bool Pop(absl::Duration timeout, v1::PhaseEvent* event) {
    absl::MutexLock lock(&mu_);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty(); };
    if (!mu_.AwaitWithTimeout(absl::Condition(&ready), timeout)) return false;
    *event = std::move(queue_.front());
    queue_.pop_front();
    return true;
  }

 private:
  absl::Mutex mu_;
  std::deque<v1::PhaseEvent> queue_ ABSL_GUARDED_BY(mu_);
};

class AgentServiceImpl final : public v1::Agent::Service {
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
    if (auto s = Authorize(ctx, "Attach"); !s.ok()) return s;
    return Reply(ctx, "Attach", core_->Attach(*request), reply);
  }
  grpc::Status Heartbeat(grpc::ServerContext* ctx, const v1::HeartbeatRequest* request,
                         v1::HeartbeatReply* reply) override {
    if (auto s = Authorize(ctx, "Heartbeat"); !s.ok()) return s;
    return Reply(ctx, "Heartbeat", core_->Heartbeat(*request), reply);
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
    if (auto s = Authorize(ctx, "Prepare"); !s.ok()) return s;
    return Reply(ctx, "Prepare", core_->Prepare(*request), reply);
  }
  grpc::Status CacheBarrier(grpc::ServerContext* ctx, const v1::CacheRequest* request,
                            v1::CacheReply* reply) override {
    if (auto s = Authorize(ctx, "CacheBarrier"); !s.ok()) return s;
    return Reply(ctx, "CacheBarrier", core_->CacheBarrier(*request), reply);
  }
  // The phase's events until its result, written from this call's thread
  // (the pool's: no callback method, so no callback queue's threads wake on
  // every call).
  grpc::Status Start(grpc::ServerContext* ctx, const v1::StartRequest* request,
                     grpc::ServerWriter<v1::PhaseEvent>* writer) override {
    if (auto s = Authorize(ctx, "Start"); !s.ok()) return s;
    auto events = std::make_shared<EventQueue>();
    absl::Status started =
        core_->Start(*request, [events](const v1::PhaseEvent& e) { events->Push(e); });
    if (!started.ok()) return Log(ctx, "Start", started);
    v1::PhaseEvent event;
    while (true) {
      if (!events->Pop(kCancelLookPeriod, &event)) {
        if (!ctx->IsCancelled()) continue;
        // The lease decides about the phase; a dropped stream alone does not.
        LogWarning("the controller cancelled a Start stream");
        return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by the controller");
      }
      if (!writer->Write(event)) return grpc::Status(grpc::StatusCode::CANCELLED, "write failed");
      if (event.has_result()) return grpc::Status::OK;
    }
  }
  grpc::Status Abort(grpc::ServerContext* ctx, const v1::AbortRequest* request,
                     v1::AbortReply* reply) override {
    if (auto s = Authorize(ctx, "Abort"); !s.ok()) return s;
    return Reply(ctx, "Abort", core_->Abort(*request), reply);
  }
  grpc::Status Release(grpc::ServerContext* ctx, const v1::ReleaseRequest* request,
                       v1::ReleaseReply* reply) override {
    if (auto s = Authorize(ctx, "Release"); !s.ok()) return s;
    return Reply(ctx, "Release", core_->Release(*request), reply);
  }
  grpc::Status Telemetry(grpc::ServerContext* ctx, const v1::TelemetryRequest* request,
                         v1::TelemetryReply* reply) override {
    if (auto s = Authorize(ctx, "Telemetry"); !s.ok()) return s;
    return Reply(ctx, "Telemetry", core_->Telemetry(*request), reply);
  }
  grpc::Status Cleanup(grpc::ServerContext* ctx, const v1::CleanupRequest* request,
                       v1::CleanupReply* reply) override {
    if (auto s = Authorize(ctx, "Cleanup"); !s.ok()) return s;
    return Reply(ctx, "Cleanup", core_->Cleanup(*request), reply);
  }

 private:
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
    if (!options_.require_tls_peer) return grpc::Status::OK;
    absl::Status s = CheckPeerAllowed(*ctx->auth_context(), options_.allowed_controllers);
    if (!s.ok()) {
      LogWarning("%s from %s refused: %s", method, ctx->peer(), s.ToString());
      return ToGrpcStatus(s);
    }
    return grpc::Status::OK;
  }

  // How often a Start call waiting for its next event looks whether it was
  // cancelled: by the controller, or by the server's shutdown (2 s after a
  // SIGTERM, main.cc), which waits for this thread.
  static constexpr absl::Duration kCancelLookPeriod = absl::Milliseconds(250);

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
}

}  // namespace lockstep
