#include "controller/record/command_summary.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_format.h"
#include "common/command_rules.h"
#include "common/limits.h"

namespace lockstep {
namespace {

double Seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// "13.6 s", "2.35 s", "0.004 s": three figures or so.
std::string ShortSeconds(double s) {
  if (s >= 10) return absl::StrFormat("%.1f s", s);
  if (s >= 1) return absl::StrFormat("%.2f s", s);
  return absl::StrFormat("%.3f s", s);
}

// One host's line, without its label.
std::string HostFigures(const v1::TaskResult& t, uint32_t timeout_ms) {
  if (!t.has_command()) return "did not run: " + t.error();
  const v1::CommandResult& c = t.command();
  std::string out = absl::StrFormat("real %s user %s sys %s %s", TimeOfDuration(c.real_ns()),
                                    TimeOfDuration(c.user_ns()), TimeOfDuration(c.sys_ns()),
                                    CommandEnding(c, timeout_ms));
  if (CommandFailed(c)) {
    const std::string tail = LastLines(c.stderr_tail(), 2);
    out += tail.empty() ? "; stderr empty" : "; stderr: " + tail;
  }
  return out;
}

}  // namespace

void ReduceCommand(const std::vector<const v1::TaskResult*>& tasks, uint32_t rep,
                   v1::PhaseRecord* pr) {
  std::vector<double> real, user, sys;
  uint32_t failed = 0;
  for (const v1::TaskResult* t : tasks) {
    if (!t->has_command()) {
      ++failed;  // it did not run
      continue;
    }
    const v1::CommandResult& c = t->command();
    real.push_back(Seconds(c.real_ns()));
    user.push_back(Seconds(c.user_ns()));
    sys.push_back(Seconds(c.sys_ns()));
    failed += CommandFailed(c) ? 1 : 0;
  }
  v1::CommandSummary* s = pr->mutable_command();
  s->set_hosts(static_cast<uint32_t>(tasks.size()));
  s->set_failed(failed);
  if (!real.empty()) {
    s->set_real_min_s(*std::min_element(real.begin(), real.end()));
    s->set_real_max_s(*std::max_element(real.begin(), real.end()));
  }
  s->set_real_median_s(Median(real));
  s->set_user_median_s(Median(user));
  s->set_sys_median_s(Median(sys));
  v1::IterationRow* row = pr->mutable_row();
  row->set_access("command");
  row->set_iter(rep);
  row->set_wrrd_s(s->real_max_s());
  row->set_total_s(s->real_max_s());
}

std::string TimeOfDuration(int64_t duration_ns) {
  const int64_t ms = (std::max<int64_t>(duration_ns, 0) + 500'000) / 1'000'000;  // rounded
  return absl::StrFormat("%dm%d.%03ds", ms / 60'000, (ms / 1000) % 60, ms % 1000);
}

std::vector<std::string> CommandReportLines(const v1::PhaseRecord& pr,
                                            const std::map<std::string, std::string>& host_by_address) {
  std::vector<std::string> out;
  const uint32_t timeout_ms = pr.spec().command_timeout_ms() == 0 ? kDefaultCommandTimeoutMs
                                                                  : pr.spec().command_timeout_ms();
  auto host_of = [&](const std::string& address) {
    auto it = host_by_address.find(address);
    return it == host_by_address.end() || it->second.empty() ? address : it->second;
  };
  std::set<std::string> seen, shared;
  for (const v1::AgentPhaseRecord& a : pr.agents()) {
    if (a.role() != v1::CLIENT) continue;
    if (!seen.insert(host_of(a.address())).second) shared.insert(host_of(a.address()));
  }
  for (const v1::AgentPhaseRecord& a : pr.agents()) {
    if (a.role() != v1::CLIENT) continue;
    const std::string host = host_of(a.address());
    const std::string label = shared.count(host) ? a.address() : host;
    if (a.tasks_size() == 0) {
      out.push_back(absl::StrFormat("%s: no result: %s", label, a.error()));
      continue;
    }
    for (const v1::TaskResult& t : a.tasks()) {
      out.push_back(absl::StrFormat("%s: %s", label, HostFigures(t, timeout_ms)));
    }
  }
  const v1::CommandSummary& s = pr.command();
  const std::string program =
      pr.spec().command_argv_size() > 0 ? CommandBaseName(pr.spec().command_argv(0)) : "?";
  out.push_back(absl::StrFormat("command %s: %u host%s, real min %s median %s max %s, %u failed",
                                program, s.hosts(), s.hosts() == 1 ? "" : "s",
                                ShortSeconds(s.real_min_s()), ShortSeconds(s.real_median_s()),
                                ShortSeconds(s.real_max_s()), s.failed()));
  return out;
}

}  // namespace lockstep
