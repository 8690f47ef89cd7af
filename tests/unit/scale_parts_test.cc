// The parts that keep a run's cost bounded at scale: the adaptive start
// lead, telemetry summarised per agent and per role, the telemetry side file
// (written by RunStore, read back by results), the file-limit check, the
// run record's per-agent parts offloaded to disk (memory bounded over
// phases) and `lockstep report`'s per-phase start and telemetry lines and
// its missed-start warning (as the run printed it).
#include <sys/resource.h>
#include <zlib.h>

#include <csignal>
#include <cstdio>
#include <mutex>
#include <set>
#include <thread>
#include <filesystem>
#include <string>
#include <vector>

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>

#include "common/files.h"
#include "common/json.h"
#include "controller/plan/phase_kind.h"
#include "controller/record/phase_reduce.h"
#include "controller/record/telemetry_summary.h"
#include "controller/results/journal_report.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "controller/record/telemetry_file.h"
#include "controller/run/barrier_lead.h"
#include "controller/run/bounded_parallel.h"
#include "controller/run/fd_limit.h"
#include "controller/run/run_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

TEST(BarrierLead, BeforeAnyPhaseUsesThePrepareRoundElseThePerAgentTerm) {
  BarrierLead lead;
  // 2 ms + 3 × 3 ms + 4 × 0.1 ms.
  EXPECT_EQ(lead.Next(absl::Microseconds(100), absl::Milliseconds(3), 32),
            absl::Microseconds(11400));
  // No Prepare round known: 0.2 ms per agent, as earlier versions.
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::ZeroDuration(), 1024),
            absl::Milliseconds(2) + 3 * absl::Microseconds(200) * 1024);
}

TEST(BarrierLead, TheFirstPhasesColdDeliveryLeavesOnceASecondIsKnown) {
  BarrierLead lead;
  // The first phase: delivery 130 ms (cold agents); alone, it is the window.
  lead.Observe(absl::Milliseconds(350), absl::Milliseconds(220));
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::ZeroDuration(), 128),
            absl::Milliseconds(2) + 1.5 * absl::Milliseconds(130));
  // The second: 40 ms; the first no longer counts: 2 ms + 1.5 × 40 ms.
  lead.Observe(absl::Milliseconds(164), absl::Milliseconds(124));
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::ZeroDuration(), 128), absl::Milliseconds(62));
  // A later slow delivery counts as any other.
  lead.Observe(absl::Milliseconds(62), absl::Milliseconds(-38));
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::ZeroDuration(), 128), absl::Milliseconds(152));
}

TEST(BarrierLead, AdaptsToTheMeasuredDeliveryAndGrowsAfterAMiss) {
  BarrierLead lead;
  lead.Observe(absl::Milliseconds(20), absl::Milliseconds(16));  // the first phase's
  // Lead 20 ms, the slowest Start arrived 16 ms early: delivery 4 ms; the
  // round trips are in it already.
  // 2 ms + 1.5 × 4 ms.
  lead.Observe(absl::Milliseconds(20), absl::Milliseconds(16));
  EXPECT_EQ(lead.Next(absl::Milliseconds(1), absl::Milliseconds(50), 32), absl::Milliseconds(8));
  // Missed by 4 ms with a lead of 8 ms: delivery 12 ms, the largest of the window.
  lead.Observe(absl::Milliseconds(8), absl::Milliseconds(-4));
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::ZeroDuration(), 32), absl::Milliseconds(20));
  // The miss leaves the window after kWindow more phases.
  for (size_t i = 0; i < BarrierLead::kWindow; ++i) {
    lead.Observe(absl::Milliseconds(20), absl::Milliseconds(16));
  }
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::ZeroDuration(), 32), absl::Milliseconds(8));
}

TEST(BarrierLead, IsBounded) {
  BarrierLead lead;
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::ZeroDuration(), 0), BarrierLead::kMinLead);
  lead.Observe(absl::Seconds(1000), absl::ZeroDuration());
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::ZeroDuration(), 1), BarrierLead::kMaxLead);
}

// 10,000 swarm agents, one phase: a Prepare round of 24 s. The lead used to
// be cut to 30 s, and the Starts arrived 21-31 s after the instant.
TEST(BarrierLead, ALongLeadIsUsedAndSaidNotCut) {
  BarrierLead lead;
  const LeadPlan plan = lead.Plan(absl::Milliseconds(50), absl::Seconds(24), 10000);
  EXPECT_FALSE(plan.capped);
  EXPECT_EQ(plan.lead, plan.needed);
  EXPECT_GT(plan.lead, absl::Seconds(70));
  EXPECT_THAT(plan.note, testing::HasSubstr("reaching 10000 clients"));
  EXPECT_THAT(plan.basis, testing::HasSubstr("Prepare round 24000.0 ms"));
  // A short one says nothing.
  EXPECT_EQ(lead.Plan(absl::Milliseconds(1), absl::Milliseconds(3), 2).note, "");
}

TEST(BarrierLead, ACappedLeadSaysWhatItWouldNeed) {
  BarrierLead lead;
  lead.Observe(absl::Seconds(600), absl::Seconds(-100), 10000);  // delivery 700 s
  const LeadPlan plan = lead.Plan(absl::ZeroDuration(), absl::ZeroDuration(), 10000);
  EXPECT_TRUE(plan.capped);
  EXPECT_EQ(plan.lead, BarrierLead::kMaxLead);
  EXPECT_EQ(plan.needed, absl::Milliseconds(2) + 1.5 * absl::Seconds(700));
  EXPECT_THAT(plan.note, testing::HasSubstr("needs a lead of about 1050.0 s"));
  EXPECT_THAT(plan.note, testing::HasSubstr("likely arrive after the instant"));
}

TEST(BarrierLead, TheFirstTransferWaitsPastTheLongestRecentOpen) {
  BarrierLead lead;
  EXPECT_EQ(lead.FirstTransferAfter(), absl::ZeroDuration());  // no open seen yet
  lead.ObserveOpens(absl::Microseconds(20));
  lead.ObserveOpens(absl::ZeroDuration());  // a phase without opens: not counted
  lead.ObserveOpens(absl::Microseconds(12));
  EXPECT_EQ(lead.FirstTransferAfter(), absl::Microseconds(30));  // 1.5 × 20 µs
  for (size_t i = 0; i < BarrierLead::kWindow; ++i) lead.ObserveOpens(absl::Microseconds(10));
  EXPECT_EQ(lead.FirstTransferAfter(), absl::Microseconds(15));
  lead.ObserveOpens(absl::Seconds(2));  // a hung open: bounded
  EXPECT_EQ(lead.FirstTransferAfter(), BarrierLead::kMaxFirstTransferAfter);
}

TEST(BarrierLead, ADeliveryScalesWithMoreClients) {
  BarrierLead lead;
  lead.Observe(absl::Milliseconds(20), absl::Milliseconds(10), 100);  // the cold first
  lead.Observe(absl::Milliseconds(20), absl::Milliseconds(10), 100);  // delivery 10 ms
  // The same clients: 2 ms + 1.5 × 10 ms; twice as many: 2 ms + 1.5 × 20 ms.
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::ZeroDuration(), 100), absl::Milliseconds(17));
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::ZeroDuration(), 200), absl::Milliseconds(32));
  // Fewer: not shortened below what was seen.
  EXPECT_EQ(lead.Next(absl::ZeroDuration(), absl::ZeroDuration(), 10), absl::Milliseconds(17));
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

TEST(TelemetrySummary, BriefKeepsFourSignificantDigits) {
  v1::TelemetrySummary t = Host(0.52083333333333337, 1234.5678, 0.000123456);
  t.mutable_cpu()->mutable_system_pct()->set_mean(98765.4321);
  t.mutable_memory()->mutable_dirty_bytes()->set_max(123456789.4);
  const v1::TelemetryBrief b = BriefOf(t);
  EXPECT_EQ(b.busy_cores().mean(), 0.5208);
  EXPECT_EQ(b.disk_write_mb_s(), 1235);
  EXPECT_EQ(b.net_rx_mb_s(), 0.0001235);
  EXPECT_EQ(b.system_pct(), 98770);
  EXPECT_EQ(b.dirty_bytes_max(), 123456789);  // bytes stay whole
  // Short in JSON: the nearest double to the decimal, not 0.52080000000000004.
  EXPECT_THAT(ToJson(b, false), ::testing::HasSubstr("\"mean\":0.5208"));
  EXPECT_THAT(ToJson(b, false), ::testing::HasSubstr("\"net_rx_mb_s\":0.0001235"));
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
  auto file = ReadTelemetryFile((*store)->dir() + "/" + kTelemetryFile);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->damage, "");
  EXPECT_EQ(file->lines.size(), 6u);
  EXPECT_EQ(RestoreTelemetry(file->lines, &run), 6u);
  for (int i = 0; i < 3; ++i) {
    for (const auto& a : test->phases(i).agents()) {
      EXPECT_DOUBLE_EQ(a.telemetry().cpu().busy_cores().mean(), i + 1) << i << " " << a.address();
    }
  }
  // A directory without the file (run.json of earlier versions): nothing to do.
  v1::RunRecord other;
  EXPECT_EQ(RestoreTelemetryFromDir(out, &other), "");
  EXPECT_TRUE(absl::IsNotFound(ReadTelemetryFile(out + "/none.gz").status()));
  // A file that is not one names itself, with nothing read from it.
  const std::string bad = out + "/bad.gz";
  std::FILE* f = std::fopen(bad.c_str(), "w");
  std::fputs("not gzip\n{", f);
  std::fclose(f);
  auto damaged = ReadTelemetryFile(bad);
  ASSERT_TRUE(damaged.ok()) << damaged.status();
  EXPECT_TRUE(damaged->lines.empty());
  EXPECT_NE(damaged->damage.find("bad.gz"), std::string::npos) << damaged->damage;
}

// Writes `data` as one gzip member to `path`.
void WriteGzip(const std::string& path, const std::string& data) {
  gzFile gz = ::gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr) << path;
  ASSERT_EQ(::gzwrite(gz, data.data(), static_cast<unsigned>(data.size())),
            static_cast<int>(data.size()));
  ASSERT_EQ(::gzclose(gz), Z_OK);
}

v1::TelemetryLine Line(const std::string& phase_id, const std::string& address, double busy) {
  v1::TelemetryLine line;
  line.set_phase_id(phase_id);
  line.set_address(address);
  *line.mutable_telemetry() = Host(busy, 1, 1);
  return line;
}

TEST(TelemetryFile, TheJsonLinesOfEarlierVersionsAreStillRead) {
  const std::string dir = ::testing::TempDir() + "/telemetry_json_lines";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string text;
  for (const char* address : {"a:1", "a:2"}) {
    text += ToJsonSetFieldsOnly(Line("t0.r0.w", address, 3)) + "\n";
  }
  WriteGzip(dir + "/" + kTelemetryJsonFile, text);
  v1::RunRecord run;
  v1::PhaseRecord* p = run.add_tests()->add_phases();
  p->set_phase_id("t0.r0.w");
  p->add_agents()->set_address("a:1");
  p->add_agents()->set_address("a:2");
  EXPECT_EQ(RestoreTelemetryFromDir(dir, &run), "");
  for (const auto& a : p->agents()) {
    EXPECT_DOUBLE_EQ(a.telemetry().cpu().busy_cores().mean(), 3) << a.address();
  }
  // With both files (not written by any version), the binary one is read.
  ASSERT_TRUE(AppendTelemetryFile(dir + "/" + kTelemetryFile, {Line("t0.r0.w", "a:1", 5)},
                                  "test lines")
                  .ok());
  EXPECT_EQ(RestoreTelemetryFromDir(dir, &run), "");
  EXPECT_DOUBLE_EQ(p->agents(0).telemetry().cpu().busy_cores().mean(), 5);

  // A JSON line cut short keeps the lines before it.
  const std::string cut = dir + "/cut.jsonl.gz";
  WriteGzip(cut, text.substr(0, text.size() - 10));
  auto file = ReadTelemetryFile(cut);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->lines.size(), 1u);
  EXPECT_THAT(file->damage, ::testing::AllOf(::testing::HasSubstr("cut.jsonl.gz, line 2"),
                                             ::testing::HasSubstr("first 1 lines are good")));
}

// Two phases' gzip members at `path`, three records; the file's bytes, and
// in `first_bytes` the first member's size.
std::string WriteTwoMembers(const std::string& path, size_t* first_bytes) {
  EXPECT_TRUE(
      AppendTelemetryFile(path, {Line("p1", "a:1", 1), Line("p1", "a:2", 2)}, "p1").ok());
  *first_bytes = std::filesystem::file_size(path);
  EXPECT_TRUE(AppendTelemetryFile(path, {Line("p2", "a:1", 3)}, "p2").ok());
  auto text = ReadFileToString(path);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

TEST(TelemetryFile, AFileCutShortKeepsTheRecordsBeforeTheCutAndNamesIt) {
  const std::string dir = ::testing::TempDir() + "/telemetry_cut_short";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string good = dir + "/good.pb.gz";
  size_t first_bytes = 0;
  const std::string compressed = WriteTwoMembers(good, &first_bytes);
  auto whole = ReadTelemetryFile(good);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->damage, "");
  ASSERT_EQ(whole->lines.size(), 3u);
  EXPECT_EQ(whole->lines[2].phase_id(), "p2");
  EXPECT_DOUBLE_EQ(whole->lines[1].telemetry().cpu().busy_cores().mean(), 2);

  // The same records, the last one cut 4 bytes short, in a well-formed gzip.
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream out(&bytes);
    for (const auto& line : whole->lines) {
      ASSERT_TRUE(google::protobuf::util::SerializeDelimitedToZeroCopyStream(line, &out));
    }
  }
  const std::string cut = dir + "/cut.pb.gz";
  WriteGzip(cut, bytes.substr(0, bytes.size() - 4));
  auto damaged = ReadTelemetryFile(cut);
  ASSERT_TRUE(damaged.ok()) << damaged.status();
  EXPECT_EQ(damaged->lines.size(), 2u);
  EXPECT_THAT(damaged->damage,
              ::testing::AllOf(::testing::HasSubstr("cut.pb.gz"), ::testing::HasSubstr("record 3"),
                               ::testing::HasSubstr("first 2 records are good")));

  // The second gzip member cut in its middle, as a controller killed while
  // appending a phase leaves it: the first phase's records are kept.
  const std::string run_dir = dir + "/run";
  std::filesystem::create_directories(run_dir);
  ASSERT_LT(first_bytes + 2, compressed.size());
  ASSERT_TRUE(WriteFileAtomically(
                  run_dir + "/" + kTelemetryFile,
                  compressed.substr(0, first_bytes + (compressed.size() - first_bytes) / 2))
                  .ok());
  auto killed = ReadTelemetryFile(run_dir + "/" + kTelemetryFile);
  ASSERT_TRUE(killed.ok()) << killed.status();
  EXPECT_EQ(killed->lines.size(), 2u);
  EXPECT_THAT(killed->damage, ::testing::HasSubstr(kTelemetryFile));
  // A reader of the run gets those back and is told what is missing.
  v1::RunRecord run;
  for (const char* id : {"p1", "p2"}) {
    v1::PhaseRecord* p = run.add_tests()->add_phases();
    p->set_phase_id(id);
    p->add_agents()->set_address("a:1");
  }
  const std::string warning = RestoreTelemetryFromDir(run_dir, &run);
  EXPECT_THAT(warning, ::testing::HasSubstr("left out")) << warning;
  EXPECT_DOUBLE_EQ(run.tests(0).phases(0).agents(0).telemetry().cpu().busy_cores().mean(), 1);
  EXPECT_FALSE(run.tests(1).phases(0).agents(0).has_telemetry());
}

TEST(TelemetryFile, AFailedAppendIsCutBackAndLaterPhasesStayReadable) {
  const std::string dir = ::testing::TempDir() + "/telemetry_failed_append";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + kTelemetryFile;
  ASSERT_TRUE(AppendTelemetryFile(path, {Line("p1", "a:1", 1)}, "p1").ok());
  const uintmax_t before = std::filesystem::file_size(path);
  // The disk fills up (a file size limit: writes past it fail with EFBIG)
  // in the middle of the next phase's member.
  std::vector<v1::TelemetryLine> big;
  for (int i = 0; i < 200; ++i) big.push_back(Line("p2", absl::StrCat("a:", i), i));
  struct rlimit old_limit = {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit limit = old_limit;
  limit.rlim_cur = before + 64;
  void (*old_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  const absl::Status failed = AppendTelemetryFile(path, big, "the lines of p2");
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_FALSE(failed.ok());
  EXPECT_THAT(std::string(failed.message()),
              ::testing::AllOf(::testing::HasSubstr(path), ::testing::HasSubstr("p2 is not kept")))
      << failed;
  EXPECT_EQ(std::filesystem::file_size(path), before) << "cut back to the last whole member";
  // The next phase's member is readable after the first.
  ASSERT_TRUE(AppendTelemetryFile(path, {Line("p3", "a:1", 3)}, "p3").ok());
  auto file = ReadTelemetryFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->damage, "");
  ASSERT_EQ(file->lines.size(), 2u);
  EXPECT_EQ(file->lines[1].phase_id(), "p3");
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

TEST(SplitJsonAt, CutsAtTheEmptyArrayOrAddsTheKey) {
  JsonSplit s = SplitJsonAt(R"({"a":1,"agents":[],"b":{"agents":2}})", "agents");
  EXPECT_EQ(s.prefix + "{}" + s.suffix, R"({"a":1,"agents":[{}],"b":{"agents":2}})");
  s = SplitJsonAt(R"({"a":1})", "tests");
  EXPECT_EQ(s.prefix + "1" + s.suffix, R"({"a":1,"tests":[1]})");
  s = SplitJsonAt("{}", "tests");
  EXPECT_EQ(s.prefix + "1" + s.suffix, R"({"tests":[1]})");
  // A nested member of the same name, or the text inside a string, comes
  // first: the object's own member is where the elements go.
  s = SplitJsonAt(R"({"e":"x \"tests\":[] [{","r":{"tests":[]},"tests":[],"z":"}"})", "tests");
  EXPECT_EQ(s.prefix + "1" + s.suffix,
            R"({"e":"x \"tests\":[] [{","r":{"tests":[]},"tests":[1],"z":"}"})");
}

v1::PhaseRecord FullPhase(const std::string& id, v1::PhaseKind kind, int agents) {
  v1::PhaseRecord p;
  p.set_phase_id(id);
  p.set_kind(kind);
  p.set_attempts(1);
  p.set_lead_ns(5'000'000);
  for (int i = 0; i < agents; ++i) {
    v1::AgentPhaseRecord* a = p.add_agents();
    a->set_address("h:" + std::to_string(i));
    a->set_role(v1::CLIENT);
    a->set_start_margin_ns(1'000'000 * (i + 1));
    for (int t = 0; t < 2; ++t) {
      v1::TaskResult* task = a->add_tasks();
      task->set_rank(static_cast<uint32_t>(2 * i + t));
      task->set_release_unix_ns(1000 + i);
      if (task->rank() == 0) task->mutable_dir_fs()->set_files(77);
    }
    a->add_series_bytes(4096);
  }
  return p;
}

TEST(RunStore, OffloadsEachPhasesAgentsAndRunJsonHasThemAll) {
  const std::string out = ::testing::TempDir() + "/offload_test";
  std::filesystem::remove_all(out);
  auto store = RunStore::Create(out, "t", "");
  ASSERT_TRUE(store.ok()) << store.status();
  v1::RunRecord run;
  run.set_run_id("r1");
  run.add_agents()->set_address("h:0");
  v1::RunRecord expected;
  for (int t = 0; t < 2; ++t) {
    v1::TestRecord* test = run.add_tests();
    test->set_test_id(static_cast<uint32_t>(t));
    for (int k = 0; k < 3; ++k) {
      const std::string id = absl::StrCat("t", t, ".r", k, ".w");
      *test->add_phases() = FullPhase(id, k == 2 ? v1::MDTEST : v1::WRITE, 3);
    }
  }
  // A phase whose run stopped before any agent answered, never journaled.
  run.mutable_tests(1)->add_phases()->set_phase_id("t1.r3.w");
  for (int t = 0; t < 2; ++t) {
    for (int k = 0; k < 3; ++k) {
      v1::PhaseRecord* p = run.mutable_tests(t)->mutable_phases(k);
      ASSERT_TRUE((*store)->JournalAndOffload(p).ok());
      EXPECT_EQ(p->agents_size(), 0);  // mdtest's too: its report kept them (PhaseAgents)
    }
  }
  // Set after the journal: still in run.json.
  run.mutable_tests(0)->mutable_phases(1)->mutable_remove_row()->set_access("remove");
  expected = run;
  for (int t = 0; t < 2; ++t) {
    for (int k = 0; k < 3; ++k) {
      v1::PhaseRecord* e = expected.mutable_tests(t)->mutable_phases(k);
      const v1::PhaseRecord full = FullPhase(e->phase_id(), e->kind(), 3);
      *e->mutable_agents() = full.agents();
    }
  }
  ASSERT_TRUE((*store)->WriteRunJson(run).ok());
  auto json = ReadFileToString((*store)->dir() + "/run.json");
  ASSERT_TRUE(json.ok());
  v1::RunRecord back;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*json, &back).ok()) << *json;
  std::string diff;
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesToString(&diff);
  EXPECT_TRUE(d.Compare(expected, back)) << diff;
  // The journal has every phase whole, as it was when journaled.
  auto journal = ReadFileToString((*store)->dir() + "/journal.jsonl");
  ASSERT_TRUE(journal.ok());
  std::vector<std::string> lines = absl::StrSplit(*journal, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 6u);
  v1::PhaseRecord first;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(lines[0], &first).ok());
  EXPECT_EQ(first.agents_size(), 3);
  EXPECT_EQ(first.agents(2).tasks(1).rank(), 5u);
  // The spool goes with the store.
  const std::string dir = (*store)->dir();
  store->reset();
  EXPECT_FALSE(std::filesystem::exists(dir + "/.agents.spool"));
}

TEST(ReportText, ShowsTheSlowestStartMarginAndTheRoleTelemetryPerPhase) {
  v1::RunRecord run;
  v1::PhaseRecord* p = run.add_tests()->add_phases();
  *p = FullPhase("t0.r0.w", v1::WRITE, 3);
  p->set_start_margin_ns(1'000'000);
  p->set_start_first_sent_unix_ns(10'000'000);
  p->set_start_last_sent_unix_ns(12'500'000);
  v1::RoleTelemetry* r = p->add_role_telemetry();
  r->set_role(v1::CLIENT);
  r->set_agents(3);
  r->set_hosts(1);
  r->mutable_mean()->set_cores(2);
  r->mutable_mean()->mutable_busy_cores()->set_mean(1.25);
  r->mutable_max()->mutable_busy_cores()->set_max(1.9);
  r->mutable_mean()->set_user_pct(40);
  const std::string text = FormatPhaseStarts(run);
  EXPECT_NE(text.find("t0.r0.w: lead 5.0 ms, slowest agent's start margin 1.0 ms (h:0), "
                      "Starts sent over 2.5 ms"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("clients (3 agents, 1 host): busy 1.2 of 2 cores (max 1.9); cpu 40% user"),
            std::string::npos)
      << text;
  // Older runs have neither: nothing printed.
  v1::RunRecord old;
  old.add_tests()->add_phases()->set_phase_id("x");
  EXPECT_EQ(FormatPhaseStarts(old), "");
}

TEST(ReportText, AMissedInstantNamesTheLatestClient) {
  v1::PhaseRecord p;
  p.set_phase_id("t0/r3/w");
  p.set_lead_ns(812'000'000);
  p.set_start_skew_ns(1'040'200'000);
  EXPECT_EQ(MissedStartNote(p), "");  // no agents: nothing to say
  auto add = [&p](const std::string& address, v1::Role role, int64_t margin_ns) {
    v1::AgentPhaseRecord* a = p.add_agents();
    a->set_address(address);
    a->set_role(role);
    a->set_start_margin_ns(margin_ns);
  };
  add("10.0.0.1:7070", v1::CLIENT, 5'000'000);
  add("10.0.0.9:7070", v1::OSS, -2'000'000'000);  // servers get no Start
  EXPECT_EQ(MissedStartNote(p), "");
  add("10.0.0.2:7070", v1::CLIENT, -12'300'000);
  add("10.0.0.3:7070", v1::CLIENT, -1'038'400'000);
  const std::string said =
      "warning: t0/r3/w: agent 10.0.0.3:7070 had its Start 1038.4 ms after the start instant "
      "(lead 812.0 ms), so its tasks began late and the start was not simultaneous (start "
      "skew 1040.2 ms); the next lead is longer (max_start_skew_us with on_skew repeats or "
      "fails such phases)";
  EXPECT_EQ(MissedStartNote(p), said);
}

TEST(ReportText, AMissedInstantIsSaidAgainWhereTheRunSaidIt) {
  v1::RunRecord run;
  v1::TestRecord* t = run.add_tests();
  for (const char* id : {"t0.r0.w", "t0.r1.w"}) {
    v1::PhaseRecord* p = t->add_phases();
    *p = FullPhase(id, v1::WRITE, 2);
    p->set_ok(true);
    p->set_lead_ns(3'500'000);
  }
  t->mutable_phases(1)->mutable_agents(1)->set_start_margin_ns(-2'000'000);
  // A superseded attempt (repeated on skew) is not printed, nor its note.
  v1::PhaseRecord* superseded = t->add_phases();
  *superseded = t->phases(1);
  superseded->set_phase_id("t0.r2.w");
  superseded->set_error("superseded: start skew");
  superseded->set_error_kind(v1::SUPERSEDED);
  const std::string text = FormatRunSummary(run);
  const std::string note = "# " + MissedStartNote(t->phases(1));
  ASSERT_NE(note, "# ");
  EXPECT_THAT(text, ::testing::HasSubstr(note + "\n")) << text;
  EXPECT_EQ(text.find(note), text.rfind(note)) << "once, for t0.r1.w only:\n" << text;
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("t0.r0.w: agent")));
}

}  // namespace
}  // namespace lockstep
