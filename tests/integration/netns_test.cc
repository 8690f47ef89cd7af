// Several "hosts" on one machine with network namespaces (TestCluster's
// namespaces): a controller namespace joined by one veth pair to each
// agent's namespace (client, oss, mds). Addresses are 10.213.<i>.1/24
// (controller side) and 10.213.<i>.2/24 (agent side), set inside those
// namespaces only: the test's own network namespace gets no address, link or
// route. Agents listen on non-loopback addresses, so TLS is mandatory:
// throwaway certificates from `lockstep certs`. Namespaces are deleted in
// every case (destructors), and leftovers of dead earlier runs are removed
// first. Skipped (with the reason) when not root or `ip` is missing.
#include <signal.h>
#include <sys/resource.h>

#include <chrono>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/files.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

TEST(NetnsTest, ClientOssMdsInNamespacesOverTls) {
  TestCluster cluster;
  START_IN_NAMESPACES_OR_SKIP(
      cluster, {.agents = {{.role = "client"}, {.role = "oss"}, {.role = "mds"}}});
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(absl::StartsWith(cluster.address(i), absl::StrCat("10.213.", i + 1, ".2:")))
        << cluster.address(i);
  }

  RunResult r = cluster.Run(cluster.WritePlan(
      cluster.Plan()
          .Set("name", "netns")
          .Set("repetitions", 1)
          .Set("cache", "all")
          .AddPhase(FilePerProcess("w", "write", "256k", "2m")
                        .Set("tasks_per_agent", 2)
                        .Set("fsync", true))
          .AddPhase(FilePerProcess("r", "read", "256k", "2m")
                        .Set("tasks_per_agent", 2)
                        .Set("verify", true))));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  v1::RunRecord rec = r.Record();
  EXPECT_EQ(rec.status(), "complete");
  ASSERT_EQ(rec.agents_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(rec.agents(i).address(), cluster.address(i));
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
      const bool is_client = a.address() == cluster.address(0);
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

// One client agent in its namespace; addresses in 10.214.0.0/16 are hosts
// that never answer (every SYN vanishes: TestCluster::DropTrafficTo), as
// hosts down behind a router or behind a firewall that drops.
class SilentHostsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    START_IN_NAMESPACES_OR_SKIP(cluster, {.agents = {{.role = "client"}}});
    ASSERT_OK(cluster.DropTrafficTo("10.214.0.0/16"));
  }

  TestCluster cluster;
};

// Agents on silent hosts: the run fails at connect, naming them as silent.
// Their TCP diagnosis (does anything listen?) is tried for all of them at
// once after the shared connect deadline: one probe's wait for the lot,
// where probing them a pool thread at a time took a second per 32 agents
// (1 s + 16 s here, against 1 s + 1 s).
TEST_F(SilentHostsTest, TheyAreDiagnosedTogether) {
  PlanBuilder plan = cluster.Plan().Set("connect_timeout_ms", 1000);
  constexpr int kSilent = 500;
  for (int i = 0; i < kSilent; ++i) {
    plan.AddAgent(absl::StrCat("10.214.", i / 250, ".", 4 + i % 250, ":7000"));
  }
  const std::string path = cluster.WritePlan(plan.AddPhase(PlanPhase("w", "write")));
  const auto t0 = std::chrono::steady_clock::now();
  RunResult r = cluster.Run(path);
  const double seconds = SecondsSince(t0);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "agent 10.214.0.4:7000 did not answer within 1s"))
      << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "TCP: Connection timed out")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "... and 480 more of the 501 agents")) << r.err;
  // The old way needs 1 s + 16 turns of 1 s; together it is 1 s + 1 s.
  EXPECT_LT(seconds, 10.0) << kSilent << " silent agents took " << seconds << " s to refuse";
  v1::RunRecord rec = r.Record();
  ASSERT_EQ(rec.agents_size(), kSilent + 1);
  EXPECT_EQ(rec.agents(0).status(), "ok") << rec.agents(0).error();
  for (int i = 1; i <= kSilent; ++i) {
    EXPECT_EQ(rec.agents(i).status(), "unreachable") << rec.agents(i).address();
    EXPECT_TRUE(absl::StrContains(rec.agents(i).error(), "TCP: Connection timed out"))
        << rec.agents(i).error();
  }

  // `lockstep agents` lists them the same way, together: it asked 64 at a
  // time, each batch waiting for its slowest (8 batches of 1 s + 1 s here).
  // It holds a connection per agent as a run does: with a soft descriptor
  // limit below the agents, it raises it (to the hard one) first.
  std::vector<std::string> addresses = {cluster.address(0)};
  for (int i = 1; i <= kSilent; ++i) addresses.push_back(rec.agents(i).address());
  std::vector<std::string> args = {"agents", "--agents", absl::StrJoin(addresses, ","),
                                   "--timeout_ms", "1000"};
  for (const std::string& c : cluster.ControllerCredentials()) args.push_back(c);
  struct rlimit fds {};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &fds), 0);
  const struct rlimit low = {std::min<rlim_t>(fds.rlim_cur, 256), fds.rlim_max};
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);  // inherited by the command
  const auto t1 = std::chrono::steady_clock::now();
  RunResult listed = cluster.Lockstep(args);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &fds), 0);
  const double listed_seconds = SecondsSince(t1);
  EXPECT_EQ(listed.exit_code, 3) << listed.Output();
  EXPECT_TRUE(absl::StrContains(listed.out, "1 of 501 agents answered")) << listed.out;
  EXPECT_TRUE(absl::StrContains(
      listed.out, "NOT ANSWERING: agent 10.214.1.253:7000 did not answer within 1s: check that "
                  "lockstep-agent runs there, listens on that port, and that TLS settings match "
                  "(--timeout_ms sets the wait); TCP: Connection timed out"))
      << listed.out;
  EXPECT_FALSE(absl::StrContains(listed.out, "Too many open files")) << listed.out;
  EXPECT_LT(listed_seconds, 10.0) << "`lockstep agents` took " << listed_seconds << " s";
}

// The TCP connections of process `pid` (its network namespace's) that are
// sending their SYN, unanswered so far: state 02 in /proc/PID/net/tcp{,6}.
int SynSent(pid_t pid) {
  int n = 0;
  for (const char* file : {"tcp", "tcp6"}) {
    const std::string text =
        ReadFileToString(absl::StrCat("/proc/", pid, "/net/", file)).value_or("");
    for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
      std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
      if (f.size() > 3 && f[3] == "02") ++n;
    }
  }
  return n;
}

// Ctrl-C while the controller waits for silent agents (a minute's
// connect_timeout_ms): it exits within a second, as interrupted, without
// probing them first.
TEST_F(SilentHostsTest, CtrlCWhileWaitingForThemExitsWithinASecond) {
  PlanBuilder plan = cluster.Plan().Set("connect_timeout_ms", 60000);
  for (int i = 0; i < 50; ++i) plan.AddAgent(absl::StrCat("10.214.0.", 4 + i, ":7000"));
  auto ctl = cluster.StartRun(cluster.WritePlan(plan.AddPhase(PlanPhase("w", "write"))),
                              {"--history=false"});
  // Its SYNs to the silent hosts are out: it is waiting for them.
  ASSERT_EVENTUALLY_WITHIN(std::chrono::seconds(15), [&] {
    EXPECT_GE(SynSent(ctl->pid()), 50) << ctl->Output();
  });
  const auto t0 = std::chrono::steady_clock::now();
  ctl->Signal(SIGINT);
  ASSERT_EQ(ctl->Wait(std::chrono::seconds(10)), 130) << ctl->Output();
  const double ms = MsSince(t0, ctl->exited_at());
  ReportMs("netns", "SIGINT while connecting to 50 silent agents: controller exit", ms);
  EXPECT_LT(ms, kSanitizerBuild ? 6000 : 1000);
  EXPECT_TRUE(absl::StrContains(ctl->err(), "interrupted while connecting")) << ctl->Output();
  EXPECT_FALSE(absl::StrContains(ctl->err(), "TCP:")) << ctl->Output();
}

}  // namespace
}  // namespace lockstep::testing
