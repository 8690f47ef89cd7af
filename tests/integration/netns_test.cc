// Several "hosts" on one machine with network namespaces: a controller
// namespace joined by one veth pair to each agent's namespace (client, oss,
// mds). Addresses are 10.213.<i>.1/24 (controller side) and 10.213.<i>.2/24
// (agent side), set inside those namespaces only: the test's own network
// namespace gets no address, link or route. Agents listen on non-loopback
// addresses, so TLS is mandatory: throwaway certificates from
// `lockstep certs init`. Namespaces are deleted in every case (destructors),
// and leftovers of dead earlier runs are removed first.
// Skipped (with the reason) when not root or `ip` is missing.
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "controller/run/local_agents.h"
#include "gtest/gtest.h"
#include "integration/agent_process_util.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

constexpr char kPrefix[] = "lsnt";  // namespace names: lsnt<pid>c, lsnt<pid>a<i>

std::string FindIp() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

// Runs `ip ARGS...`; returns "" or an error naming the command.
std::string Ip(const std::string& ip, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {ip};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = RunCommand(argv);
  if (r.exit_code == 0) return "";
  std::string cmd = "ip";
  for (const auto& a : args) cmd += " " + a;
  return absl::StrFormat("`%s` failed (exit %d): %s%s", cmd, r.exit_code, r.out, r.err);
}

// Namespaces created by this test; deleted on destruction, whatever happened.
class Namespaces {
 public:
  explicit Namespaces(std::string ip) : ip_(std::move(ip)) {}
  ~Namespaces() {
    for (auto it = names_.rbegin(); it != names_.rend(); ++it) {
      std::string err = Ip(ip_, {"netns", "del", *it});
      if (!err.empty()) std::fprintf(stderr, "netns_test cleanup: %s\n", err.c_str());
    }
  }
  std::string Add(const std::string& name) {
    std::string err = Ip(ip_, {"netns", "add", name});
    if (!err.empty()) return err;
    names_.push_back(name);
    return Ip(ip_, {"-n", name, "link", "set", "lo", "up"});
  }

 private:
  std::string ip_;
  std::vector<std::string> names_;
};

// Removes namespaces named by an earlier run of this test whose process is gone
// (a SIGKILLed test cannot run its destructors), and kills what still runs in them.
void RemoveStaleNamespaces(const std::string& ip) {
  CommandResult r = RunCommand({ip, "netns", "list"});
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    std::string name(line.substr(0, line.find(' ')));
    absl::string_view rest = name;
    if (!absl::ConsumePrefix(&rest, kPrefix)) continue;
    size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    int pid = 0;
    if (digits == 0 || !absl::SimpleAtoi(rest.substr(0, digits), &pid)) continue;
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    // Agents it started outlived it (they do not die with their parent).
    CommandResult pids = RunCommand({ip, "netns", "pids", name});
    for (absl::string_view p : absl::StrSplit(pids.out, '\n', absl::SkipEmpty())) {
      int agent = 0;
      if (absl::SimpleAtoi(p, &agent) && agent > 1) ::kill(agent, SIGKILL);
    }
    std::fprintf(stderr, "netns_test: removing namespace %s of dead test process %d\n",
                 name.c_str(), pid);
    Ip(ip, {"netns", "del", name});
  }
}


TEST(NetnsTest, ClientOssMdsInNamespacesOverTls) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create network namespaces";
  const std::string ip = FindIp();
  if (ip.empty()) GTEST_SKIP() << "the `ip` command (iproute2) is not installed";
  RemoveStaleNamespaces(ip);

  TempDir tmp;
  const int pid = ::getpid();
  const std::string ctl = absl::StrFormat("%s%dc", kPrefix, pid);
  struct Host {
    std::string name, role, ns, addr;
  };
  std::vector<Host> hosts = {{"c1", "client", "", ""}, {"o1", "oss", "", ""}, {"m1", "mds", "", ""}};

  Namespaces namespaces(ip);  // declared before the agents: deleted after they stop
  {
    std::string err = namespaces.Add(ctl);
    if (!err.empty() && absl::StrContains(err, "ermission")) {
      GTEST_SKIP() << "cannot create network namespaces here: " << err;
    }
    ASSERT_EQ(err, "");
  }
  for (size_t i = 0; i < hosts.size(); ++i) {
    Host& h = hosts[i];
    const int net = static_cast<int>(i) + 1;
    h.ns = absl::StrFormat("%s%da%d", kPrefix, pid, net);
    h.addr = absl::StrFormat("10.213.%d.2", net);
    const std::string ctl_if = absl::StrFormat("lsv%dc%d", pid, net);
    const std::string ag_if = absl::StrFormat("lsv%da%d", pid, net);
    ASSERT_EQ(namespaces.Add(h.ns), "");
    // Both ends are created directly inside their namespaces.
    ASSERT_EQ(Ip(ip, {"link", "add", ctl_if, "netns", ctl, "type", "veth", "peer", "name", ag_if,
                      "netns", h.ns}),
              "");
    ASSERT_EQ(Ip(ip, {"-n", ctl, "addr", "add", absl::StrFormat("10.213.%d.1/24", net), "dev",
                      ctl_if}),
              "");
    ASSERT_EQ(Ip(ip, {"-n", h.ns, "addr", "add", h.addr + "/24", "dev", ag_if}), "");
    ASSERT_EQ(Ip(ip, {"-n", ctl, "link", "set", ctl_if, "up"}), "");
    ASSERT_EQ(Ip(ip, {"-n", h.ns, "link", "set", ag_if, "up"}), "");
  }

  // Throwaway certificates naming each agent's address.
  const std::string certs = tmp / "certs";
  std::vector<std::string> init = {"certs", "init", "--dir", certs};
  for (const Host& h : hosts) {
    init.push_back("--agent");
    init.push_back(h.name + "," + h.addr);
  }
  CommandResult made = RunLockstep(init);
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;

  std::vector<std::unique_ptr<ListeningProcess>> agents;  // one per namespace
  std::string tables;
  for (const Host& h : hosts) {
    const std::string root = tmp / ("root-" + h.name);
    std::filesystem::create_directories(root + "/data");
    agents.push_back(std::make_unique<ListeningProcess>(
        std::vector<std::string>{ip, "netns", "exec", h.ns, BinDir() + "/lockstep-agent",
                                 "--listen", h.addr + ":7070", "--root", root, "--role", h.role,
                                 "--tls_ca", certs + "/ca.pem", "--tls_cert",
                                 certs + "/agent-" + h.name + ".pem", "--tls_key",
                                 certs + "/agent-" + h.name + ".key"},
        tmp / ("agent-" + h.name + ".log"), absl::Seconds(15)));
    ASSERT_TRUE(agents.back()->ok()) << h.name << ": " << agents.back()->error();
    tables += absl::StrFormat("[[agent]]\naddress = \"%s:7070\"\nrole = \"%s\"\n\n", h.addr,
                              h.role);
  }

  const std::string plan = tmp / "plan.toml";
  std::ofstream(plan) << "[run]\nname = \"netns\"\nrepetitions = 1\ncache = \"all\"\n\n"
                      << tables << R"(
[[phase]]
name = "w"
kind = "write"
dir = "data"
file_per_process = true
tasks_per_agent = 2
transfer_size = "256k"
block_size = "2m"
fsync = true

[[phase]]
name = "r"
kind = "read"
dir = "data"
file_per_process = true
tasks_per_agent = 2
transfer_size = "256k"
block_size = "2m"
verify = true
)";
  CommandResult r = RunCommand({ip, "netns", "exec", ctl, BinDir() + "/lockstep", "run",
                                "--tls_dir", certs, "--out", tmp / "results", plan});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  v1::RunRecord rec = ReadRunJson(RunDirFromOutput(r.out));
  EXPECT_EQ(rec.status(), "complete");
  ASSERT_EQ(rec.agents_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(rec.agents(i).address(), hosts[i].addr + ":7070");
    EXPECT_EQ(rec.agents(i).status(), "ok") << rec.agents(i).error();
  }
  ASSERT_EQ(rec.tests_size(), 1);
  EXPECT_EQ(rec.tests(0).client_agents(), 1u);
  ASSERT_EQ(rec.tests(0).phases_size(), 2);
  for (const v1::PhaseRecord& p : rec.tests(0).phases()) {
    EXPECT_TRUE(p.ok()) << p.error();
    // Only the client runs tasks (servers may be listed, for their telemetry).
    int tasks = 0;
    bool client_seen = false;
    for (const v1::AgentPhaseRecord& a : p.agents()) {
      const bool is_client = a.address() == hosts[0].addr + ":7070";
      client_seen |= is_client;
      EXPECT_EQ(a.tasks_size(), is_client ? 2 : 0) << a.address();
      tasks += a.tasks_size();
    }
    EXPECT_TRUE(client_seen);
    EXPECT_EQ(tasks, 2);
    // cache = "all": every agent, client or server, synced and dropped its
    // caches before the phase, and reported its telemetry over the phase.
    EXPECT_EQ(p.cache(), "all");
    EXPECT_EQ(p.agents_size(), 3);
    for (const v1::AgentPhaseRecord& a : p.agents()) {
      EXPECT_TRUE(a.cache().synced()) << a.address();
      EXPECT_TRUE(a.cache().dropped()) << a.address() << ": " << a.cache().warning();
      EXPECT_GT(a.cache().sync_duration_ns(), 0) << a.address();
      EXPECT_GE(a.telemetry().samples(), 2u) << a.address();
      EXPECT_GT(a.telemetry().cpu().cores(), 0u) << a.address();
    }
    // The start skew is the spread of the tasks' first I/O, in our clock.
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const v1::AgentPhaseRecord& a : p.agents()) {
      for (const v1::TaskResult& t : a.tasks()) {
        ASSERT_GT(t.first_io_unix_ns(), 0);
        lo = std::min(lo, t.first_io_unix_ns());
        hi = std::max(hi, t.first_io_unix_ns());
      }
    }
    EXPECT_EQ(p.start_skew_ns(), hi - lo);
    EXPECT_EQ(p.row().bytes(), 4u << 20);
    EXPECT_EQ(p.row().bytes(), p.row().expected_bytes());
  }
}

}  // namespace
}  // namespace lockstep::testing
