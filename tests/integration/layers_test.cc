// End to end through real agent processes on loopback (issue 42): the net
// kind's streams between client and server agents (bytes counted on both
// ends equal, round trips timed, a peer that dies mid-phase named), the
// backend kind on a server agent's directory (written and read with
// O_DIRECT, the scratch files gone after), the layers table of a plan with
// all three layers, and the refusals before the run.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/files.h"
#include "assert_eventually.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using std::chrono::milliseconds;

PlanPhase NetPhase(int duration_seconds = 1) {
  return PlanPhase("net", "net")
      .Set("streams", 2)
      .Set("message_size", "256k")
      .Set("duration_seconds", duration_seconds)
      .Set("ping_count", 20);
}

// Whether process `pid` holds an established IPv6 TCP socket on a port other
// than its control channel's: the net phase's streams arrive on its
// dual-stack listener (IPv4-mapped).
bool HoldsAStream(int pid, int control_port) {
  std::set<std::string> inodes;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(absl::StrFormat("/proc/%d/fd", pid), ec)) {
    const std::string target = fs::read_symlink(e.path(), ec).string();
    if (absl::StartsWith(target, "socket:[")) inodes.insert(target.substr(8, target.size() - 9));
  }
  const std::string table = ReadFileToString("/proc/net/tcp6").value_or("");
  for (absl::string_view line : absl::StrSplit(table, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() <= 9 || f[3] != "01" || !inodes.count(std::string(f[9]))) continue;
    const size_t colon = f[1].rfind(':');
    unsigned port = 0;
    if (colon != absl::string_view::npos && absl::SimpleHexAtoi(f[1].substr(colon + 1), &port) &&
        static_cast<int>(port) != control_port) {
      return true;
    }
  }
  return false;
}

uint64_t SumBytes(const v1::PhaseRecord& p, bool receivers) {
  uint64_t bytes = 0;
  for (const v1::AgentPhaseRecord& a : p.agents()) {
    for (const v1::TaskResult& t : a.tasks()) {
      if (t.net().receiver() == receivers) bytes += t.bytes();
    }
  }
  return bytes;
}

// The net plan (NetPhase) run on `cluster`, which must end well with its
// phase ok: the run's output and record.
void RunNetPlan(TestCluster& cluster, RunResult* r, v1::RunRecord* rec) {
  *r = cluster.Run(cluster.WritePlan(cluster.Plan().AddPhase(NetPhase())), {"--history=false"});
  ASSERT_EQ(r->exit_code, 0) << r->Output();
  *rec = r->Record();
  ASSERT_EQ(rec->tests_size(), 1) << r->Output();
  ASSERT_GT(rec->tests(0).phases_size(), 0) << r->Output();
  ASSERT_TRUE(rec->tests(0).phases(0).ok()) << rec->tests(0).phases(0).error();
}

TEST(Layers, NetStreamsFromEveryClientToEveryServerCountTheSameBytesOnBothEnds) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start({.agents = {{.role = "client"}, {.role = "client"}, {.role = "oss"}}}));
  RunResult r;
  v1::RunRecord rec;
  ASSERT_NO_FATAL_FAILURE(RunNetPlan(cluster, &r, &rec));
  const v1::PhaseRecord& p = rec.tests(0).phases(0);
  ASSERT_EQ(p.agents_size(), 3);  // the server runs the phase too: no second record of it
  int senders = 0, receivers = 0;
  for (const v1::AgentPhaseRecord& a : p.agents()) {
    for (const v1::TaskResult& t : a.tasks()) {
      EXPECT_TRUE(t.error().empty()) << t.error();
      EXPECT_GT(t.bytes(), 0u);
      if (t.net().receiver()) {
        ++receivers;
        EXPECT_EQ(a.role(), v1::OSS);
        continue;
      }
      ++senders;
      EXPECT_EQ(a.role(), v1::CLIENT);
      EXPECT_EQ(t.net().peer(), cluster.address(2));
      EXPECT_EQ(t.net().peer_counted_bytes(), t.bytes());
      EXPECT_EQ(t.net().pings(), 20u);
    }
  }
  EXPECT_EQ(senders, 4);    // 2 clients x 1 server x 2 streams
  EXPECT_EQ(receivers, 4);  // the server takes each
  EXPECT_EQ(SumBytes(p, false), SumBytes(p, true));
  EXPECT_EQ(p.row().access(), "net");
  EXPECT_EQ(p.row().bytes(), SumBytes(p, false));
  EXPECT_GT(p.row().bw_mib(), 0.0);
  EXPECT_GE(p.row().wrrd_s(), 0.9);  // each stream sent for its second
  EXPECT_EQ(p.latency().ops(), 4u * 20);
  // The token never reaches the record.
  EXPECT_TRUE(p.spec().net().token().empty());
  for (const v1::PhaseSpec& s : rec.tests(0).plan_specs()) EXPECT_TRUE(s.net().token().empty());
  EXPECT_THAT(r.out, HasSubstr("# net: "));
  EXPECT_THAT(r.out, HasSubstr("round trips (80)"));
}

// Each agent in its own network namespace, the controller's routing
// between them: the streams cross veth links, as a data network.
TEST(Layers, NetAcrossNetworkNamespaces) {
  TestCluster cluster;
  START_IN_NAMESPACES_OR_SKIP(
      cluster, {.agents = {{.role = "client"}, {.role = "client"}, {.role = "oss"}}});
  RunResult r;
  v1::RunRecord rec;
  ASSERT_NO_FATAL_FAILURE(RunNetPlan(cluster, &r, &rec));
  const v1::PhaseRecord& p = rec.tests(0).phases(0);
  int receivers = 0;
  for (const v1::AgentPhaseRecord& a : p.agents()) {
    for (const v1::TaskResult& t : a.tasks()) {
      if (!t.net().receiver()) {
        EXPECT_EQ(t.net().peer(), cluster.address(2));
        EXPECT_EQ(t.net().peer_counted_bytes(), t.bytes());
        continue;
      }
      ++receivers;
      // The stream came from a client's own address, over the links.
      EXPECT_TRUE(absl::StartsWith(t.net().peer(), "10.213.1.2:") ||
                  absl::StartsWith(t.net().peer(), "10.213.2.2:"))
          << t.net().peer();
    }
  }
  EXPECT_EQ(receivers, 4);
  EXPECT_EQ(SumBytes(p, false), SumBytes(p, true));
  EXPECT_GT(SumBytes(p, false), 0u);
}

TEST(Layers, NetWithoutServersIsARingOfClients) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start(3));
  RunResult r;
  v1::RunRecord rec;
  ASSERT_NO_FATAL_FAILURE(RunNetPlan(cluster, &r, &rec));
  const v1::PhaseRecord& p = rec.tests(0).phases(0);
  ASSERT_EQ(p.agents_size(), 3);
  for (int i = 0; i < 3; ++i) {
    const v1::AgentPhaseRecord& a = p.agents(i);
    ASSERT_EQ(a.tasks_size(), 4);  // 2 streams out, 2 in
    EXPECT_EQ(a.tasks(0).net().peer(), cluster.address((i + 1) % 3));
  }
  EXPECT_EQ(SumBytes(p, false), SumBytes(p, true));
}

TEST(Layers, AReceivingAgentThatDiesMidPhaseIsNamed) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start({.agents = {{.role = "client"}, {.role = "oss"}}}));
  const int port = std::stoi(cluster.address(1).substr(cluster.address(1).rfind(':') + 1));
  auto ctl = cluster.StartRun(
      cluster.WritePlan(cluster.Plan().Set("lease_ms", 3000).AddPhase(NetPhase(20))),
      {"--history=false"});
  ASSERT_EVENTUALLY_WITHIN(milliseconds(15000),
                           [&] { ASSERT_TRUE(HoldsAStream(cluster.pid(1), port)) << ctl->Output(); });
  cluster.Kill(1);
  const int code = ctl->Wait(milliseconds(30000));
  EXPECT_TRUE(code == 4 || code == 5) << code << "\n" << ctl->Output();
  EXPECT_THAT(ctl->Output(), HasSubstr(cluster.address(1)));
}

TEST(Layers, BackendWritesAndReadsOnTheServersAndTheTableSetsEachLayerBesideEndToEnd) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start({.agents = {{.role = "client"}, {.role = "oss"}, {.role = "oss"}}}));
  PlanBuilder plan = cluster.Plan();
  plan.Set("repetitions", 2)
      .AddPhase(NetPhase())
      .AddPhase(PlanPhase("back", "backend")
                    .Set("dir", "data")  // below each server agent's first root
                    .Set("tasks_per_agent", 2)
                    .Set("size", "8m")
                    .Set("transfer_size", "1m"))
      .AddPhase(PlanPhase("w", "write").Set("dir", cluster.dir(0)).Set("block_size", "8m")
                    .Set("transfer_size", "1m").Set("keep", true))
      .AddPhase(PlanPhase("r", "read").Set("dir", cluster.dir(0)).Set("block_size", "8m")
                    .Set("transfer_size", "1m"));
  RunResult r = cluster.Run(cluster.WritePlan(plan), {"--history=false"});
  ASSERT_EQ(r.exit_code, 0) << r.Output();
  const v1::RunRecord rec = r.Record();
  const v1::TestRecord& test = rec.tests(0);
  const v1::PhaseRecord* back = nullptr;
  for (const v1::PhaseRecord& p : test.phases()) {
    if (p.phase() == "back" && back == nullptr) back = &p;
  }
  ASSERT_NE(back, nullptr);
  ASSERT_EQ(back->agents_size(), 2);  // the servers alone, ranks 0-1 and 2-3
  EXPECT_EQ(back->agents(0).address(), cluster.address(1));
  EXPECT_EQ(back->agents(1).address(), cluster.address(2));
  EXPECT_EQ(back->agents(1).tasks(0).rank(), 2u);
  EXPECT_EQ(back->row().access(), "backend_write");
  EXPECT_EQ(back->row().bytes(), 4u * 8 << 20);
  ASSERT_EQ(back->extra_rows_size(), 1);
  EXPECT_EQ(back->extra_rows(0).access(), "backend_read");
  EXPECT_EQ(back->extra_rows(0).bytes(), 4u * 8 << 20);
  for (const v1::AgentPhaseRecord& a : back->agents()) {
    for (const v1::TaskResult& t : a.tasks()) {
      EXPECT_EQ(t.backend().method(), "file");
      EXPECT_FALSE(fs::exists(t.backend().target())) << t.backend().target();
    }
  }
  EXPECT_TRUE(cluster.Files(1).empty());  // no scratch file left on the servers
  EXPECT_TRUE(cluster.Files(2).empty());
  // Two rows, write and read, each beside both layers.
  ASSERT_EQ(test.layers_size(), 2);
  EXPECT_EQ(test.layers(0).phase(), "w");
  EXPECT_EQ(test.layers(0).access(), "write");
  EXPECT_EQ(test.layers(1).access(), "read");
  for (const v1::LayerRow& row : test.layers()) {
    EXPECT_GT(row.net_mib(), 0.0);
    EXPECT_GT(row.backend_mib(), 0.0);
    EXPECT_GT(row.efficiency(), 0.0);
    EXPECT_EQ(row.repetitions(), 2u);
    EXPECT_FALSE(row.bound_by().empty());
  }
  EXPECT_THAT(r.out, HasSubstr("# layers: clients 1, write \"w\": end-to-end "));
  EXPECT_THAT(r.out, HasSubstr("# backend: "));
  // The HTML report draws them.
  const std::string html = cluster / "report.html";
  CommandResult rep = RunCommand({std::string(LOCKSTEP_BIN_DIR) + "/lockstep", "report", "--html",
                                  html, r.run_dir},
                                 std::chrono::seconds(60));
  ASSERT_EQ(rep.exit_code, 0) << rep.out << rep.err;
  const std::string page = ReadFileToString(html).value_or("");
  EXPECT_THAT(page, HasSubstr("<h2>Layers</h2>"));
  EXPECT_THAT(page, HasSubstr("data-plot=\"layers\""));
  EXPECT_THAT(page, HasSubstr("data-plot=\"efficiency\""));
}

TEST(Layers, RefusedBeforeTheRun) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start(1));
  // A backend phase without a server agent.
  RunResult r = cluster.Run(
      cluster.WritePlan(cluster.Plan().AddPhase(
          PlanPhase("back", "backend").Set("dir", cluster.dir(0)).Set("size", "4m"))),
      {"--history=false"});
  EXPECT_EQ(r.exit_code, 2) << r.Output();
  EXPECT_THAT(r.err, HasSubstr("phase back: a backend phase runs on the OSS server agents"));
  // A net phase with one agent.
  r = cluster.Run(cluster.WritePlan(cluster.Plan().AddPhase(NetPhase())), {"--history=false"});
  EXPECT_EQ(r.exit_code, 2) << r.Output();
  EXPECT_THAT(r.err, HasSubstr("phase net: a net phase measures between two agents at least"));
  EXPECT_THAT(r.err, HasSubstr(cluster.address(0)));
  // An interface the host lacks: named at Prepare, with the host's.
  ASSERT_OK(cluster.AddAgent());
  r = cluster.Run(cluster.WritePlan(cluster.Plan().AddPhase(NetPhase().Set("interface", "nosuch0"))),
                  {"--history=false"});
  // Before the run from the NICs the agents reported, else at Prepare.
  EXPECT_NE(r.exit_code, 0) << r.Output();
  EXPECT_THAT(r.err, HasSubstr("has no interface nosuch0"));
  EXPECT_THAT(r.err, HasSubstr("its interfaces: "));
}

}  // namespace
}  // namespace lockstep::testing
