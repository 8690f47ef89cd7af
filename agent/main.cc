// lockstep-agent: runs on every client, OSS and MDS node; does what its
// controller asks within what its operator allowed (--root, --role).
#include <arpa/inet.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/agent_core.h"
#include "agent/agent_flags.h"
#include "agent/agent_service.h"
#include "agent/port_holder.h"
#include "common/announce.h"
#include "common/build_info.h"
#include "common/files.h"
#include "common/flags.h"
#include "common/log.h"
#include "common/names.h"
#include "common/net.h"
#include "common/tls.h"
#include "common/tls_inspect.h"
#include <grpc/support/log.h>
#include <grpcpp/grpcpp.h>

namespace lockstep {
namespace {

// How long a signalled agent waits for its calls to end before it exits
// without them (a handler stuck where no cancellation reaches).
constexpr absl::Duration kShutdownBound = absl::Seconds(10);

// Parses the command line into `config`. An exit code when the process ends
// here: 0 after --help or --help-man, 2 for a bad command line.
std::optional<int> ParseCommandLine(int argc, char** argv, AgentConfig* config) {
  const CommandSpec& spec = AgentCommandSpec();
  absl::StatusOr<ParsedFlags> flags =
      ParseFlags(std::vector<std::string>(argv + 1, argv + argc), spec);
  if (!flags.ok()) {
    std::fprintf(stderr, "lockstep-agent: %s\n%s", std::string(flags.status().message()).c_str(),
                 FormatUsage(spec).c_str());
    return 2;
  }
  if (flags->help()) {
    std::fputs(FormatCommandHelp(spec).c_str(), stdout);
    return 0;
  }
  if (flags->GetBool("version")) {
    std::printf("%s\n", VersionLine("lockstep-agent").c_str());
    return 0;
  }
  if (flags->GetBool("help-man")) {
    std::fputs(FormatManPage(AgentProgram(), LOCKSTEP_VERSION).c_str(), stdout);
    return 0;
  }
  if (!flags->positional().empty()) {
    std::fprintf(stderr, "lockstep-agent: unexpected argument \"%s\" (every setting is a flag)\n%s",
                 flags->positional()[0].c_str(), FormatUsage(spec).c_str());
    return 2;
  }
  absl::StatusOr<AgentConfig> parsed = AgentConfigFromFlags(*flags);
  if (!parsed.ok()) {
    std::fprintf(stderr, "lockstep-agent: %s\n", std::string(parsed.status().message()).c_str());
    return 2;
  }
  *config = std::move(*parsed);
  return std::nullopt;
}

// The server's credentials: insecure on loopback only, else mutual TLS with
// the controllers --tls_allow names. An exit code (2) when refused.
std::optional<int> MakeCredentials(const AgentConfig& config, const std::string& listen_host,
                                   std::shared_ptr<grpc::ServerCredentials>* creds,
                                   AgentServiceOptions* service_options,
                                   std::shared_ptr<std::atomic<int>>* bound_port) {
  if (config.insecure) {
    if (!IsLoopbackHost(listen_host)) {
      std::fprintf(stderr,
                   "lockstep-agent: --insecure is allowed only on a loopback address, not %s: "
                   "anyone on the network could make this agent write files and drop caches. "
                   "Set up certificates (deploy/certs.sh) or listen on 127.0.0.1.\n",
                   config.listen.c_str());
      return 2;
    }
    if (::geteuid() == 0) {
      // Loopback keeps the network out, not the host's other users: as root
      // it answers only root's connections (agent/loopback_peer.h).
      *bound_port = std::make_shared<std::atomic<int>>(0);
      service_options->local_accounts_port = *bound_port;
      // An address literal as listened on; "localhost": 127.0.0.1 or ::1.
      in6_addr any;
      if (::inet_pton(AF_INET, listen_host.c_str(), &any) == 1 ||
          ::inet_pton(AF_INET6, listen_host.c_str(), &any) == 1) {
        service_options->local_accounts_ip = listen_host;
      }
      std::fprintf(stderr,
                   "lockstep-agent: --insecure as root: only root's connections to %s are "
                   "answered (their owner read from the kernel's socket table); other accounts "
                   "need mutual TLS (deploy/certs.sh)\n",
                   config.listen.c_str());
    }
    *creds = grpc::InsecureServerCredentials();
    return std::nullopt;
  }
  TlsFiles files{config.tls_ca, config.tls_cert, config.tls_key};
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
  *creds = *tls;
  for (const std::string& name : config.tls_allow) {
    if (name != "*") service_options->allowed_controllers.push_back(name);
  }
  service_options->require_tls_peer = true;
  return std::nullopt;
}

// SIGINT and SIGTERM, blocked in every thread (Main blocks them before any
// thread starts) and taken by Serve's waiter with sigwait.
sigset_t StopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  return signals;
}

// What --announce writes for an agent listening on `port`.
Announcement AnnouncementOf(const AgentConfig& config, const std::string& listen_host, int port) {
  Announcement a;
  a.host = LocalHostName();
  a.node = AgentNodeName(config.node);
  std::string host = config.advertise;
  if (host.empty()) {
    const bool wildcard = listen_host.empty() || listen_host == "0.0.0.0" || listen_host == "::" ||
                          listen_host == "[::]";
    host = wildcard ? a.host : listen_host;
  }
  a.address = JoinHostPort(host, port);
  a.role = config.options.role;
  a.pid = ::getpid();
  return a;
}

// gRPC's own log lines while the server binds, held back: a port that cannot
// be had is said once, in DescribeListenFailure's words, without gRPC's raw
// "Address already in use" line before it; a server that started prints
// what was held (it was about something else). gRPC 1.51 has no public way
// back to its own logger, so this one stays, printing as gRPC's does
// ("E1202 16:22:15.855377588   15742 file.cc:1045] message").
class HeldGrpcLog {
 public:
  HeldGrpcLog() {
    absl::MutexLock lock(&mu_);
    holding_ = true;
    gpr_set_log_function(&HeldGrpcLog::Log);
  }
  // Stops holding; prints the held lines when `print`.
  void Release(bool print) {
    absl::MutexLock lock(&mu_);
    holding_ = false;
    for (const std::string& line : held_) {
      if (print) std::fprintf(stderr, "%s\n", line.c_str());
    }
    held_.clear();
  }

 private:
  static void Log(gpr_log_func_args* args) {
    const char* file = std::strrchr(args->file, '/');
    std::string line = absl::StrFormat(
        "%c%s %7d %s:%d] %s", gpr_log_severity_string(args->severity)[0],
        absl::FormatTime("%m%d %H:%M:%E9S", absl::Now(), absl::LocalTimeZone()),
        static_cast<int>(::gettid()), file != nullptr ? file + 1 : args->file, args->line,
        args->message);
    absl::MutexLock lock(&mu_);
    if (holding_) {
      held_.push_back(std::move(line));
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }
  static inline absl::Mutex mu_;
  static inline bool holding_ ABSL_GUARDED_BY(mu_) = false;
  static inline std::vector<std::string> held_ ABSL_GUARDED_BY(mu_);
};

// Serves `service` on config.listen until SIGINT or SIGTERM; the port it
// listens on goes to *bound_port when given. 0, 1 when the port cannot be
// had, 2 when --announce cannot write its file. `stopping` is called at the
// signal, before the server stops.
int Serve(const AgentConfig& config, const std::pair<std::string, int>& hostport,
          const std::shared_ptr<grpc::ServerCredentials>& creds, grpc::Service* service,
          std::atomic<int>* bound_port, const std::function<void()>& stopping) {
  const sigset_t signals = StopSignals();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(config.listen, creds, &port);
  builder.RegisterService(service);
  ApplyAgentServerOptions(&builder);
  HeldGrpcLog held;
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  held.Release(/*print=*/server && port != 0);
  if (!server || port == 0) {
    std::fprintf(stderr, "lockstep-agent: %s\n",
                 DescribeListenFailure(config.listen, hostport.second).c_str());
    return 1;
  }
  if (bound_port != nullptr) bound_port->store(port);
  std::optional<Announcement> announced;
  if (!config.announce_dir.empty()) {
    Announcement a = AnnouncementOf(config, hostport.first, port);
    absl::Status s = WriteAnnouncement(config.announce_dir, a);
    if (!s.ok()) {
      std::fprintf(stderr, "lockstep-agent: --announce: %s\n", std::string(s.message()).c_str());
      server->Shutdown();
      return 2;
    }
    LogInfo("announced node %s at %s in %s", a.node, a.address, config.announce_dir);
    announced = std::move(a);
  }
  // After the announcement: whoever waits for this line finds the file too.
  std::printf("listening on %s\n", JoinHostPort(hostport.first, port).c_str());
  std::fflush(stdout);
  LogInfo("role %s, roots: %s", RoleName(config.options.role),
          absl::StrJoin(config.options.roots, ", "));

  // The main thread waits for the signal itself (a thread of its own for
  // it was one more per idle agent: tests/bench/agent_threads.sh).
  int sig = 0;
  sigwait(&signals, &sig);
  LogInfo("signal %d: shutting down", sig);
  stopping();
  // Shutdown cancels the calls still going after 2 s, but Wait also waits
  // for their handlers, and one may be stuck where no cancellation reaches
  // (a task blocked in a file system, a long delay): the agent exits anyway
  // once kShutdownBound has passed, saying so.
  absl::Notification stopped;
  std::thread bound([&] {
    if (stopped.WaitForNotificationWithTimeout(kShutdownBound)) return;
    LogError("shutdown: calls still running %s after the signal; exiting without them",
             absl::FormatDuration(kShutdownBound));
    if (announced) RemoveAnnouncement(config.announce_dir, *announced);
    std::_Exit(1);
  });
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server->Wait();
  stopped.Notify();
  bound.join();
  if (announced) RemoveAnnouncement(config.announce_dir, *announced);
  return 0;
}

// --local_dir: the controller's temporary directory, removed when this agent
// exits (its controller may have died by SIGKILL and cannot). Only a
// directory named lockstep-local-* that is no symlink and belongs to this
// user: a mistyped flag of a root agent cannot remove anything else.
void RemoveLocalDir(const std::string& dir) {
  if (dir.empty()) return;
  const std::string base = dir.substr(dir.find_last_of('/') + 1);
  struct stat st;
  if (base.rfind("lockstep-local-", 0) != 0 || ::lstat(dir.c_str(), &st) != 0 ||
      !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) {
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (ec) LogWarning("--local_dir %s: not removed: %s", dir, ec.message());
}

// --local_parent: a SIGTERM when the parent dies (Serve's waiter takes it as
// any stop), set before looking whether it is still there, so that a parent
// that died before prctl is seen too. False when it is already gone.
bool FollowParent(int parent_pid) {
  if (parent_pid <= 0) return true;
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) {
    LogWarning("prctl(PR_SET_PDEATHSIG): %s", std::strerror(errno));
  }
  return ::getppid() == parent_pid;
}

// Warns about certificates that expire soon and tells controllers when ours
// does (HostFacts.extra "tls_cert_not_after"), so that `lockstep run` and
// `lockstep agents` can warn too.
void NoteCertificateExpiry(AgentConfig* config) {
  // A --local agent's certificate is made for this one run and deleted
  // after its start: its expiry is no one's concern.
  if (config->insecure || config->local_parent_pid > 0) return;
  TlsFiles files{config->tls_ca, config->tls_cert, config->tls_key};
  for (const std::string& w : ExpiryWarnings(files, absl::Now(), kCertExpiryWarning)) {
    LogWarning("%s", w);
  }
  auto pem = ReadFileToString(config->tls_cert);
  if (!pem.ok()) return;
  auto info = InspectCertificate(*pem, config->tls_cert);
  if (!info.ok()) return;
  config->options.extra_facts["tls_cert_not_after"] = absl::FormatTime(
      "%Y-%m-%dT%H:%M:%SZ", info->not_after, absl::UTCTimeZone());
}

int Main(int argc, char** argv) {
  SetLogTag("lockstep-agent");
  // Abseil's deadlock detector (on in Debian's build of it) keeps a graph of
  // every Mutex, as in the controller (controller/run/coordinator.cc): the
  // agent's lock order is fixed by its headers, and the unit tests, which
  // keep the detector on, exercise it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // Before any thread starts, so that every thread inherits the mask: a
  // signal delivered to a thread that does not block it would end the
  // process without cleanup (announcement, the run's files).
  const sigset_t signals = StopSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  AgentConfig config;
  if (std::optional<int> exit_code = ParseCommandLine(argc, argv, &config)) return *exit_code;
  if (!FollowParent(config.local_parent_pid)) {
    RemoveLocalDir(config.local_dir);
    return 0;
  }
  auto hostport = SplitHostPort(config.listen);
  if (!hostport.ok()) {
    std::fprintf(stderr, "lockstep-agent: --listen: %s\n",
                 std::string(hostport.status().message()).c_str());
    return 2;
  }
  std::shared_ptr<grpc::ServerCredentials> creds;
  AgentServiceOptions service_options;
  std::shared_ptr<std::atomic<int>> bound_port;  // set with --insecure as root
  if (std::optional<int> exit_code =
          MakeCredentials(config, hostport->first, &creds, &service_options, &bound_port)) {
    return *exit_code;
  }
  NoteCertificateExpiry(&config);
  if (config.once) {
    // The session's cleanup is done when this runs; SIGTERM stops the server
    // through Serve's waiter as Ctrl-C would.
    config.options.on_session_end = [] {
      LogInfo("--once: the controller session ended; exiting");
      ::kill(::getpid(), SIGTERM);
    };
  }
  auto core = AgentCore::Create(config.options);
  if (!core.ok()) {
    std::fprintf(stderr, "lockstep-agent: %s\n", std::string(core.status().message()).c_str());
    return 2;
  }
  std::unique_ptr<grpc::Service> service = MakeAgentService(core->get(), service_options);
  AgentCore* const agent = core->get();
  const int exit_code = Serve(config, *hostport, creds, service.get(), bound_port.get(),
                              [agent] { agent->BeginShutdown(); });
  core->reset();
  RemoveLocalDir(config.local_dir);
  return exit_code;
}

}  // namespace
}  // namespace lockstep

int main(int argc, char** argv) { return lockstep::Main(argc, argv); }
