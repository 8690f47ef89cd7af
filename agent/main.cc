// lockstep-agent: runs on every client, OSS and MDS node; does what its
// controller asks within what its operator allowed (--root, --role).
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/agent_core.h"
#include "agent/config.h"
#include "agent/agent_service.h"
#include "agent/port_holder.h"
#include "common/log.h"
#include "common/names.h"
#include "common/net.h"
#include "common/tls.h"
#include <grpcpp/grpcpp.h>

ABSL_FLAG(std::string, config, "",
          "agent configuration file (TOML, see agent/config.h); flags given explicitly override it");
ABSL_FLAG(std::string, listen, "0.0.0.0:7070", "address to listen on, HOST:PORT (PORT 0 = any)");
ABSL_FLAG(std::vector<std::string>, root, {},
          "directory below which the agent may create files; repeat or comma-separate");
ABSL_FLAG(std::string, role, "client", "client | oss | mds");
ABSL_FLAG(bool, insecure, false, "plaintext gRPC, allowed only on a loopback listen address");
ABSL_FLAG(uint32_t, default_lease_ms, 5000, "lease when a controller asks for none");
ABSL_FLAG(bool, allow_drop_caches, true, "let controllers sync and drop this host's caches");
ABSL_FLAG(bool, allow_lustre, false,
          "let controllers run lfs setstripe/getstripe and lctl set_param (checksums, lock LRU)");
ABSL_FLAG(uint32_t, telemetry_interval_ms, 1000, "telemetry sampling interval (>= 50)");
ABSL_FLAG(std::vector<std::string>, devices, {},
          "block devices to report (default: all whole disks)");
ABSL_FLAG(std::vector<std::string>, ifaces, {}, "network interfaces to report (default: all)");
ABSL_FLAG(uint32_t, test_delay_per_transfer_us, 0,
          "TESTS ONLY: make every transfer this much slower, as on a slower device");
ABSL_FLAG(std::string, tls_ca, "", "CA certificate (PEM) that controllers must chain to");
ABSL_FLAG(std::string, tls_cert, "", "this agent's certificate (PEM)");
ABSL_FLAG(std::string, tls_key, "", "this agent's private key (PEM, mode 0600)");
ABSL_FLAG(std::vector<std::string>, tls_allow, {"controller"},
          "names (certificate CN or SAN) of controllers allowed to drive this agent; \"*\" = any "
          "certificate from the CA");

namespace lockstep {
namespace {

// absl keeps only the last of repeated flags; --root may be repeated.
std::vector<std::string> TakeRoots(int* argc, char** argv) {
  std::vector<std::string> roots;
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    std::string a = argv[i];
    if ((a == "--root" || a == "-root") && i + 1 < *argc) {
      roots.push_back(argv[++i]);
    } else if (absl::StartsWith(a, "--root=") || absl::StartsWith(a, "-root=")) {
      for (auto part : absl::StrSplit(a.substr(a.find('=') + 1), ',', absl::SkipEmpty())) {
        roots.emplace_back(part);
      }
    } else {
      argv[out++] = argv[i];
    }
  }
  *argc = out;
  return roots;
}

int Main(int argc, char** argv) {
  SetLogTag("lockstep-agent");
  absl::SetProgramUsageMessage(
      "lockstep-agent --listen HOST:PORT --root DIR [--root DIR ...] [--role client|oss|mds] "
      "[--insecure]");
  std::vector<std::string> roots = TakeRoots(&argc, argv);
  // Which flags were given (this absl keeps IsSpecifiedOnCommandLine private).
  std::set<std::string> given_flags;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") break;
    if (a.size() < 2 || a[0] != '-') continue;
    a = a.substr(a[1] == '-' ? 2 : 1);
    a = a.substr(0, a.find('='));
    if (absl::StartsWith(a, "no")) given_flags.insert(a.substr(2));
    given_flags.insert(a);
  }
  absl::ParseCommandLine(argc, argv);
  for (const auto& r : absl::GetFlag(FLAGS_root)) roots.push_back(r);

  // The config file gives the defaults; flags given explicitly win.
  AgentConfig config;
  if (!absl::GetFlag(FLAGS_config).empty()) {
    auto loaded = LoadAgentConfig(absl::GetFlag(FLAGS_config));
    if (!loaded.ok()) {
      std::fprintf(stderr, "lockstep-agent: %s\n", std::string(loaded.status().message()).c_str());
      return 2;
    }
    config = *loaded;
  }
  auto given = [&](const char* name) { return given_flags.count(name) > 0; };
  const bool no_config = absl::GetFlag(FLAGS_config).empty();
  auto pick = [&](const char* name, auto flag_value, auto config_value) {
    return given(name) || no_config ? flag_value : config_value;
  };
  AgentOptions options = config.options;
  std::string role = pick("role", absl::GetFlag(FLAGS_role),
                          std::string(RoleName(config.options.role)));
  if (auto parsed = ParseRole(role)) {
    options.role = *parsed;
  } else {
    std::fprintf(stderr, "lockstep-agent: --role %s is not one of client, oss, mds\n", role.c_str());
    return 2;
  }
  options.roots = roots.empty() ? config.options.roots : roots;
  options.default_lease_ms =
      pick("default_lease_ms", absl::GetFlag(FLAGS_default_lease_ms), config.options.default_lease_ms);
  options.allow_drop_caches = pick("allow_drop_caches", absl::GetFlag(FLAGS_allow_drop_caches),
                                   config.options.allow_drop_caches);
  options.allow_lustre =
      pick("allow_lustre", absl::GetFlag(FLAGS_allow_lustre), config.options.allow_lustre);
  options.runner.test_delay_per_transfer_ns =
      int64_t{absl::GetFlag(FLAGS_test_delay_per_transfer_us)} * 1000;
  options.telemetry_options.interval_ms =
      pick("telemetry_interval_ms", absl::GetFlag(FLAGS_telemetry_interval_ms),
           config.options.telemetry_options.interval_ms);
  options.telemetry_options.devices =
      pick("devices", absl::GetFlag(FLAGS_devices), config.options.telemetry_options.devices);
  options.telemetry_options.ifaces =
      pick("ifaces", absl::GetFlag(FLAGS_ifaces), config.options.telemetry_options.ifaces);
  const bool insecure = pick("insecure", absl::GetFlag(FLAGS_insecure), config.insecure);
  const std::string tls_ca = pick("tls_ca", absl::GetFlag(FLAGS_tls_ca), config.tls_ca);
  const std::string tls_cert = pick("tls_cert", absl::GetFlag(FLAGS_tls_cert), config.tls_cert);
  const std::string tls_key = pick("tls_key", absl::GetFlag(FLAGS_tls_key), config.tls_key);
  const std::vector<std::string> tls_allow =
      pick("tls_allow", absl::GetFlag(FLAGS_tls_allow), config.tls_allow);

  const std::string listen = pick("listen", absl::GetFlag(FLAGS_listen), config.listen);
  auto hostport = SplitHostPort(listen);
  if (!hostport.ok()) {
    std::fprintf(stderr, "lockstep-agent: --listen: %s\n",
                 std::string(hostport.status().message()).c_str());
    return 2;
  }
  std::shared_ptr<grpc::ServerCredentials> creds;
  AgentServiceOptions service_options;
  if (insecure) {
    if (!IsLoopbackHost(hostport->first)) {
      std::fprintf(stderr,
                   "lockstep-agent: --insecure is allowed only on a loopback address, not %s: "
                   "anyone on the network could make this agent write files and drop caches. "
                   "Set up certificates (deploy/certs.sh) or listen on 127.0.0.1.\n",
                   listen.c_str());
      return 2;
    }
    creds = grpc::InsecureServerCredentials();
  } else {
    TlsFiles files{tls_ca, tls_cert, tls_key};
    if (files.ca_pem.empty() || files.cert_pem.empty() || files.key_pem.empty()) {
      std::fprintf(stderr,
                   "lockstep-agent: no TLS material: give --tls_ca, --tls_cert and --tls_key "
                   "(make them with deploy/certs.sh init --dir DIR --agent NAME,HOST,IP), or "
                   "--insecure with a loopback --listen address\n");
      return 2;
    }
    auto tls = MakeServerCredentials(files);
    if (!tls.ok()) {
      std::fprintf(stderr, "lockstep-agent: %s\n", std::string(tls.status().message()).c_str());
      return 2;
    }
    creds = *tls;
    for (const std::string& name : tls_allow) {
      if (name != "*") service_options.allowed_controllers.push_back(name);
    }
    service_options.require_tls_peer = true;
  }

  auto core = AgentCore::Create(options);
  if (!core.ok()) {
    std::fprintf(stderr, "lockstep-agent: %s\n", std::string(core.status().message()).c_str());
    return 2;
  }
  std::unique_ptr<grpc::Service> service = MakeAgentService(core->get(), service_options);

  // Signals go to one thread that shuts the server down.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, creds, &port);
  builder.RegisterService(service.get());
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.SetMaxSendMessageSize(64 << 20);
  // Let controllers keep the connection alive with pings (conventions.md).
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // gRPC sets SO_REUSEPORT by default: a second agent on a taken port would
  // start and take half of its connections. One agent per port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    std::fprintf(stderr, "lockstep-agent: %s\n",
                 DescribeListenFailure(listen, hostport->second).c_str());
    return 1;
  }
  std::printf("listening on %s\n", JoinHostPort(hostport->first, port).c_str());
  std::fflush(stdout);
  LogInfo("role %s, roots: %s", role, absl::StrJoin(options.roots, ", "));

  std::thread waiter([&server, signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    LogInfo("signal %d: shutting down", sig);
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  });
  server->Wait();
  waiter.join();
  core->reset();
  return 0;
}

}  // namespace
}  // namespace lockstep

int main(int argc, char** argv) { return lockstep::Main(argc, argv); }
