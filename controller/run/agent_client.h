// The controller's handle on one agent: one channel, every call with a
// deadline, errors annotated with the agent's address. FanOut runs one unary
// call on many agents at once with the callback API; a CallWatch ends the
// calls of agents found lost, or all of them on an interrupt, long before
// their deadline.
#ifndef LOCKSTEP_CONTROLLER_RUN_AGENT_CLIENT_H_
#define LOCKSTEP_CONTROLLER_RUN_AGENT_CLIENT_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "common/tls.h"
#include "lockstep/v1/agent.grpc.pb.h"

namespace lockstep {

class AgentClient {
 public:
  // `tls_files`: the files `credentials` were made of, for explaining a
  // failed handshake (common/tls_inspect.h); empty for plaintext.
  // `keepalive_timeout`: how long a keepalive ping may go unanswered before
  // the connection is dropped (at least kKeepaliveTimeout; a run passes its
  // lease when longer, so that only the lease decides a busy agent is lost).
  static constexpr absl::Duration kKeepaliveTimeout = absl::Seconds(20);
  AgentClient(std::string address, v1::Role role,
              std::shared_ptr<grpc::ChannelCredentials> credentials, TlsFiles tls_files = {},
              absl::Duration keepalive_timeout = kKeepaliveTimeout);

  const std::string& address() const { return address_; }
  v1::Role role() const { return role_; }
  // ROLE_UNSPECIFIED until Attach when the command line listed the agent.
  void set_role(v1::Role role) { role_ = role; }
  v1::Agent::Stub* stub() { return stub_.get(); }

  // Starts connecting the channel without waiting (Connect waits).
  void StartConnecting() { channel_->GetState(/*try_to_connect=*/true); }

  // Waits until the channel is connected. Unavailable names the address and
  // the timeout, and says what to check. With `fail_fast`, the first failed
  // attempt ends the wait (a refused or unreachable address, a failed
  // handshake) and the error gives its cause; without it a refused address
  // is retried until `timeout` (an agent still starting). Cancelled once
  // `*interrupted` is set (looked at every 50 ms).
  struct ConnectOptions {
    bool fail_fast = false;
    const std::atomic<bool>* interrupted = nullptr;
    // When set, the wait ends at this instant instead of `timeout` from the
    // call: channels that started connecting together (StartConnecting)
    // share one deadline, so that waiting for thousands of them with a few
    // threads takes `timeout` once, not once per thread's turn.
    std::chrono::system_clock::time_point deadline{};
    // What sets `timeout`, for the errors that suggest a longer one.
    const char* timeout_setting = "connect_timeout_ms in [run]";
  };
  absl::Status Connect(absl::Duration timeout, const ConnectOptions& options);
  absl::Status Connect(absl::Duration timeout) { return Connect(timeout, ConnectOptions{}); }

  // Connect in two steps, for many agents at once (ConnectAll): the wait,
  // then why those that did not connect did not.
  struct ConnectWait {
    bool connected = false;
    bool interrupted = false;
    bool failed_once = false;  // an attempt failed, rather than all being slow
  };
  ConnectWait WaitConnected(absl::Duration timeout, const ConnectOptions& options);
  // Why the wait did not connect: `tcp` is TcpProbe's answer for this
  // address (empty: it accepted a TCP connection). With TLS files, a
  // listening agent's handshake is tried once more to say what mismatches.
  absl::Status ExplainNotConnected(absl::Duration timeout, const ConnectWait& wait,
                                   const std::string& tcp, const char* timeout_setting) const;

  // With TLS: OK when the agent's certificate, seen on `ctx` of a call that
  // succeeded, carries the agent role (common/tls.h CheckPeerRole; looked at
  // until one call passed). Plaintext: OK. FanOut calls it on every call.
  absl::Status CheckAgentRole(const grpc::ClientContext& ctx);

  // Session state, set by the coordinator after Attach.
  std::string session_id;
  v1::HostFacts facts;

 private:
  std::string address_;
  v1::Role role_;
  TlsFiles tls_files_;
  std::atomic<bool> role_checked_{false};
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Agent::Stub> stub_;
};

// Connects `agents` all at once, `threads` waiting at a time, until one
// deadline `timeout` after they all started (options.deadline is set
// here); OK or each one's error, in order. Those that did not connect are
// then probed over TCP all together (tcp_probe.h) and explained, so that N
// silent hosts cost one probe's wait, not N. Cancelled errors once
// options.interrupted is set.
std::vector<absl::Status> ConnectAll(const std::vector<AgentClient*>& agents,
                                     absl::Duration timeout, AgentClient::ConnectOptions options,
                                     size_t threads);

// What may end a FanOut's calls before their deadline, looked at every
// kCallWatchPeriod while calls are outstanding:
//   - `interrupted` set: every outstanding call is cancelled and fails
//     Cancelled "interrupted by the operator";
//   - `lost(agent)` non-empty (the Heartbeater found it silent beyond its
//     lease, or it dropped our session): that agent's call is cancelled and
//     fails Unavailable with that reason (FailureOfSetupCall: kAgentLost).
// An agent that still answers heartbeats is never cut: its call runs to its
// deadline (a slow Prepare on a slow file system is legitimate).
//
// `answered(agent, sent_mono_ns)`, if set, is told of every call that agent
// answered OK (from a gRPC thread; `sent_mono_ns`: when the call was
// started): the Heartbeater counts it as a heartbeat answer, since the
// agent renewed its lease when the call reached it (agent wire minor 4).
// `sending(agent, sent_mono_ns)`, if set, is told of every call just before
// it is started (on the thread that starts it): the Heartbeater may hold
// that agent's next heartbeat back until a period after it.
struct CallWatch {
  std::function<std::string(const AgentClient*)> lost;  // may be empty
  const std::atomic<bool>* interrupted = nullptr;
  std::function<void(const AgentClient*, int64_t sent_mono_ns)> answered;  // may be empty
  std::function<void(const AgentClient*, int64_t sent_mono_ns)> sending;   // may be empty

  // OK while `agent`'s call may go on; else the status it ends with.
  absl::Status Check(const AgentClient* agent) const;
};
inline constexpr absl::Duration kCallWatchPeriod = absl::Milliseconds(50);

// Calls `call(stub, ctx, &requests[i], &reply, done)` on every agent at once
// and waits for all (each call has `timeout`, and `watch`, if given, may end
// it sooner). Results in agent order.
template <typename Req, typename Resp, typename Call>
std::vector<absl::StatusOr<Resp>> FanOut(const std::vector<AgentClient*>& agents,
                                         const std::vector<Req>& requests, absl::Duration timeout,
                                         Call call, const CallWatch* watch = nullptr) {
  struct Slot {
    grpc::ClientContext ctx;
    Resp reply;
    grpc::Status status;
    std::atomic<bool> done{false};
    absl::Status ended_by;  // why the watch cancelled it; the waiting thread's only
  };
  std::vector<std::unique_ptr<Slot>> slots;
  std::atomic<size_t> pending{agents.size()};
  absl::Notification all_done;
  if (agents.empty()) all_done.Notify();
  const bool tell = watch != nullptr && watch->answered;
  const bool sends = watch != nullptr && watch->sending;
  for (size_t i = 0; i < agents.size(); ++i) {
    slots.push_back(std::make_unique<Slot>());
    Slot* slot = slots.back().get();
    slot->ctx.set_deadline(std::chrono::system_clock::now() +
                           absl::ToChronoMilliseconds(timeout));
    const int64_t sent_mono_ns = tell || sends ? MonotonicNs() : 0;
    if (sends) watch->sending(agents[i], sent_mono_ns);
    call(agents[i]->stub(), &slot->ctx, &requests[i], &slot->reply,
         [slot, &pending, &all_done, tell, watch, agent = agents[i], sent_mono_ns](grpc::Status s) {
           if (tell && s.ok()) watch->answered(agent, sent_mono_ns);
           slot->status = std::move(s);
           slot->done.store(true);
           if (pending.fetch_sub(1) == 1) all_done.Notify();
         });
  }
  if (watch == nullptr) {
    all_done.WaitForNotification();
  } else {
    while (!all_done.WaitForNotificationWithTimeout(kCallWatchPeriod)) {
      for (size_t i = 0; i < agents.size(); ++i) {
        Slot& slot = *slots[i];
        if (slot.done.load() || !slot.ended_by.ok()) continue;
        slot.ended_by = watch->Check(agents[i]);
        if (!slot.ended_by.ok()) slot.ctx.TryCancel();
      }
    }
  }
  std::vector<absl::StatusOr<Resp>> out;
  for (size_t i = 0; i < agents.size(); ++i) {
    absl::Status role;
    if (slots[i]->status.ok()) role = agents[i]->CheckAgentRole(slots[i]->ctx);
    if (!role.ok()) {
      out.push_back(Annotate(role, agents[i]->address()));
    } else if (slots[i]->status.ok()) {
      out.push_back(std::move(slots[i]->reply));
    } else if (!slots[i]->ended_by.ok()) {
      out.push_back(slots[i]->ended_by);
    } else {
      out.push_back(FromGrpcStatus(slots[i]->status, agents[i]->address()));
    }
  }
  return out;
}

// Deadlines of the coordinator's calls: most calls answer at once; Prepare
// and Cleanup may remove large files on a slow file system; a cache barrier
// may sync much dirty data. These bound only agents that keep answering
// heartbeats: a silent agent's call is ended by its CallWatch within the
// lease.
inline constexpr absl::Duration kRpcTimeout = absl::Seconds(30);
inline constexpr absl::Duration kPrepareTimeout = absl::Minutes(10);
inline constexpr absl::Duration kCacheTimeout = absl::Minutes(30);
// After an interrupt, each best-effort step (abort, file removal, detach)
// waits at most this long, so that the controller exits within a second;
// an agent that did not finish removing its files is not detached, and
// removes them itself when its lease expires.
inline constexpr absl::Duration kInterruptedCallTimeout = absl::Milliseconds(250);

// Binds an async method of the stub for FanOut, e.g. LOCKSTEP_ASYNC(Prepare).
#define LOCKSTEP_ASYNC(Method)                                                           \
  [](::lockstep::v1::Agent::Stub* stub, ::grpc::ClientContext* ctx, const auto* request, \
     auto* reply, std::function<void(::grpc::Status)> done) {                            \
    stub->async()->Method(ctx, request, reply, std::move(done));                         \
  }

// Attach says which wire protocol this controller speaks.
void SetWireVersion(v1::AttachRequest* request);

// The agent's answer checked as the agent checks ours (agents older than
// that check attach any controller), the agent named by its address and the
// host it says it runs on.
absl::Status CheckAgentWireVersion(const v1::HostFacts& facts, const std::string& address);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_AGENT_CLIENT_H_
