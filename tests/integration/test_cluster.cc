#include "integration/test_cluster.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/files.h"

namespace lockstep::testing {

// ---- RunResult, ControllerProcess ------------------------------------------------

namespace {

RunResult ToRunResult(CommandResult c) {
  RunResult r;
  static_cast<CommandResult&>(r) = std::move(c);
  r.run_dir = RunDirFromOutput(r.out);
  return r;
}

}  // namespace

std::string RunResult::Output() const {
  return absl::StrFormat("exit %d%s\nstdout:\n%s\nstderr:\n%s", exit_code,
                         timed_out ? " (killed at its timeout)" : "", out, err);
}

ControllerProcess::ControllerProcess(const std::vector<std::string>& argv, std::string out_path,
                                     std::string err_path)
    : out_path_(std::move(out_path)), err_path_(std::move(err_path)) {
  pid_ = ::fork();
  if (pid_ == 0) {
    FILE* o = std::freopen(out_path_.c_str(), "w", stdout);
    FILE* e = std::freopen(err_path_.c_str(), "w", stderr);
    (void)o;
    (void)e;
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    ::execv(a[0], a.data());
    ::_exit(127);
  }
  reaper_ = std::thread([this] {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    absl::MutexLock lock(&mu_);
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    exited_at_ = std::chrono::steady_clock::now();
    exited_.Notify();
  });
}

ControllerProcess::~ControllerProcess() {
  if (!exited_.HasBeenNotified()) ::kill(pid_, SIGKILL);
  reaper_.join();
}

int ControllerProcess::Wait(std::chrono::milliseconds timeout) {
  if (!exited_.WaitForNotificationWithTimeout(absl::FromChrono(timeout))) return -1;
  absl::MutexLock lock(&mu_);
  return exit_code_;
}

std::chrono::steady_clock::time_point ControllerProcess::exited_at() {
  absl::MutexLock lock(&mu_);
  return exited_at_;
}

void ControllerProcess::Signal(int sig) { ::kill(pid_, sig); }

std::string ControllerProcess::out() const { return ReadFileToString(out_path_).value_or(""); }
std::string ControllerProcess::err() const { return ReadFileToString(err_path_).value_or(""); }

RunResult ControllerProcess::Result() {
  CommandResult c;
  c.exit_code = Wait(std::chrono::milliseconds(0));
  c.out = out();
  c.err = err();
  return ToRunResult(std::move(c));
}

// ---- the network of a namespaced cluster -------------------------------------

namespace {

constexpr char kNamespacePrefix[] = "lsnt";  // lsnt<pid>c, lsnt<pid>a<n>
constexpr char kLoopback[] = "127.0.0.1";

std::string FindIp() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

// Runs `ip ARGS...`; OK, or an error naming the command and what it said.
absl::Status Ip(const std::string& ip, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {ip};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = RunCommand(argv);
  if (r.exit_code == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrFormat("`ip %s` failed (exit %d): %s%s",
                                             absl::StrJoin(args, " "), r.exit_code, r.out, r.err));
}

// Removes the namespaces of an earlier test process that is gone (a
// SIGKILLed test runs no destructor), killing what still runs in them.
void RemoveStaleNamespaces(const std::string& ip) {
  CommandResult r = RunCommand({ip, "netns", "list"});
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    std::string name(line.substr(0, line.find(' ')));
    absl::string_view rest = name;
    if (!absl::ConsumePrefix(&rest, kNamespacePrefix)) continue;
    size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    int pid = 0;
    if (digits == 0 || !absl::SimpleAtoi(rest.substr(0, digits), &pid)) continue;
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    CommandResult pids = RunCommand({ip, "netns", "pids", name});
    for (absl::string_view p : absl::StrSplit(pids.out, '\n', absl::SkipEmpty())) {
      int agent = 0;
      if (absl::SimpleAtoi(p, &agent) && agent > 1) ::kill(agent, SIGKILL);
    }
    std::fprintf(stderr, "TestCluster: removing namespace %s of dead test process %d\n",
                 name.c_str(), pid);
    (void)Ip(ip, {"netns", "del", name});
  }
}

}  // namespace

// A controller namespace and one namespace per agent, each agent's joined to
// the controller's by a veth pair created directly inside the two.
class TestCluster::Network {
 public:
  Network() : ip_(FindIp()), controller_(Name("c", 0)) {}
  ~Network() {
    for (auto it = names_.rbegin(); it != names_.rend(); ++it) {
      absl::Status s = Ip(ip_, {"netns", "del", *it});
      if (!s.ok()) std::fprintf(stderr, "TestCluster cleanup: %s\n", s.ToString().c_str());
    }
  }

  // The controller's namespace also routes between the agents' (as the
  // switch of a data network does): a net phase's streams go agent to agent.
  absl::Status Init() {
    RemoveStaleNamespaces(ip_);
    if (absl::Status s = Add(controller_); !s.ok()) return s;
    return Ip(ip_, {"netns", "exec", controller_, "sysctl", "-qw", "net.ipv4.ip_forward=1"});
  }

  // Agent i's namespace, with 10.213.<i+1>.2 on its end of the link.
  absl::StatusOr<std::string> AddAgent(int i, std::string* host) {
    const int net = i + 1;
    if (net > 254) return absl::OutOfRangeError("at most 254 namespaced agents");
    const std::string ns = Name("a", net);
    *host = absl::StrFormat("10.213.%d.2", net);
    std::vector<std::vector<std::string>> steps = {
        {"link", "add", Link("c", net), "netns", controller_, "type", "veth", "peer", "name",
         Link("a", net), "netns", ns},
        {"-n", controller_, "addr", "add", absl::StrFormat("10.213.%d.1/24", net), "dev",
         Link("c", net)},
        {"-n", ns, "addr", "add", *host + "/24", "dev", Link("a", net)},
        {"-n", controller_, "link", "set", Link("c", net), "up"},
        {"-n", ns, "link", "set", Link("a", net), "up"},
        {"-n", ns, "route", "add", "10.213.0.0/16", "via", absl::StrFormat("10.213.%d.1", net)}};
    if (absl::Status s = Add(ns); !s.ok()) return s;
    for (const auto& step : steps) {
      if (absl::Status s = Ip(ip_, step); !s.ok()) return s;
    }
    return ns;
  }

  absl::Status SetLink(int i, bool up) {
    return Ip(ip_, {"-n", controller_, "link", "set", Link("c", i + 1), up ? "up" : "down"});
  }

  // A veth pair whose far end stays down drops all it is given and answers
  // nothing; without ARP on the near end not even a neighbour lookup fails.
  // (A dummy link would do, but not every kernel has the module.)
  absl::Status DropTrafficTo(const std::string& prefix) {
    const std::string link = Link("d", 0);
    for (const std::vector<std::string>& step :
         {std::vector<std::string>{"-n", controller_, "link", "add", link, "type", "veth", "peer",
                                   "name", Link("e", 0)},
          {"-n", controller_, "link", "set", link, "arp", "off", "up"},
          {"-n", controller_, "route", "add", prefix, "dev", link}}) {
      if (absl::Status s = Ip(ip_, step); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  std::vector<std::string> Exec(const std::string& ns) const { return {ip_, "netns", "exec", ns}; }
  const std::string& controller() const { return controller_; }

 private:
  static std::string Name(const char* kind, int n) {
    return absl::StrFormat("%s%d%s%s", kNamespacePrefix, ::getpid(), kind,
                           n > 0 ? std::to_string(n) : "");
  }
  static std::string Link(const char* side, int net) {  // at most 15 characters
    return absl::StrFormat("lsv%d%s%d", ::getpid(), side, net);
  }
  absl::Status Add(const std::string& name) {
    if (absl::Status s = Ip(ip_, {"netns", "add", name}); !s.ok()) return s;
    names_.push_back(name);
    return Ip(ip_, {"-n", name, "link", "set", "lo", "up"});
  }

  std::string ip_;
  std::string controller_;
  std::vector<std::string> names_;
};

// ---- agents ---------------------------------------------------------------------

struct TestCluster::Agent {
  AgentSpec spec;
  std::string root;
  std::string host;     // where it listens: 127.0.0.1 or its namespace's address
  std::string ns;       // its namespace, or ""
  std::string address;  // HOST:PORT of the last process that started
  int generation = 0;
  std::unique_ptr<ListeningProcess> process;
};

TestCluster::TestCluster() = default;

TestCluster::~TestCluster() {
  if (::testing::Test::HasFailure()) PrintLogTails();
  agents_.clear();    // stops the agents...
  network_.reset();   // ...before their namespaces go
}

std::string TestCluster::NamespacesUnavailable() {
  if (::geteuid() != 0) return "needs root to create network namespaces";
  if (FindIp().empty()) return "the `ip` command (iproute2) is not installed";
  return "";
}

absl::Status TestCluster::Start(ClusterOptions options) {
  if (started_) return absl::FailedPreconditionError("TestCluster::Start called twice");
  started_ = true;
  options_ = std::move(options);
  options_.tls |= options_.namespaces;
  if (options_.namespaces) {
    if (std::string why = NamespacesUnavailable(); !why.empty()) {
      return absl::FailedPreconditionError(why);
    }
    network_ = std::make_unique<Network>();
    if (absl::Status s = network_->Init(); !s.ok()) return s;
  }
  if (options_.tls) {
    CommandResult r =
        RunLockstep({"certs", "init", "--dir", pki_dir(), "--controller", "controller"});
    if (r.exit_code != 0) return absl::InternalError("lockstep certs init: " + r.err);
  }
  const std::vector<AgentSpec> specs = options_.agents;
  for (const AgentSpec& spec : specs) {
    if (absl::Status s = AddAgent(spec); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status TestCluster::AddAgent(const AgentSpec& spec) {
  const int i = size();
  auto a = std::make_unique<Agent>();
  a->spec = spec;
  a->root = tmp_ / absl::StrFormat("agent%d", i);
  for (const std::string& d : options_.dirs) std::filesystem::create_directories(a->root + "/" + d);
  a->host = kLoopback;
  if (network_ != nullptr) {
    absl::StatusOr<std::string> ns = network_->AddAgent(i, &a->host);
    if (!ns.ok()) return ns.status();
    a->ns = *ns;
  }
  if (options_.tls) {
    CommandResult r = RunLockstep({"certs", "issue", "--dir", pki_dir(), "--agent",
                               absl::StrFormat("agent%d,%s", i, a->host)});
    if (r.exit_code != 0) return absl::InternalError("lockstep certs issue: " + r.err);
  }
  a->address = a->host + ":0";
  agents_.push_back(std::move(a));
  return StartAgent(i);
}

absl::Status TestCluster::StartAgent(int i) {
  Agent& a = agent(i);
  std::vector<std::string> argv;
  if (!a.ns.empty()) argv = network_->Exec(a.ns);
  argv.insert(argv.end(), {BinDir() + "/lockstep-agent", "--listen", a.address, "--root", a.root});
  if (!a.spec.role.empty()) argv.insert(argv.end(), {"--role", a.spec.role});
  if (options_.tls) {
    const std::string cert = pki_dir() + absl::StrFormat("/agent-agent%d", i);
    argv.insert(argv.end(), {"--tls_ca", pki_dir() + "/ca.pem", "--tls_cert", cert + ".pem",
                             "--tls_key", cert + ".key"});
  } else {
    argv.push_back("--insecure");
  }
  // Its session ledger in the cluster's root, not in /var/lib (agent/session_ledger.h).
  argv.insert(argv.end(), {"--state_dir", tmp_ / absl::StrFormat("agent%d-state", i)});
  argv.insert(argv.end(), a.spec.flags.begin(), a.spec.flags.end());
  const std::string log = tmp_ / absl::StrFormat("agent%d-%d.log", i, a.generation++);
  a.process = std::make_unique<ListeningProcess>(argv, log, absl::Seconds(15));
  if (!a.process->ok()) {
    return absl::UnavailableError(absl::StrFormat("agent %d: %s", i, a.process->error()));
  }
  a.address = a.process->address();
  return absl::OkStatus();
}

const TestCluster::Agent& TestCluster::agent(int i) const {
  if (i < 0 || i >= size()) {
    ADD_FAILURE() << "TestCluster: no agent " << i << " (" << size() << " agents)";
    std::abort();  // an index out of range is a bug in the test itself
  }
  return *agents_[static_cast<size_t>(i)];
}

TestCluster::Agent& TestCluster::agent(int i) {
  return const_cast<Agent&>(static_cast<const TestCluster*>(this)->agent(i));
}

const std::string& TestCluster::address(int i) const { return agent(i).address; }
const std::string& TestCluster::root(int i) const { return agent(i).root; }
const std::string& TestCluster::role(int i) const { return agent(i).spec.role; }
int TestCluster::pid(int i) const { return agent(i).process ? agent(i).process->pid() : -1; }
const std::string& TestCluster::log_path(int i) const { return agent(i).process->log_path(); }

std::string TestCluster::dir(int i, const std::string& rel) const { return root(i) + "/" + rel; }

std::vector<std::string> TestCluster::Files(int i, const std::string& rel) const {
  return ListFiles(dir(i, rel));
}

uint64_t TestCluster::FileBytes(int i, const std::string& rel) const {
  uint64_t bytes = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir(i, rel), ec)) {
    if (e.is_regular_file(ec)) bytes += e.file_size(ec);
  }
  return bytes;
}

void TestCluster::Kill(int i) { agent(i).process->Kill(SIGKILL); }
void TestCluster::Stop(int i) { agent(i).process->Kill(SIGSTOP); }
void TestCluster::Continue(int i) { agent(i).process->Kill(SIGCONT); }

absl::Status TestCluster::Restart(int i, Port port) {
  Agent& a = agent(i);
  a.process.reset();  // stops the old process if it still runs
  if (port == Port::kNew) a.address = a.host + ":0";
  return StartAgent(i);
}

absl::Status TestCluster::CutLink(int i) {
  if (network_ == nullptr) return absl::FailedPreconditionError("CutLink needs namespaces");
  (void)agent(i);
  return network_->SetLink(i, false);
}

std::string TestCluster::MakeDir(const std::string& name) const {
  const std::string dir = tmp_ / name;
  std::filesystem::create_directories(dir);
  return dir;
}

absl::Status TestCluster::DropTrafficTo(const std::string& prefix) {
  if (network_ == nullptr) return absl::FailedPreconditionError("DropTrafficTo needs namespaces");
  return network_->DropTrafficTo(prefix);
}

absl::Status TestCluster::RestoreLink(int i) {
  if (network_ == nullptr) return absl::FailedPreconditionError("RestoreLink needs namespaces");
  (void)agent(i);
  return network_->SetLink(i, true);
}

std::string TestCluster::AgentState(int i) const {
  TlsFiles tls;
  if (options_.tls) {
    tls = {pki_dir() + "/ca.pem", pki_dir() + "/controller.pem", pki_dir() + "/controller.key"};
  }
  return ProbeAgent(address(i), tls,
                    network_ ? network_->Exec(network_->controller()) : std::vector<std::string>{});
}

void TestCluster::PrintLogTails() const {
  constexpr size_t kLines = 20;
  for (int i = 0; i < size(); ++i) {
    if (!agent(i).process) continue;
    std::string log = ReadFileToString(log_path(i)).value_or("");
    std::vector<std::string> lines = absl::StrSplit(log, '\n', absl::SkipEmpty());
    if (lines.size() > kLines) lines.erase(lines.begin(), lines.end() - kLines);
    std::fprintf(stderr, "[cluster] agent %d (%s) %s, last %zu lines:\n%s\n", i,
                 address(i).c_str(), log_path(i).c_str(), lines.size(),
                 absl::StrJoin(lines, "\n").c_str());
  }
}

// ---- plans and the controller ---------------------------------------------------

PlanBuilder TestCluster::Plan() const {
  std::vector<int> all;
  for (int i = 0; i < size(); ++i) all.push_back(i);
  return Plan(all);
}

PlanBuilder TestCluster::Plan(const std::vector<int>& which) const {
  PlanBuilder b;
  for (int i : which) b.AddAgent(address(i), role(i));
  return b;
}

std::string TestCluster::WritePlan(const PlanBuilder& plan) { return WritePlan(plan.Toml()); }

std::string TestCluster::WritePlan(const std::string& toml) {
  const std::string path = tmp_ / absl::StrFormat("plan%d.toml", plans_++);
  if (absl::Status s = WriteFileAtomically(path, toml); !s.ok()) ADD_FAILURE() << s;
  return path;
}

std::vector<std::string> TestCluster::ControllerCredentials() const {
  if (options_.tls) return {"--tls_dir", pki_dir()};
  return {"--insecure"};
}

std::vector<std::string> TestCluster::InController(std::vector<std::string> argv) const {
  if (network_ == nullptr) return argv;
  std::vector<std::string> full = network_->Exec(network_->controller());
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

std::vector<std::string> TestCluster::RunArgs(const std::string& plan,
                                              const std::vector<std::string>& flags) const {
  std::vector<std::string> args = {"run"};
  for (const std::string& c : ControllerCredentials()) args.push_back(c);
  args.insert(args.end(), {"--out", results_dir()});
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back(plan);
  return args;
}

RunResult TestCluster::Lockstep(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {BinDir() + "/lockstep"};
  argv.insert(argv.end(), args.begin(), args.end());
  return ToRunResult(RunCommand(InController(argv)));
}

RunResult TestCluster::Run(const std::string& plan, const std::vector<std::string>& flags) const {
  return Lockstep(RunArgs(plan, flags));
}

std::unique_ptr<ControllerProcess> TestCluster::StartLockstep(
    const std::vector<std::string>& args) {
  std::vector<std::string> argv = {BinDir() + "/lockstep"};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string name = tmp_ / absl::StrFormat("controller%d", controllers_++);
  return std::make_unique<ControllerProcess>(InController(argv), name + ".out", name + ".err");
}

std::unique_ptr<ControllerProcess> TestCluster::StartRun(const std::string& plan,
                                                         const std::vector<std::string>& flags) {
  return StartLockstep(RunArgs(plan, flags));
}

std::string ProbeAgent(const std::string& address, const TlsFiles& tls,
                       const std::vector<std::string>& prefix) {
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(), {ToolsDir() + "/agent_probe", address});
  if (!tls.ca_pem.empty()) argv.insert(argv.end(), {"--tls_ca", tls.ca_pem});
  if (!tls.cert_pem.empty()) {
    argv.insert(argv.end(), {"--tls_cert", tls.cert_pem, "--tls_key", tls.key_pem});
  }
  CommandResult r = RunCommand(argv, std::chrono::seconds(20));
  if (r.exit_code != 0) {
    return absl::StrFormat("agent_probe failed (exit %d): %s", r.exit_code, r.err);
  }
  return std::string(absl::StripTrailingAsciiWhitespace(r.out));
}

}  // namespace lockstep::testing
