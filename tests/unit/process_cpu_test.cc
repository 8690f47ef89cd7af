// Per-process CPU: /proc/PID/stat parsing, name folding, the percentage
// arithmetic over a window, the brief and the "top cpu" lines, and a real
// child spinning on one core seen at about 100% in a real telemetry window.
#include "agent/process_cpu.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "absl/strings/str_format.h"
#include "agent/procfs.h"
#include "agent/telemetry.h"
#include "common/clock.h"
#include "controller/ior/ior_report.h"
#include "controller/record/telemetry_summary.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

// Real lines (Linux 6.1): a user process, a kworker (flags 0x04208060 has
// PF_KTHREAD) and a comm with a space and a parenthesis.
constexpr char kUserStat[] =
    "14346 (cat) R 14340 14340 6002 0 -1 4194304 96 0 0 0 7 3 0 0 20 0 1 0 60019 3133440 357 "
    "18446744073709551615 94318480285696 94318480305577 140736157170480 0 0 0 0 0 0 0 0 0 17 1 "
    "0 0 0 0 0\n";
constexpr char kKworkerStat[] =
    "8 (kworker/u8:0-events_unbound) I 2 0 0 0 -1 69238880 0 0 0 0 12 345 0 0 20 0 1 0 5 0 0 "
    "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 3 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
constexpr char kOddStat[] =
    "77 (a b) c) S 1 77 77 0 -1 4194560 10 0 0 0 1 2 0 0 20 0 4 0 999 0 0 0\n";

TEST(ProcPidStat, ParsesCommFlagsAndTimes) {
  auto cat = ParseProcPidStat(kUserStat);
  ASSERT_OK(cat);
  EXPECT_EQ(cat->pid, 14346u);
  EXPECT_EQ(cat->comm, "cat");
  EXPECT_FALSE(cat->kernel_thread);
  EXPECT_EQ(cat->user_ticks, 7u);
  EXPECT_EQ(cat->system_ticks, 3u);
  EXPECT_EQ(cat->start_ticks, 60019u);
  auto kw = ParseProcPidStat(kKworkerStat);
  ASSERT_OK(kw);
  EXPECT_EQ(kw->comm, "kworker/u8:0-events_unbound");
  EXPECT_TRUE(kw->kernel_thread);
  EXPECT_EQ(kw->system_ticks, 345u);
  auto odd = ParseProcPidStat(kOddStat);
  ASSERT_OK(odd);
  EXPECT_EQ(odd->comm, "a b) c");
  EXPECT_EQ(odd->start_ticks, 999u);
  auto bad = ParseProcPidStat("12 (x) S 1 2\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("12 (x) S 1 2"));
  EXPECT_FALSE(ParseProcPidStat("no parens here").ok());
}

TEST(FoldProcessName, PerCpuAndInstanceSuffixesGo) {
  EXPECT_EQ(FoldProcessName("ptlrpcd_00"), "ptlrpcd");
  EXPECT_EQ(FoldProcessName("ptlrpcd_07"), "ptlrpcd");
  EXPECT_EQ(FoldProcessName("ptlrpcd_00_01"), "ptlrpcd");
  EXPECT_EQ(FoldProcessName("kworker/u8:2"), "kworker");
  EXPECT_EQ(FoldProcessName("kworker/0:1H-kblockd"), "kworker");
  EXPECT_EQ(FoldProcessName("flush-8:0"), "flush");
  EXPECT_EQ(FoldProcessName("jbd2/sda1-8"), "jbd2");
  EXPECT_EQ(FoldProcessName("ksoftirqd/1"), "ksoftirqd");
  EXPECT_EQ(FoldProcessName("ll_ost_io00_001"), "ll_ost_io");
  EXPECT_EQ(FoldProcessName("scsi_eh_0"), "scsi_eh");
  EXPECT_EQ(FoldProcessName("kdamond.0"), "kdamond");
  // Names that merely end in digits, or have none, stay.
  EXPECT_EQ(FoldProcessName("python3"), "python3");
  EXPECT_EQ(FoldProcessName("lockstep-agent"), "lockstep-agent");
  EXPECT_EQ(FoldProcessName("pdflush"), "pdflush");
  EXPECT_EQ(FoldProcessName("1234"), "1234");
  EXPECT_EQ(FoldProcessName(""), "?");
}

ProcessTicks Proc(uint32_t pid, const std::string& comm, uint64_t user, uint64_t sys,
                  bool kthread = false, uint64_t start = 100) {
  ProcessTicks p;
  p.pid = pid;
  p.comm = comm;
  p.user_ticks = user;
  p.system_ticks = sys;
  p.kernel_thread = kthread;
  p.start_ticks = start;
  return p;
}

TEST(ProcessCpuWindow, PercentOfOneCoreOverTheWindowGroupedAndSorted) {
  ProcessCpuWindow w;
  // Baseline at t = 0; the window is 2 s at 100 ticks/s: 200 ticks = 100%.
  w.Add({Proc(10, "lmdd", 1000, 500), Proc(20, "ptlrpcd_00", 0, 40, true),
         Proc(21, "ptlrpcd_01", 0, 60, true), Proc(30, "pdflush", 0, 7, true),
         Proc(40, "idle", 5, 5), Proc(50, "gone", 0, 0)});
  // Mid-window: "gone" used 10 ticks and ends; "born" starts.
  w.Add({Proc(10, "lmdd", 1100, 550), Proc(50, "gone", 4, 6), Proc(60, "born", 20, 0)});
  // End: lmdd +200 ticks in all (150 user, 50 sys); the ptlrpcds +10 and +6;
  // pdflush +30; pid 40 reused by a new process (another start time).
  w.Add({Proc(10, "lmdd", 1150, 550), Proc(20, "ptlrpcd_00", 0, 50, true),
         Proc(21, "ptlrpcd_01", 0, 66, true), Proc(30, "pdflush", 0, 37, true),
         Proc(40, "idle", 5, 5), Proc(40, "reused", 2, 0, false, 9999), Proc(60, "born", 40, 0)});
  EXPECT_EQ(w.seen(), 8u);
  const std::vector<v1::ProcessCpu> top = w.Top(2.0, 100.0, 10);
  ASSERT_EQ(top.size(), 6u);  // "idle" used nothing
  EXPECT_EQ(top[0].name(), "lmdd");
  EXPECT_DOUBLE_EQ(top[0].cpu_pct(), 100.0);
  EXPECT_DOUBLE_EQ(top[0].user_pct(), 75.0);
  EXPECT_DOUBLE_EQ(top[0].system_pct(), 25.0);
  EXPECT_EQ(top[0].pid(), 10u);
  EXPECT_FALSE(top[0].kernel_thread());
  EXPECT_EQ(top[1].name(), "born");  // all 40 ticks since its start: 20%
  EXPECT_DOUBLE_EQ(top[1].cpu_pct(), 20.0);
  EXPECT_EQ(top[2].name(), "pdflush");
  EXPECT_DOUBLE_EQ(top[2].cpu_pct(), 15.0);
  EXPECT_EQ(top[3].name(), "ptlrpcd");
  EXPECT_DOUBLE_EQ(top[3].cpu_pct(), 8.0);  // 10 + 6 ticks
  EXPECT_EQ(top[3].processes(), 2u);
  EXPECT_EQ(top[3].pid(), 20u);  // the busier of the two
  EXPECT_TRUE(top[3].kernel_thread());
  EXPECT_EQ(top[4].name(), "gone");  // what it used until its last sample
  EXPECT_DOUBLE_EQ(top[4].cpu_pct(), 5.0);
  EXPECT_EQ(top[5].name(), "reused");
  EXPECT_DOUBLE_EQ(top[5].cpu_pct(), 1.0);
  EXPECT_EQ(w.Top(2.0, 100.0, 2).size(), 2u);
  EXPECT_DOUBLE_EQ(w.Top(0.0, 100.0, 1)[0].cpu_pct(), 0.0);  // no window: no share
}

TEST(TopCpuText, AsSeedReport003) {
  v1::TelemetrySummary t;
  t.set_interval_s(10);
  auto add = [&](const char* name, double pct) {
    v1::ProcessCpu* p = t.add_top_processes();
    p->set_name(name);
    p->set_cpu_pct(pct);
  };
  add("lockstep-agent", 99.6);
  add("flush", 15.2);
  add("kworker", 5.0);
  add("sshd", 0.4);
  EXPECT_EQ(TopCpuText(t.top_processes(), 5),
            "lockstep-agent 100% (1 CPU), flush 15%, kworker 5%");
  EXPECT_EQ(TopCpuText(t.top_processes(), 1), "lockstep-agent 100% (1 CPU)");
  t.mutable_top_processes(0)->set_cpu_pct(151);
  EXPECT_EQ(TopCpuText(t.top_processes(), 1), "lockstep-agent 151% (1.5 CPUs)");

  // The brief keeps the first three of at least 1%, to a tenth of a
  // percent, with no pid or user/system split; the lines show five, each
  // host once.
  for (int i = 0; i < 6; ++i) add("x", 0.1);
  const v1::TelemetryBrief brief = BriefOf(t);
  ASSERT_EQ(brief.top_processes_size(), kBriefTopProcesses);
  EXPECT_EQ(brief.top_processes(1).name(), "flush");
  EXPECT_DOUBLE_EQ(brief.top_processes(1).cpu_pct(), 15.2);
  EXPECT_EQ(brief.top_processes(1).pid(), 0u);
  EXPECT_EQ(brief.top_processes(1).user_pct(), 0.0);
  t.mutable_top_processes(1)->set_cpu_pct(15.2345);
  EXPECT_DOUBLE_EQ(BriefOf(t).top_processes(1).cpu_pct(), 15.2);
  {
    v1::TelemetrySummary quiet = t;
    quiet.mutable_top_processes(2)->set_cpu_pct(0.5);  // kworker below 1%: noise
    EXPECT_EQ(BriefOf(quiet).top_processes_size(), 2);
  }
  v1::PhaseRecord pr;
  for (const char* address : {"10.0.0.1:7000", "10.0.0.1:7001", "10.0.0.2:7000"}) {
    v1::AgentPhaseRecord* a = pr.add_agents();
    a->set_address(address);
    a->set_role(v1::CLIENT);
    *a->mutable_telemetry() = t;
    a->mutable_telemetry()->set_samples(3);
  }
  const std::vector<std::string> lines =
      TelemetryLines(pr, {{"10.0.0.1:7000", "n01"}, {"10.0.0.1:7001", "n01"}});
  ASSERT_EQ(lines.size(), 3u);  // the clients' line, n01, and the host without a name
  EXPECT_EQ(lines[1], "  n01 top cpu: lockstep-agent 151% (1.5 CPUs), flush 15%, kworker 5%");
  EXPECT_EQ(lines[2].rfind("  10.0.0.2:7000 top cpu: lockstep-agent", 0), 0u) << lines[2];
  // The report renders them under the phase's row ('#' lines) from the
  // agents' telemetry and the host names of AgentsReady's record...
  pr.set_kind(v1::WRITE);
  v1::RunRecord run;
  for (const char* address : {"10.0.0.1:7000", "10.0.0.1:7001"}) {
    v1::AgentRecord* a = run.add_agents();
    a->set_address(address);
    a->mutable_facts()->set_hostname("n01");
  }
  v1::AgentRecord* unnamed = run.add_agents();  // its facts name no host
  unnamed->set_address("10.0.0.2:7000");
  IorReport report(false);
  report.AgentsReady(run);
  const std::string rendered = report.PhaseDone(pr);
  EXPECT_THAT(rendered, HasSubstr("#  n01 top cpu: lockstep-agent"));
  // ...byte for byte as a record of earlier versions, which kept the lines
  // as text and not the telemetry (telemetry.pb.gz not read back), prints
  // them.
  v1::PhaseRecord old = pr;
  for (v1::AgentPhaseRecord& a : *old.mutable_agents()) a.clear_telemetry();
  EXPECT_EQ(TelemetryLines(old, {}).size(), 0u);
  for (const std::string& l : lines) old.add_telemetry_lines(l);
  IorReport old_report(false);
  old_report.AgentsReady(run);
  EXPECT_EQ(old_report.PhaseDone(old), rendered);
}

// A child that spins on one core until killed, named so that it is found.
pid_t StartSpinner() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_NAME, "lockstep_spin_9");
    volatile uint64_t x = 0;
    for (;;) x = x + 1;
  }
  return pid;
}

TEST(SharedProcessScan, SamplersOfOneProcessShareAFreshScan) {
  auto a = SharedProcessScan("/proc", /*max_age_ns=*/60'000'000'000);
  auto b = SharedProcessScan("/proc", /*max_age_ns=*/60'000'000'000);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a.get(), b.get());  // within the age: the same scan
  EXPECT_FALSE(a->empty());     // this test process at least
  auto c = SharedProcessScan("/proc", /*max_age_ns=*/0);
  EXPECT_NE(c.get(), a.get());  // too old for this caller: scanned again
  // Another root is cached apart.
  EXPECT_TRUE(SharedProcessScan("/nonexistent-proc", 60'000'000'000)->empty());
  EXPECT_EQ(SharedProcessScan("/proc", 60'000'000'000).get(), c.get());
}

TEST(ProcessCpuReal, ASpinningChildIsAboutOneCoreInATelemetryWindow) {
  TelemetryOptions o;
  o.interval_ms = 200;  // periodic samples scan too
  auto sampler = TelemetrySampler::Create(o);
  ASSERT_OK(sampler);
  ASSERT_OK((*sampler)->Start());
  const pid_t child = StartSpinner();
  ASSERT_GT(child, 0);
  const uint64_t w = (*sampler)->BeginWindow();
  const uint64_t samples = (*sampler)->SampleCount();
  // About 1.5 s of samples (no sleep: wait for the sampler's own samples).
  (*sampler)->AwaitSampleCount(samples + 7, 10'000);
  auto summary = (*sampler)->EndWindow(w);
  ::kill(child, SIGKILL);
  int status = 0;
  struct rusage usage {};
  ASSERT_EQ(::wait4(child, &status, 0, &usage), child);
  ASSERT_OK(summary);
  const v1::ProcessCpu* spin = nullptr;
  for (const v1::ProcessCpu& p : summary->top_processes()) {
    if (p.name() == "lockstep_spin") spin = &p;  // "_9" folded away
  }
  ASSERT_NE(spin, nullptr) << summary->DebugString();
  EXPECT_EQ(spin->pid(), static_cast<uint32_t>(child));
  EXPECT_EQ(spin->processes(), 1u);
  EXPECT_FALSE(spin->kernel_thread());
  EXPECT_NEAR(spin->cpu_pct(), spin->user_pct() + spin->system_pct(), 1e-9);
  // The child's whole life (fork to kill) is the window and a few
  // microseconds: the kernel's own account of it (wait4's rusage) gives the
  // share it had. A spinner on an idle core is at 100%; this machine's two
  // cores are shared with other builds, hence the comparison, with wide
  // bounds (10 ms ticks, the fork before the window).
  const double child_cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                             static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  const double expected_pct = child_cpu_s / summary->interval_s() * 100.0;
  EXPECT_NEAR(spin->cpu_pct(), expected_pct, 15.0) << summary->DebugString();
  EXPECT_GT(spin->cpu_pct(), 10.0) << summary->DebugString();
  EXPECT_LT(spin->cpu_pct(), 115.0) << summary->DebugString();
  std::printf("spinner: %.1f%% of one core in the window (wait4: %.1f%%; load shares the cores)\n",
              spin->cpu_pct(), expected_pct);
  EXPECT_LE(summary->top_processes_size(), 10);
}

}  // namespace
}  // namespace lockstep
