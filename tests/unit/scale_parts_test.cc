// The parts that keep a run's cost bounded at scale: the adaptive start
// lead, telemetry summarised per agent and per role, the telemetry side file
// (written by RunStore, read back by results), and the file-limit check.
#include <sys/resource.h>

#include <cstdio>
#include <mutex>
#include <set>
#include <thread>
#include <filesystem>
#include <string>
#include <vector>

#include "controller/ior/telemetry_summary.h"
#include "controller/results/telemetry_file.h"
#include "controller/run/barrier_lead.h"
#include "controller/run/bounded_parallel.h"
#include "controller/run/fd_limit.h"
#include "controller/run/run_store.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

TEST(BarrierLead, BeforeAnyPhaseUsesThePrepareRoundElseThePerAgentTerm) {
  BarrierLead lead;
  // 2 ms + 2 × 3 ms + 4 × 0.1 ms.
  EXPECT_EQ(lead.Next(absl::Microseconds(100), absl::Milliseconds(3), 32),
            absl::Microseconds(8400));
  // No Prepare round known: 0.2 ms per agent, as earlier versions.
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::ZeroDuration(), 1024),
            absl::Milliseconds(2) + 2 * absl::Microseconds(200) * 1024);
}

TEST(BarrierLead, AdaptsToTheMeasuredDeliveryAndGrowsAfterAMiss) {
  BarrierLead lead;
  // Lead 20 ms, the slowest Start arrived 16 ms early: delivery 4 ms; the
  // round trips are in it already.
  lead.Observe(absl::Milliseconds(20), absl::Milliseconds(16));
  EXPECT_EQ(lead.Next(absl::Milliseconds(1), absl::Milliseconds(50), 32), absl::Milliseconds(8));
  // Missed by 4 ms with a lead of 8 ms: delivery 12 ms, the largest of the window.
  lead.Observe(absl::Milliseconds(8), absl::Milliseconds(-4));
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::ZeroDuration(), 32), absl::Milliseconds(20));
  // The miss leaves the window after kWindow more phases.
  for (size_t i = 0; i < BarrierLead::kWindow; ++i) {
    lead.Observe(absl::Milliseconds(20), absl::Milliseconds(18));
  }
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::ZeroDuration(), 32), absl::Milliseconds(5));
}

TEST(BarrierLead, IsBounded) {
  BarrierLead lead;
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::ZeroDuration(), 0), BarrierLead::kMinLead);
  lead.Observe(absl::Seconds(100), absl::ZeroDuration());
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::ZeroDuration(), 1), BarrierLead::kMaxLead);
}

v1::TelemetrySummary Host(double busy, double disk_write, double net_rx) {
  v1::TelemetrySummary t;
  t.set_interval_s(1.0);
  t.mutable_cpu()->set_cores(2);
  t.mutable_cpu()->mutable_busy_cores()->set_mean(busy);
  t.mutable_cpu()->mutable_busy_cores()->set_max(busy + 0.5);
  t.mutable_cpu()->mutable_user_pct()->set_mean(busy * 50);
  for (int d = 0; d < 2; ++d) {
    v1::DiskStats* disk = t.add_disks();
    disk->set_device("sd" + std::string(1, static_cast<char>('a' + d)));
    disk->mutable_write_mb_s()->set_mean(disk_write / 2);
  }
  t.add_nets()->mutable_rx_mb_s()->set_mean(net_rx);
  t.mutable_memory()->mutable_dirty_bytes()->set_max(4096);
  t.add_warnings("no Lustre");
  return t;
}

TEST(TelemetrySummary, BriefSumsDevicesAndKeepsTheCpu) {
  const v1::TelemetryBrief b = BriefOf(Host(1.0, 100, 7));
  EXPECT_EQ(b.cores(), 2u);
  EXPECT_DOUBLE_EQ(b.busy_cores().mean(), 1.0);
  EXPECT_DOUBLE_EQ(b.busy_cores().max(), 1.5);
  EXPECT_DOUBLE_EQ(b.user_pct(), 50);
  EXPECT_DOUBLE_EQ(b.disk_write_mb_s(), 100);
  EXPECT_DOUBLE_EQ(b.net_rx_mb_s(), 7);
  EXPECT_DOUBLE_EQ(b.dirty_bytes_max(), 4096);
  EXPECT_EQ(b.warnings(), 1u);
}

TEST(TelemetrySummary, RolesCountEachHostOnce) {
  v1::PhaseRecord phase;
  const std::map<std::string, std::string> hosts = {
      {"a:1", "h1"}, {"a:2", "h1"}, {"b:1", "h2"}, {"s:1", "oss1"}};
  auto add = [&](const std::string& address, v1::Role role, const v1::TelemetrySummary& t) {
    v1::AgentPhaseRecord* a = phase.add_agents();
    a->set_address(address);
    a->set_role(role);
    *a->mutable_telemetry_brief() = BriefOf(t);
  };
  add("a:1", v1::CLIENT, Host(1.0, 100, 10));
  add("a:2", v1::CLIENT, Host(1.0, 100, 10));  // same host h1: not counted again
  add("b:1", v1::CLIENT, Host(2.0, 300, 30));
  add("s:1", v1::OSS, Host(0.5, 50, 5));
  phase.add_agents()->set_address("c:1");  // no telemetry: not counted
  const std::vector<v1::RoleTelemetry> roles = SummarizeRoles(phase, hosts);
  ASSERT_EQ(roles.size(), 2u);
  const v1::RoleTelemetry& clients = roles[0];
  EXPECT_EQ(clients.role(), v1::CLIENT);
  EXPECT_EQ(clients.agents(), 3u);
  EXPECT_EQ(clients.hosts(), 2u);
  EXPECT_DOUBLE_EQ(clients.busy_cores_total(), 3.0);
  EXPECT_DOUBLE_EQ(clients.disk_mb_s_total(), 400);
  EXPECT_DOUBLE_EQ(clients.net_mb_s_total(), 40);
  EXPECT_DOUBLE_EQ(clients.mean().busy_cores().mean(), 1.5);
  EXPECT_DOUBLE_EQ(clients.max().busy_cores().mean(), 2.0);
  EXPECT_DOUBLE_EQ(clients.mean().disk_write_mb_s(), 200);
  EXPECT_DOUBLE_EQ(clients.max().disk_write_mb_s(), 300);
  EXPECT_EQ(roles[1].role(), v1::OSS);
  EXPECT_EQ(roles[1].hosts(), 1u);
}

TEST(TelemetryFile, RunStoreMovesItOutAndResultsPutItBack) {
  const std::string out = ::testing::TempDir() + "/telemetry_file_test";
  std::filesystem::remove_all(out);
  auto store = RunStore::Create(out, "t", "");
  ASSERT_TRUE(store.ok()) << store.status();
  v1::RunRecord run;
  v1::TestRecord* test = run.add_tests();
  // Two attempts of one phase (repeated on skew), then another phase.
  for (const char* id : {"t0.r0.w", "t0.r0.w", "t0.r0.r"}) {
    v1::PhaseRecord* p = test->add_phases();
    p->set_phase_id(id);
    for (const char* address : {"a:1", "a:2"}) {
      v1::AgentPhaseRecord* a = p->add_agents();
      a->set_address(address);
      *a->mutable_telemetry() = Host(test->phases_size(), 1, 1);
    }
    ASSERT_TRUE((*store)->MoveTelemetryOut(p).ok());
    for (const auto& a : p->agents()) EXPECT_FALSE(a.has_telemetry());
  }
  auto lines = ReadTelemetryFile((*store)->dir() + "/" + kTelemetryFile);
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_EQ(lines->size(), 6u);
  EXPECT_EQ(RestoreTelemetry(*lines, &run), 6u);
  for (int i = 0; i < 3; ++i) {
    for (const auto& a : test->phases(i).agents()) {
      EXPECT_DOUBLE_EQ(a.telemetry().cpu().busy_cores().mean(), i + 1) << i << " " << a.address();
    }
  }
  // A directory without the file (run.json of earlier versions): nothing to do.
  v1::RunRecord other;
  EXPECT_TRUE(RestoreTelemetryFromDir(out, &other).ok());
  EXPECT_TRUE(absl::IsNotFound(ReadTelemetryFile(out + "/none.gz").status()));
  // A damaged file names itself.
  const std::string bad = out + "/bad.gz";
  std::FILE* f = std::fopen(bad.c_str(), "w");
  std::fputs("not gzip\n{", f);
  std::fclose(f);
  auto damaged = ReadTelemetryFile(bad);
  EXPECT_FALSE(damaged.ok());
  EXPECT_NE(damaged.status().message().find("bad.gz"), std::string::npos);
}

TEST(FileLimit, EnoughForAFewAgentsAndAClearErrorBeyondTheHardLimit) {
  EXPECT_TRUE(EnsureFileLimit(10).ok());
  struct rlimit rl = {};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &rl), 0);
  if (rl.rlim_max == RLIM_INFINITY) GTEST_SKIP() << "no hard limit";
  const absl::Status s = EnsureFileLimit(static_cast<size_t>(rl.rlim_max));
  EXPECT_TRUE(absl::IsResourceExhausted(s));
  EXPECT_NE(s.message().find("ulimit -n"), std::string::npos) << s;
  EXPECT_NE(s.message().find("LimitNOFILE"), std::string::npos) << s;
}

TEST(BoundedParallelFor, RunsEachIndexOnceOnAtMostTheThreadsAsked) {
  std::vector<std::atomic<int>> seen(1000);
  std::mutex mu;
  std::set<std::thread::id> threads;
  BoundedParallelFor(seen.size(), 4, [&](size_t i) {
    seen[i]++;
    std::lock_guard<std::mutex> lock(mu);
    threads.insert(std::this_thread::get_id());
  });
  for (const auto& s : seen) EXPECT_EQ(s.load(), 1);
  EXPECT_LE(threads.size(), 4u);
  BoundedParallelFor(0, 4, [&](size_t) { ADD_FAILURE(); });
}

}  // namespace
}  // namespace lockstep
