#include "controller/iozone/iozone_output.h"

#include <algorithm>
#include <climits>

#include "absl/strings/str_format.h"

namespace lockstep {
namespace {

constexpr double kKb = 1024.0;
constexpr double kTimeResolutionSeconds = 0.000001;  // IOzone's floor for a time

// IOzone 3.4's "Children see" / "Parent sees" line of `test`: the noun, the
// width of the count and the tabs before '=' differ from test to test.
std::string ThroughputLine(const char* who, IozoneTest test, uint32_t n, double kbps) {
  switch (test) {
    case IozoneTest::kInitialWrite:
      return absl::StrFormat("\t%s throughput for %2u initial writers \t= %10.2f kB/sec\n", who, n,
                             kbps);
    case IozoneTest::kRewrite:
      return absl::StrFormat("\t%s throughput for %2u rewriters \t= %10.2f kB/sec\n", who, n, kbps);
    case IozoneTest::kRead:
      return absl::StrFormat("\t%s throughput for %2u readers \t\t= %10.2f kB/sec\n", who, n, kbps);
    case IozoneTest::kReread:
      return absl::StrFormat("\t%s throughput for %u re-readers \t= %10.2f kB/sec\n", who, n, kbps);
    case IozoneTest::kRandomRead:
      return absl::StrFormat("\t%s throughput for %u random readers \t= %10.2f kB/sec\n", who, n,
                             kbps);
    case IozoneTest::kRandomWrite:
      return absl::StrFormat("\t%s throughput for %u random writers \t= %10.2f kB/sec\n", who, n,
                             kbps);
  }
  return "";
}

// The attempt of `phase` that counts: the last one recorded for it.
const v1::PhaseRecord* LastAttempt(const v1::TestRecord& test, const std::string& phase) {
  const v1::PhaseRecord* last = nullptr;
  for (const v1::PhaseRecord& p : test.phases()) {
    if (p.phase() == phase) last = &p;
  }
  return last;
}

// One agent's tasks as IOzone's children; `*first_start`/`*last_end` widen
// to cover them (controller clock, ns).
void AgentChildren(const v1::AgentPhaseRecord& agent, bool stonewall, bool include_close,
                   int64_t* first_start, int64_t* last_end, std::vector<IozoneChild>* out) {
  // The agent's first end: its tasks compared their transfers with it.
  int64_t first_end = INT64_MAX;
  bool measured = false;
  for (const v1::TaskResult& t : agent.tasks()) {
    first_end = std::min(first_end, t.close_stop_unix_ns());
    measured = measured || t.bytes_at_first_done() > 0;
  }
  for (const v1::TaskResult& t : agent.tasks()) {
    const int64_t own_end = include_close ? t.close_stop_unix_ns() : t.rdwr_stop_unix_ns();
    const bool stopped = stonewall && measured && t.bytes_at_first_done() < t.bytes();
    const uint64_t bytes = stopped ? t.bytes_at_first_done() : t.bytes();
    const int64_t end = stopped ? std::max(first_end, t.rdwr_start_unix_ns()) : own_end;
    out->push_back({bytes / kKb, static_cast<double>(end - t.rdwr_start_unix_ns()) / 1e9});
    *first_start = std::min(*first_start, t.rdwr_start_unix_ns());
    *last_end = std::max(*last_end, end);
  }
}

}  // namespace

const char* IozoneTestNoun(IozoneTest test) {
  switch (test) {
    case IozoneTest::kInitialWrite: return "initial writers";
    case IozoneTest::kRewrite: return "rewriters";
    case IozoneTest::kRead: return "readers";
    case IozoneTest::kReread: return "re-readers";
    case IozoneTest::kRandomRead: return "random readers";
    case IozoneTest::kRandomWrite: return "random writers";
  }
  return "";
}

IozoneFigures ReduceIozone(const std::vector<IozoneChild>& children, double parent_seconds) {
  IozoneFigures f;
  f.children = static_cast<uint32_t>(children.size());
  double ptotal_kb = 0;
  for (size_t i = 0; i < children.size(); ++i) {
    const IozoneChild& c = children[i];
    const double kbps = c.actual_kb / std::max(c.seconds, kTimeResolutionSeconds);
    f.children_see_kbps += kbps;
    ptotal_kb += c.actual_kb;
    f.min_kbps = i == 0 ? kbps : std::min(f.min_kbps, kbps);
    f.max_kbps = std::max(f.max_kbps, kbps);
    f.min_xfer_kb = i == 0 ? c.actual_kb : std::min(f.min_xfer_kb, c.actual_kb);
  }
  if (!children.empty()) f.avg_kbps = f.children_see_kbps / static_cast<double>(children.size());
  f.parent_sees_kbps = ptotal_kb / std::max(parent_seconds, kTimeResolutionSeconds);
  return f;
}

std::string FormatIozoneTest(IozoneTest test, const IozoneFigures& f, bool threads) {
  const char* port = threads ? "thread" : "process";
  std::string s = "\n";
  s += ThroughputLine("Children see", test, f.children, f.children_see_kbps);
  s += ThroughputLine("Parent sees", test, f.children, f.parent_sees_kbps);
  s += absl::StrFormat("\tMin throughput per %s \t\t\t= %10.2f kB/sec \n", port, f.min_kbps);
  s += absl::StrFormat("\tMax throughput per %s \t\t\t= %10.2f kB/sec\n", port, f.max_kbps);
  s += absl::StrFormat("\tAvg throughput per %s \t\t\t= %10.2f kB/sec\n", port, f.avg_kbps);
  s += absl::StrFormat("\tMin xfer \t\t\t\t\t= %10.2f kB\n", f.min_xfer_kb);
  return s;
}

std::vector<IozoneChild> IozoneChildrenOf(const v1::PhaseRecord& phase, bool stonewall,
                                          bool include_close, double* parent_seconds) {
  std::vector<IozoneChild> out;
  int64_t first_start = INT64_MAX, last_end = INT64_MIN;
  for (const v1::AgentPhaseRecord& a : phase.agents()) {
    AgentChildren(a, stonewall, include_close, &first_start, &last_end, &out);
  }
  *parent_seconds = out.empty() ? 0 : static_cast<double>(last_end - first_start) / 1e9;
  return out;
}

std::string FormatIozoneReport(const IozoneCommandInfo& info, const v1::RunRecord& record) {
  std::string s = "\tIozone: Performance Test of File I/O\n"
                  "\t        run by lockstep iozone on lockstep agents\n\n";
  for (const std::string& line : info.splash) s += line;
  s += absl::StrFormat("\tCommand line used: %s\n", info.command_line);
  s += "\tOutput is in kBytes/sec\n";
  const char* port = info.threads ? "thread" : "process";
  s += absl::StrFormat("\tThroughput test with %u %s%s\n", info.children, port,
                       info.children > 1 ? (info.threads ? "s" : "es") : "");
  s += absl::StrFormat("\tEach %s writes a %u kByte file in %u kByte records\n", port,
                       info.file_kb, info.record_kb);
  if (record.tests_size() > 0) {
    for (const auto& [test, phase] : info.tests) {
      const v1::PhaseRecord* p = LastAttempt(record.tests(0), phase);
      if (p == nullptr) continue;
      double parent_seconds = 0;
      const std::vector<IozoneChild> children =
          IozoneChildrenOf(*p, info.stonewall, info.include_close, &parent_seconds);
      s += FormatIozoneTest(test, ReduceIozone(children, parent_seconds), info.threads);
    }
  }
  s += "\n\n\niozone test complete.\n";
  return s;
}

std::string IozoneMinXferNote(const IozoneCommandInfo& info) {
  if (!info.stonewall) return "# lockstep iozone: -x: no stonewalling; every child's whole file counts\n";
  if (info.agents <= 1) {
    return "# lockstep iozone: stonewalling as IOzone: each child counts what it moved until the "
           "first child ended (exact: one agent)\n";
  }
  return absl::StrFormat(
      "# lockstep iozone: stonewalling per agent: each child counts what it moved until the first "
      "child of its own agent ended (%u agents; exact within an agent, not across agents)\n",
      info.agents);
}

absl::Status IozoneReportObserver::OnPhaseDone(const v1::PhaseRecord& phase) {
  agents_.Keep(phase);
  return absl::OkStatus();
}

absl::Status IozoneReportObserver::OnRunEnd(const v1::RunRecord& run, const std::string&) {
  if (run.tests_size() > 0) {
    out_->Print(FormatIozoneReport(info_, agents_.Full(run)) + IozoneMinXferNote(info_));
  }
  return absl::OkStatus();
}

v1::IozoneReportInfo IozoneReportInfoOf(const IozoneCommandInfo& info) {
  v1::IozoneReportInfo r;
  for (const std::string& line : info.splash) r.add_splash(line);
  r.set_children(info.children);
  r.set_file_kb(info.file_kb);
  r.set_record_kb(info.record_kb);
  r.set_threads(info.threads);
  r.set_stonewall(info.stonewall);
  r.set_include_close(info.include_close);
  r.set_agents(info.agents);
  for (const auto& [test, phase] : info.tests) {
    v1::IozoneReportInfo::Test* t = r.add_tests();
    t->set_test(static_cast<uint32_t>(test));
    t->set_phase(phase);
  }
  return r;
}

IozoneCommandInfo IozoneCommandInfoOf(const v1::IozoneReportInfo& r,
                                      const std::string& command_line) {
  IozoneCommandInfo info;
  info.command_line = command_line;
  info.splash.assign(r.splash().begin(), r.splash().end());
  info.children = r.children();
  info.file_kb = r.file_kb();
  info.record_kb = r.record_kb();
  info.threads = r.threads();
  info.stonewall = r.stonewall();
  info.include_close = r.include_close();
  info.agents = r.agents();
  for (const v1::IozoneReportInfo::Test& t : r.tests()) {
    if (t.test() > static_cast<uint32_t>(IozoneTest::kRandomWrite)) continue;  // a later version's
    info.tests.emplace_back(static_cast<IozoneTest>(t.test()), t.phase());
  }
  return info;
}

}  // namespace lockstep
