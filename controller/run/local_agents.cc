#include "controller/run/local_agents.h"

#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_format.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "common/tls.h"
#include "common/tls_ca.h"

namespace lockstep {

std::string SelfDirectory() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<size_t>(n));
  return path.substr(0, path.find_last_of('/'));
}

namespace {

// A CA, a controller and an agent certificate for one run of local agents,
// in dir/tls (0700, inside the 0700 temporary directory): the agents' flags
// in *argv, the controller's credentials in *credentials.
absl::Status MakeLocalTls(const std::string& dir, std::vector<std::string>* argv,
                          std::shared_ptr<grpc::ChannelCredentials>* credentials) {
  const std::string tls = dir + "/tls";
  RETURN_IF_ERROR(CreateCa(tls, "lockstep local CA", 1));
  RETURN_IF_ERROR(IssueCertificate(tls, tls + "/controller", CertRole::kController,
                                   "controller", {}, -60, 1));
  RETURN_IF_ERROR(IssueCertificate(tls, tls + "/agent", CertRole::kAgent, "local-agent",
                                   {"127.0.0.1", "localhost"}, -60, 1));
  ASSIGN_OR_RETURN(*credentials, MakeChannelCredentials(TlsFiles{
                                     tls + "/ca.pem", tls + "/controller.pem",
                                     tls + "/controller.key"}));
  argv->insert(argv->end(), {"--tls_ca", tls + "/ca.pem", "--tls_cert", tls + "/agent.pem",
                             "--tls_key", tls + "/agent.key", "--tls_allow", "controller"});
  return absl::OkStatus();
}

// The plan's directories the agents need: each absolute one made and given
// as a --root of its own (in *argv), each relative one made below `root`.
absl::Status MakePlanDirs(const LocalAgentsOptions& options, const std::string& root,
                          std::vector<std::string>* argv) {
  for (const std::string& r : options.extra_roots) {
    std::error_code ec;
    std::filesystem::create_directories(r, ec);
    if (ec) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "local agents: cannot create the plan's directory %s: %s; create it or change the "
          "plan's dir",
          r, ec.message()));
    }
    argv->insert(argv->end(), {"--root", r});
  }
  for (const std::string& rel : options.relative_dirs) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(root) / rel, ec);
    if (ec) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "local agents: cannot create the plan's directory %s below %s: %s; create it or "
          "change the plan's dir",
          rel, root, ec.message()));
    }
  }
  return absl::OkStatus();
}

// Whether an agent command line names a --root that is a system directory,
// each such root lying below one the user named (`named`).
bool NamedSystemRootsOnly(const std::vector<std::string>& argv,
                          const std::vector<std::string>& named) {
  bool any = false;
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    std::error_code ec;
    const std::string real = std::filesystem::canonical(argv[i + 1], ec).string();
    if (argv[i] != "--root" || ec || !IsSystemDirectory(real)) continue;
    const bool below_named = std::any_of(named.begin(), named.end(), [&](const std::string& n) {
      std::error_code ec2;
      const std::string r = std::filesystem::canonical(n, ec2).string();
      return !ec2 && PathIsUnder(real, r);
    });
    if (!below_named) return false;
    any = true;
  }
  return any;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LocalAgents>> LocalAgents::Start(const LocalAgentsOptions& options) {
  std::unique_ptr<LocalAgents> agents(new LocalAgents());
  std::string binary =
      options.agent_binary.empty() ? SelfDirectory() + "/lockstep-agent" : options.agent_binary;
  if (::access(binary.c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrFormat(
        "local agents: %s is not an executable; build it (cmake --build) or install lockstep-agent "
        "next to lockstep",
        binary));
  }
  char tmpl[] = "/tmp/lockstep-local-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) {
    return absl::InternalError(absl::StrFormat("mkdtemp: %s", std::strerror(errno)));
  }
  agents->log_dir_ = tmpl;
  if (options.root.empty()) {
    agents->root_ = agents->log_dir_ + "/root";
    std::filesystem::create_directory(agents->root_);
    agents->remove_root_ = true;
  } else {
    agents->root_ = options.root;
  }
  std::vector<std::string> argv = {binary, "--listen", "127.0.0.1:0", "--root", agents->root_,
                                   "--local_parent", absl::StrFormat("%d", ::getpid()),
                                   "--local_dir", agents->log_dir_};
  if (absl::Status tls = MakeLocalTls(agents->log_dir_, &argv, &agents->credentials_);
      !tls.ok()) {
    return absl::InternalError(absl::StrFormat(
        "local agents: cannot make their TLS certificates in %s: %s", agents->log_dir_,
        tls.message()));
  }
  RETURN_IF_ERROR(MakePlanDirs(options, agents->root_, &argv));
  // A system directory the user named with --root (the controller's guard,
  // CheckLocalWritePlace, asks for that): the agents may take it too; any
  // other is theirs to refuse.
  if (NamedSystemRootsOnly(argv, options.named_roots)) argv.push_back("--allow_system_roots");
  for (const std::string& program : options.allow_commands) {
    argv.insert(argv.end(), {"--allow_command", program});
  }
  if (!options.allow_commands.empty()) {
    argv.insert(argv.end(), {"--command_user", absl::StrFormat("%u", ::geteuid())});
  }
  for (int i = 0; i < options.count; ++i) {
    std::string log = absl::StrFormat("%s/agent-%d.log", agents->log_dir_, i);
    // All on this host: the first agent's telemetry lists its busiest
    // processes. Each further scan of every /proc/PID/stat would be the same
    // list again, N scans per sample in the Prepare round, each lengthening
    // the barrier round (tests/bench/README.md, section 16).
    std::vector<std::string> agent_argv = argv;
    if (i > 0) agent_argv.push_back("--telemetry_processes=false");
    ASSIGN_OR_RETURN(std::unique_ptr<ChildProcess> agent, ChildProcess::Start(agent_argv, log));
    absl::StatusOr<std::string> address =
        agent->WaitForLine("listening on ", options.start_timeout);
    if (!address.ok()) return address.status();
    agents->agents_.push_back(std::move(agent));
    agents->addresses_.push_back(*std::move(address));
  }
  // Each agent read its certificate and key when it started; nobody needs
  // them on disk any more (the controller holds its credentials).
  std::error_code ec;
  std::filesystem::remove_all(agents->log_dir_ + "/tls", ec);
  return agents;
}

LocalAgents::~LocalAgents() {
  // All told first: they shut down side by side, not one after another.
  for (const auto& agent : agents_) agent->Signal(SIGTERM);
  for (const auto& agent : agents_) agent->Stop(ChildProcess::kStopGrace);
  std::error_code ec;
  if (remove_root_) std::filesystem::remove_all(root_, ec);
  std::filesystem::remove_all(log_dir_, ec);
}

}  // namespace lockstep
