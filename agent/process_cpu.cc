#include "agent/process_cpu.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>

#include "absl/base/const_init.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"

namespace lockstep {
namespace {

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Reads a small procfs file whole (one read: stat files are a page at
// most), relative to the directory `dir_fd` (no walk from the root per file).
bool ReadSmall(int dir_fd, const std::string& rel, std::string* out) {
  const int fd = ::openat(dir_fd, rel.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[2048];  // a stat line is ~300 bytes; 52 fields of 20 digits fit
  const ssize_t n = ::read(fd, buf, sizeof(buf));
  ::close(fd);
  if (n <= 0) return false;
  out->assign(buf, static_cast<size_t>(n));
  return true;
}

uint64_t Since(uint64_t base, uint64_t last) { return last > base ? last - base : 0; }

}  // namespace

std::string FoldProcessName(std::string_view comm) {
  if (const size_t slash = comm.find('/'); slash != std::string_view::npos && slash > 0) {
    comm = comm.substr(0, slash);
  }
  bool folded = false;
  for (;;) {
    size_t i = comm.size();
    while (i > 0 && (IsDigit(comm[i - 1]) || comm[i - 1] == ':')) --i;
    if (i == comm.size()) break;  // no instance number at the end
    if (i >= 2 && (comm[i - 1] == '_' || comm[i - 1] == '-' || comm[i - 1] == '.')) {
      comm = comm.substr(0, i - 1);
      folded = true;
      continue;
    }
    // Bare digits: a CPU partition (ll_ost_io00) once a suffix went, else
    // part of the name (python3).
    if (folded && i > 0 && comm[i - 1] != ':') comm = comm.substr(0, i);
    break;
  }
  return comm.empty() ? std::string("?") : std::string(comm);
}

std::shared_ptr<const std::vector<ProcessTicks>> SharedProcessScan(const std::string& proc_root,
                                                                   int64_t max_age_ns) {
  struct Cached {
    int64_t taken_mono_ns = 0;
    std::shared_ptr<const std::vector<ProcessTicks>> scan;
  };
  static absl::Mutex mu(absl::kConstInit);
  static auto* cache = new std::map<std::string, Cached>();  // never destroyed: samplers
                                                             // may outlive static teardown
  absl::MutexLock lock(&mu);  // held while scanning: latecomers take this scan
  Cached& c = (*cache)[proc_root];
  const int64_t now = MonotonicNs();
  if (c.scan == nullptr || now - c.taken_mono_ns > max_age_ns) {
    c.scan = std::make_shared<const std::vector<ProcessTicks>>(ScanProcesses(proc_root));
    c.taken_mono_ns = MonotonicNs();
  }
  return c.scan;
}

std::vector<ProcessTicks> ScanProcesses(const std::string& proc_root) {
  std::vector<ProcessTicks> out;
  DIR* dir = ::opendir(proc_root.c_str());
  if (dir == nullptr) return out;
  std::string text, rel;
  while (const struct dirent* e = ::readdir(dir)) {
    if (!IsDigit(e->d_name[0])) continue;
    rel.assign(e->d_name).append("/stat");
    if (!ReadSmall(::dirfd(dir), rel, &text)) continue;  // ended meanwhile
    absl::StatusOr<ProcessTicks> p = ParseProcPidStat(text);
    if (p.ok()) out.push_back(std::move(*p));
  }
  ::closedir(dir);
  return out;
}

double TicksPerSecond() {
  static const double ticks = [] {
    const long t = ::sysconf(_SC_CLK_TCK);
    return t > 0 ? static_cast<double>(t) : 100.0;
  }();
  return ticks;
}

void ProcessCpuWindow::Add(const std::vector<ProcessTicks>& scan) {
  const bool baseline = !have_baseline_;
  have_baseline_ = true;
  for (const ProcessTicks& p : scan) {
    auto [it, fresh] = procs_.try_emplace({p.pid, p.start_ticks});
    Seen& s = it->second;
    if (fresh) {
      s.comm = p.comm;
      s.kernel_thread = p.kernel_thread;
      // Not in the baseline: born in the window, so all its time counts.
      if (baseline) {
        s.base_user = p.user_ticks;
        s.base_system = p.system_ticks;
      }
    }
    s.comm = p.comm;  // a process may rename itself (exec, prctl)
    s.last_user = p.user_ticks;
    s.last_system = p.system_ticks;
  }
}

std::vector<v1::ProcessCpu> ProcessCpuWindow::Top(double window_s, double ticks_per_s,
                                                  size_t limit) const {
  struct Group {
    uint64_t user = 0, system = 0, busiest = 0;
    uint32_t pid = 0, processes = 0;
    bool kernel_thread = false;
  };
  std::map<std::string, Group> groups;
  for (const auto& [key, s] : procs_) {
    Group& g = groups[FoldProcessName(s.comm)];
    const uint64_t user = Since(s.base_user, s.last_user);
    const uint64_t system = Since(s.base_system, s.last_system);
    g.user += user;
    g.system += system;
    ++g.processes;
    if (g.processes == 1 || user + system > g.busiest) {
      g.busiest = user + system;
      g.pid = key.first;
      g.kernel_thread = s.kernel_thread;
    }
  }
  std::vector<std::pair<std::string, Group>> busy;
  for (auto& [name, g] : groups) {
    if (g.user + g.system > 0) busy.emplace_back(name, g);
  }
  std::stable_sort(busy.begin(), busy.end(), [](const auto& a, const auto& b) {
    return a.second.user + a.second.system > b.second.user + b.second.system;
  });
  if (busy.size() > limit) busy.resize(limit);
  const double pct_per_tick = window_s > 0 && ticks_per_s > 0 ? 100.0 / ticks_per_s / window_s : 0;
  std::vector<v1::ProcessCpu> out;
  for (const auto& [name, g] : busy) {
    v1::ProcessCpu& p = out.emplace_back();
    p.set_name(name);
    p.set_pid(g.pid);
    p.set_processes(g.processes);
    p.set_kernel_thread(g.kernel_thread);
    p.set_user_pct(static_cast<double>(g.user) * pct_per_tick);
    p.set_system_pct(static_cast<double>(g.system) * pct_per_tick);
    p.set_cpu_pct(static_cast<double>(g.user + g.system) * pct_per_tick);
  }
  return out;
}

}  // namespace lockstep
