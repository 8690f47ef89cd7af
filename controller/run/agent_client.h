// The controller's handle on one agent: one channel, every call with a
// deadline, errors annotated with the agent's address. FanOut runs one unary
// call on many agents at once with the callback API.
#ifndef LOCKSTEP_CONTROLLER_RUN_AGENT_CLIENT_H_
#define LOCKSTEP_CONTROLLER_RUN_AGENT_CLIENT_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/time/time.h"
#include "common/errors.h"
#include "common/tls.h"
#include "lockstep/v1/agent.grpc.pb.h"

namespace lockstep {

class AgentClient {
 public:
  // `tls_files`: the files `credentials` were made of, for explaining a
  // failed handshake (common/tls_inspect.h); empty for plaintext.
  AgentClient(std::string address, v1::Role role,
              std::shared_ptr<grpc::ChannelCredentials> credentials, TlsFiles tls_files = {});

  const std::string& address() const { return address_; }
  v1::Role role() const { return role_; }
  // ROLE_UNSPECIFIED until Attach when the command line listed the agent.
  void set_role(v1::Role role) { role_ = role; }
  v1::Agent::Stub* stub() { return stub_.get(); }

  // Starts connecting the channel without waiting (Connect waits).
  void StartConnecting() { channel_->GetState(/*try_to_connect=*/true); }

  // Waits until the channel is connected. Unavailable names the address and
  // the timeout, and says what to check.
  absl::Status Connect(absl::Duration timeout);

  // Session state, set by the coordinator after Attach.
  std::string session_id;
  v1::HostFacts facts;

 private:
  std::string address_;
  v1::Role role_;
  TlsFiles tls_files_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Agent::Stub> stub_;
};

// Calls `call(stub, ctx, &requests[i], &reply, done)` on every agent at once
// and waits for all (each call has `timeout`). Results in agent order.
template <typename Req, typename Resp, typename Call>
std::vector<absl::StatusOr<Resp>> FanOut(const std::vector<AgentClient*>& agents,
                                         const std::vector<Req>& requests, absl::Duration timeout,
                                         Call call) {
  struct Slot {
    grpc::ClientContext ctx;
    Resp reply;
    grpc::Status status;
  };
  std::vector<std::unique_ptr<Slot>> slots;
  absl::BlockingCounter pending(static_cast<int>(agents.size()));
  for (size_t i = 0; i < agents.size(); ++i) {
    slots.push_back(std::make_unique<Slot>());
    Slot* slot = slots.back().get();
    slot->ctx.set_deadline(std::chrono::system_clock::now() +
                           absl::ToChronoMilliseconds(timeout));
    call(agents[i]->stub(), &slot->ctx, &requests[i], &slot->reply,
         [slot, &pending](grpc::Status s) {
           slot->status = std::move(s);
           pending.DecrementCount();
         });
  }
  pending.Wait();
  std::vector<absl::StatusOr<Resp>> out;
  for (size_t i = 0; i < agents.size(); ++i) {
    if (slots[i]->status.ok()) {
      out.push_back(std::move(slots[i]->reply));
    } else {
      out.push_back(FromGrpcStatus(slots[i]->status, agents[i]->address()));
    }
  }
  return out;
}

// Deadlines of the coordinator's calls: most calls answer at once; Prepare
// and Cleanup may remove large files on a slow file system; a cache barrier
// may sync much dirty data.
inline constexpr absl::Duration kRpcTimeout = absl::Seconds(30);
inline constexpr absl::Duration kPrepareTimeout = absl::Minutes(10);
inline constexpr absl::Duration kCacheTimeout = absl::Minutes(30);

// Binds an async method of the stub for FanOut, e.g. LOCKSTEP_ASYNC(Prepare).
#define LOCKSTEP_ASYNC(Method)                                                           \
  [](::lockstep::v1::Agent::Stub* stub, ::grpc::ClientContext* ctx, const auto* request, \
     auto* reply, std::function<void(::grpc::Status)> done) {                            \
    stub->async()->Method(ctx, request, reply, std::move(done));                         \
  }

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_AGENT_CLIENT_H_
