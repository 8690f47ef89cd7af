// Several "hosts" on one machine with network namespaces (TestCluster's
// namespaces): a controller namespace joined by one veth pair to each
// agent's namespace (client, oss, mds). Addresses are 10.213.<i>.1/24
// (controller side) and 10.213.<i>.2/24 (agent side), set inside those
// namespaces only: the test's own network namespace gets no address, link or
// route. Agents listen on non-loopback addresses, so TLS is mandatory:
// throwaway certificates from `lockstep certs`. Namespaces are deleted in
// every case (destructors), and leftovers of dead earlier runs are removed
// first. Skipped (with the reason) when not root or `ip` is missing.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

TEST(NetnsTest, ClientOssMdsInNamespacesOverTls) {
  if (std::string why = TestCluster::NamespacesUnavailable(); !why.empty()) GTEST_SKIP() << why;
  TestCluster cluster;
  absl::Status started = cluster.Start(
      {.agents = {{.role = "client"}, {.role = "oss"}, {.role = "mds"}}, .namespaces = true});
  if (absl::StrContains(started.message(), "ermission")) {
    GTEST_SKIP() << "cannot create network namespaces here: " << started;
  }
  ASSERT_OK(started);
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

}  // namespace
}  // namespace lockstep::testing
