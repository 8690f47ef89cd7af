// agent_swarm: a test-only tool that hosts N complete agents in one process,
// so that a controller can be measured against 1,024 or 10,000 agents on one
// machine (tests/bench/scale.sh).
//
//   agent_swarm --agents N --root DIR --addresses FILE
//               [--threads T] [--telemetry on|off] [--telemetry_interval_ms MS]
//               [--host 127.0.0.1] [--tls_ca CA --tls_cert CERT --tls_key KEY]
//
// Each agent is the agent's own code: one AgentCore (sessions, leases,
// watchdog, Prepare, PhaseRunner with real task threads and real small I/O)
// with its own root DIR/aK, and the agent's own gRPC service
// (MakeAgentService), each listening on its own port. What is shared: one
// grpc::Server holds every listening port, so the agents share its polling
// threads and T completion queues (default 2; one polling thread or more
// each) and gRPC's synchronous handler pool, which grows with the calls in
// flight (up to one thread per agent during a Prepare round); each call is
// routed to the agent whose port the
// controller dialled (the call's :authority, "HOST:PORT"). One gRPC server
// per agent would cost at least one polling thread per agent, too many at
// 10,000 next to the agents' own threads. The machine's CPUs are shared by
// every agent's tasks as well. Telemetry: every agent samples its host in the
// background, every MS (default 10000, not the agent's 1000: 1,024 samplers
// at 1 s take most of two cores); a phase still has a sample at each end.
//
// Writes the agents' addresses to FILE, one per line, in agent order, then
// prints "ready N" and "listening on ADDRESS" (the first agent's) and serves
// until SIGINT or SIGTERM. Plaintext on loopback (like `lockstep-agent
// --insecure`), or with --tls_ca/--tls_cert/--tls_key mutual TLS as
// lockstep-agent serves it (MakeServerCredentials: a client certificate
// chained to CA required), so that a controller's cost per agent can be
// measured with the TLS every remote agent needs; each agent's certificate
// is CERT (its SANs must name HOST). File descriptors: one listening
// socket per agent plus one per controller connection (and spares: 3 per
// agent are asked for); the soft limit is
// raised to the hard one, and (as root) the hard one to what is needed.
// At exit it writes "agent_swarm calls: {"Heartbeat":N,...}" to stderr: the
// calls served, by method.
#include <signal.h>
#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/synchronization/mutex.h"
#include "agent/agent_core.h"
#include "agent/agent_service.h"
#include "common/tls.h"
#include "lockstep/v1/agent.grpc.pb.h"

namespace lockstep {
namespace {

using ServiceBase = v1::Agent::WithCallbackMethod_Start<v1::Agent::Service>;

struct Options {
  int agents = 0;
  std::string root;
  std::string addresses;
  int threads = 2;
  bool telemetry = true;
  uint32_t telemetry_interval_ms = 10000;
  std::string host = "127.0.0.1";
  TlsFiles tls;  // all empty: plaintext
};

// Routes each call to the agent listening on the port the caller dialled.
class Router final : public ServiceBase {
 public:
  void Add(int port, ServiceBase* agent) { by_port_[port] = agent; }

  // Calls served, by method (Heartbeat, Prepare, ...), as one JSON object.
  std::string CallsJson() const {
    std::string out;
    for (const auto& [name, n] : calls_) {
      out += (out.empty() ? "{\"" : ",\"") + std::string(name) + "\":" + std::to_string(n->load());
    }
    return out.empty() ? "{}" : out + "}";
  }

#define LOCKSTEP_ROUTE(Method, Req, Resp)                                           \
  grpc::Status Method(grpc::ServerContext* ctx, const v1::Req* request,             \
                      v1::Resp* reply) override {                                   \
    Count(#Method);                                                                 \
    ServiceBase* agent = Find(ctx);                                                 \
    if (agent == nullptr) return Unknown(ctx);                                      \
    return agent->Method(ctx, request, reply);                                      \
  }
  LOCKSTEP_ROUTE(Identify, IdentifyRequest, HostFacts)
  LOCKSTEP_ROUTE(Attach, AttachRequest, AttachReply)
  LOCKSTEP_ROUTE(Heartbeat, HeartbeatRequest, HeartbeatReply)
  LOCKSTEP_ROUTE(Clock, ClockRequest, ClockReply)
  LOCKSTEP_ROUTE(Prepare, PrepareRequest, PrepareReply)
  LOCKSTEP_ROUTE(CacheBarrier, CacheRequest, CacheReply)
  LOCKSTEP_ROUTE(Abort, AbortRequest, AbortReply)
  LOCKSTEP_ROUTE(Cleanup, CleanupRequest, CleanupReply)
  LOCKSTEP_ROUTE(Detach, DetachRequest, DetachReply)
  LOCKSTEP_ROUTE(Telemetry, TelemetryRequest, TelemetryReply)
#undef LOCKSTEP_ROUTE

  grpc::ServerWriteReactor<v1::PhaseEvent>* Start(grpc::CallbackServerContext* ctx,
                                                  const v1::StartRequest* request) override {
    Count("Start");
    ServiceBase* agent = Find(ctx);
    if (agent != nullptr) return agent->Start(ctx, request);
    class Refuse : public grpc::ServerWriteReactor<v1::PhaseEvent> {
     public:
      Refuse() { Finish(grpc::Status(grpc::StatusCode::NOT_FOUND, "no agent on that port")); }
      void OnDone() override { delete this; }
    };
    return new Refuse();
  }

 private:
  void Count(const char* method) {
    auto it = calls_.find(method);
    if (it != calls_.end()) it->second->fetch_add(1, std::memory_order_relaxed);
  }

  template <typename Ctx>
  ServiceBase* Find(Ctx* ctx) const {
    const grpc::string_ref authority = ctx->ExperimentalGetAuthority();
    const std::string a(authority.data(), authority.size());
    const size_t colon = a.rfind(':');
    if (colon == std::string::npos) return nullptr;
    auto it = by_port_.find(std::atoi(a.c_str() + colon + 1));
    return it == by_port_.end() ? nullptr : it->second;
  }
  static grpc::Status Unknown(grpc::ServerContext* ctx) {
    const grpc::string_ref authority = ctx->ExperimentalGetAuthority();
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        "agent_swarm: no agent for authority " +
                            std::string(authority.data(), authority.size()));
  }

  std::map<int, ServiceBase*> by_port_;
  // Fixed before the server starts; only the counts change.
  std::map<std::string_view, std::unique_ptr<std::atomic<uint64_t>>> calls_ = [] {
    std::map<std::string_view, std::unique_ptr<std::atomic<uint64_t>>> m;
    for (const char* name : {"Identify", "Attach", "Heartbeat", "Clock", "Prepare", "CacheBarrier",
                             "Abort", "Cleanup", "Detach", "Telemetry", "Start"}) {
      m[name] = std::make_unique<std::atomic<uint64_t>>(0);
    }
    return m;
  }();
};

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--agents") {
      o->agents = std::atoi(value.c_str());
    } else if (flag == "--root") {
      o->root = value;
    } else if (flag == "--addresses") {
      o->addresses = value;
    } else if (flag == "--threads") {
      o->threads = std::atoi(value.c_str());
    } else if (flag == "--telemetry") {
      o->telemetry = value == "on";
    } else if (flag == "--telemetry_interval_ms") {
      o->telemetry_interval_ms = static_cast<uint32_t>(std::atoi(value.c_str()));
    } else if (flag == "--host") {
      o->host = value;
    } else if (flag == "--tls_ca") {
      o->tls.ca_pem = value;
    } else if (flag == "--tls_cert") {
      o->tls.cert_pem = value;
    } else if (flag == "--tls_key") {
      o->tls.key_pem = value;
    } else {
      std::fprintf(stderr, "agent_swarm: unknown flag %s\n", flag.c_str());
      return false;
    }
  }
  const bool tls_given = !o->tls.ca_pem.empty() || !o->tls.cert_pem.empty() ||
                         !o->tls.key_pem.empty();
  const bool tls_whole =
      !o->tls.ca_pem.empty() && !o->tls.cert_pem.empty() && !o->tls.key_pem.empty();
  if (argc % 2 == 0 || o->agents <= 0 || o->root.empty() || o->addresses.empty() ||
      o->threads <= 0 || tls_given != tls_whole) {
    std::fprintf(stderr,
                 "usage: agent_swarm --agents N --root DIR --addresses FILE [--threads T] "
                 "[--telemetry on|off] [--telemetry_interval_ms 10000] [--host 127.0.0.1] "
                 "[--tls_ca CA --tls_cert CERT --tls_key KEY (all three)]\n");
    return false;
  }
  return true;
}

// Soft limit to the hard one; as root, the hard one up to `needed`.
void RaiseFileLimit(rlim_t needed) {
  struct rlimit rl = {};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  if (rl.rlim_max < needed) {
    struct rlimit more = {needed, needed};
    if (::setrlimit(RLIMIT_NOFILE, &more) == 0) return;
  }
  rl.rlim_cur = rl.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < needed) {
    std::fprintf(stderr,
                 "agent_swarm: warning: %llu agents need up to %llu file descriptors but "
                 "RLIMIT_NOFILE is %llu (raise it with ulimit -n, or run as root)\n",
                 static_cast<unsigned long long>((needed - 1024) / 3), static_cast<unsigned long long>(needed),
                 static_cast<unsigned long long>(rl.rlim_cur));
  }
}

int Main(int argc, char** argv) {
  // As lockstep-agent does (agent/main.cc): with thousands of agents' mutexes
  // the detector's graph was 2% of the swarm's CPU (perf, 1,024 agents).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  Options o;
  if (!ParseArgs(argc, argv, &o)) return 2;
  RaiseFileLimit(static_cast<rlim_t>(o.agents) * 3 + 1024);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::vector<std::unique_ptr<AgentCore>> cores;
  std::vector<std::unique_ptr<grpc::Service>> services;
  for (int k = 0; k < o.agents; ++k) {
    AgentOptions options;
    const std::string root = o.root + "/a" + std::to_string(k);
    std::error_code ec;
    std::filesystem::create_directories(root, ec);
    options.roots = {root};
    options.allow_drop_caches = false;
    options.telemetry = o.telemetry;
    options.telemetry_options.interval_ms = o.telemetry_interval_ms;
    auto core = AgentCore::Create(options);
    if (!core.ok()) {
      std::fprintf(stderr, "agent_swarm: agent %d: %s\n", k,
                   std::string(core.status().message()).c_str());
      return 1;
    }
    services.push_back(MakeAgentService(core->get(), AgentServiceOptions{}));
    cores.push_back(std::move(*core));
  }
  std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
  if (!o.tls.ca_pem.empty()) {
    auto tls = MakeServerCredentials(o.tls);
    if (!tls.ok()) {
      std::fprintf(stderr, "agent_swarm: %s\n", std::string(tls.status().message()).c_str());
      return 2;
    }
    creds = *std::move(tls);
  }
  Router router;
  grpc::ServerBuilder builder;
  std::vector<int> ports(o.agents, 0);
  for (int k = 0; k < o.agents; ++k) builder.AddListeningPort(o.host + ":0", creds, &ports[k]);
  builder.RegisterService(&router);
  // Polling threads shared by every agent. The synchronous handler pool is
  // gRPC's default: it grows with the calls in flight (a thread quota would
  // refuse calls with RESOURCE_EXHAUSTED instead of queueing them).
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, o.threads);
  ApplyAgentServerOptions(&builder);  // as lockstep-agent serves
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::fprintf(stderr, "agent_swarm: cannot start the gRPC server (ports, fd limit?)\n");
    return 1;
  }
  std::ofstream out(o.addresses);
  for (int k = 0; k < o.agents; ++k) {
    if (ports[k] == 0) {
      std::fprintf(stderr, "agent_swarm: agent %d got no port\n", k);
      return 1;
    }
    router.Add(ports[k], dynamic_cast<ServiceBase*>(services[k].get()));
    out << o.host << ":" << ports[k] << "\n";
  }
  out.close();
  // "listening on" as the agent prints it, for the tests' process helpers.
  std::printf("ready %d\nlistening on %s:%d\n", o.agents, o.host.c_str(), ports[0]);
  std::fflush(stdout);

  std::thread waiter([&server, signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  });
  server->Wait();
  waiter.join();
  // For tests/bench/scale.sh: the calls served (heartbeats per agent and second).
  std::fprintf(stderr, "agent_swarm calls: %s\n", router.CallsJson().c_str());
  server.reset();
  services.clear();
  cores.clear();
  return 0;
}

}  // namespace
}  // namespace lockstep

int main(int argc, char** argv) { return lockstep::Main(argc, argv); }
