#include "agent/fs/ceph_daemons.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/fs/admin_socket.h"
#include "agent/procfs.h"
#include "common/clock.h"
#include "common/files.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace lockstep {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

absl::StatusOr<Struct> ParseJson(const std::string& text, const std::string& what) {
  Struct out;
  google::protobuf::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = true;
  auto s = google::protobuf::util::JsonStringToMessage(text, &out, opts);
  if (!s.ok()) {
    return absl::InternalError(absl::StrFormat("%s: not JSON (%s): %.80s", what,
                                               std::string(s.message()), text));
  }
  return out;
}

const Struct* Section(const Struct& s, const char* name) {
  auto it = s.fields().find(name);
  if (it == s.fields().end() || !it->second.has_struct_value()) return nullptr;
  return &it->second.struct_value();
}

double Number(const Struct* s, const char* name) {
  if (s == nullptr) return 0;
  auto it = s->fields().find(name);
  return it == s->fields().end() ? 0 : it->second.number_value();
}

// A latency counter: {"avgcount": N, "sum": SECONDS, ...}.
void Latency(const Struct* s, const char* name, double* sum_s, double* count) {
  if (s == nullptr) return;
  auto it = s->fields().find(name);
  if (it == s->fields().end() || !it->second.has_struct_value()) return;
  *sum_s = Number(&it->second.struct_value(), "sum");
  *count = Number(&it->second.struct_value(), "avgcount");
}

std::string TypeOf(const std::string& daemon) {
  return daemon.substr(0, daemon.find('.'));
}

double MeanMs(double sum1, double n1, double sum0, double n0) {
  const double n = n1 - n0;
  return n > 0 ? (sum1 - sum0) / n * 1e3 : 0;
}

}  // namespace

CephDaemons::CephDaemons(CephDaemonOptions options) : options_(std::move(options)) {
  absl::MutexLock lock(&mu_);
  pid_files_.resize(options_.daemons.size());
  last_pids_.resize(options_.daemons.size());
}

CephDaemons::~CephDaemons() = default;

uint32_t CephDaemons::PidOf(size_t i) {
  std::string pid_file;
  {
    absl::MutexLock lock(&mu_);
    pid_file = pid_files_[i];
  }
  const std::string& name = options_.daemons[i];
  if (pid_file.empty()) {
    auto answer = AdminSocketCommand(
        AdminSocketPath(options_.admin_socket, options_.cluster, name),
        R"({"prefix": "config get", "var": "pid_file"})", options_.quick_timeout);
    if (!answer.ok()) return 0;
    auto json = ParseJson(*answer, name + " config get pid_file");
    if (!json.ok()) return 0;
    auto it = json->fields().find("pid_file");
    if (it == json->fields().end() || it->second.string_value().empty()) return 0;
    pid_file = it->second.string_value();
    absl::MutexLock lock(&mu_);
    pid_files_[i] = pid_file;
  }
  auto text = ReadFileToString(pid_file);
  uint32_t pid = 0;
  if (!text.ok() || !absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &pid)) return 0;
  absl::MutexLock lock(&mu_);
  last_pids_[i] = pid;
  return pid;
}

CephDaemons::Snapshot CephDaemons::Take(size_t i) {
  const std::string& name = options_.daemons[i];
  const std::string socket = AdminSocketPath(options_.admin_socket, options_.cluster, name);
  Snapshot snap;
  snap.mono_ns = MonotonicNs();
  auto answer = AdminSocketCommand(socket, R"({"prefix": "perf dump"})", options_.timeout);
  if (!answer.ok()) {
    snap.warning = std::string(answer.status().message());
  } else if (auto json = ParseJson(*answer, name + " perf dump"); !json.ok()) {
    snap.warning = std::string(json.status().message());
  } else {
    snap.answered = true;
    const std::string type = TypeOf(name);
    if (type == "osd") {
      const Struct* osd = Section(*json, "osd");
      snap.ops = Number(osd, "op");
      snap.write_ops = Number(osd, "op_w") + Number(osd, "op_rw");
      snap.read_ops = Number(osd, "op_r");
      snap.in_bytes = Number(osd, "op_in_bytes");
      snap.out_bytes = Number(osd, "op_out_bytes");
      Latency(osd, "op_w_latency", &snap.write_lat_s, &snap.write_lat_n);
      Latency(osd, "op_r_latency", &snap.read_lat_s, &snap.read_lat_n);
      Latency(osd, "op_latency", &snap.op_lat_s, &snap.op_lat_n);
    } else if (type == "mds") {
      const Struct* mds = Section(*json, "mds");
      snap.ops = Number(mds, "request");
      Latency(mds, "reply_latency", &snap.op_lat_s, &snap.op_lat_n);
    }
  }
  // The pid: from the last known pid file even when the socket is gone.
  snap.pid = PidOf(i);
  if (snap.pid == 0) {
    absl::MutexLock lock(&mu_);
    snap.pid = last_pids_[i];
  }
  if (snap.pid != 0) {
    auto stat = ReadFileToString(absl::StrFormat("%s/%u/stat", options_.proc_root, snap.pid));
    auto parsed = stat.ok() ? ParseProcPidStat(*stat) : stat.status();
    if (parsed.ok()) {
      snap.alive = true;
      snap.cpu_ticks = parsed->user_ticks + parsed->system_ticks;
    }
    auto status = ReadFileToString(absl::StrFormat("%s/%u/status", options_.proc_root, snap.pid));
    if (status.ok()) {
      for (absl::string_view line : absl::StrSplit(*status, '\n')) {
        if (!absl::ConsumePrefix(&line, "VmRSS:")) continue;
        uint64_t kib = 0;
        if (absl::SimpleAtoi(absl::StripSuffix(absl::StripAsciiWhitespace(line), " kB"), &kib)) {
          snap.rss_bytes = kib * 1024;
        }
      }
    }
  }
  return snap;
}

std::vector<v1::DaemonFacts> CephDaemons::Facts() {
  std::vector<v1::DaemonFacts> out;
  for (size_t i = 0; i < options_.daemons.size(); ++i) {
    v1::DaemonFacts f;
    f.set_name(options_.daemons[i]);
    f.set_admin_socket(AdminSocketPath(options_.admin_socket, options_.cluster, f.name()));
    auto answer = AdminSocketCommand(f.admin_socket(), R"({"prefix": "version"})",
                                     options_.quick_timeout);
    auto json = answer.ok() ? ParseJson(*answer, f.name() + " version") : answer.status();
    if (!json.ok()) {
      f.set_warning(absl::StrFormat("%s is configured ([ceph] daemons) but did not answer: %s",
                                    f.name(), json.status().message()));
    } else if (auto it = json->fields().find("version"); it != json->fields().end()) {
      f.set_version(it->second.string_value());
    }
    f.set_pid(PidOf(i));
    out.push_back(std::move(f));
  }
  return out;
}

uint64_t CephDaemons::BeginWindow() {
  std::vector<Snapshot> snaps;
  for (size_t i = 0; i < options_.daemons.size(); ++i) snaps.push_back(Take(i));
  absl::MutexLock lock(&mu_);
  const uint64_t id = next_window_++;
  windows_[id] = std::move(snaps);
  // A window never ended (a phase that failed before its end) must not grow
  // the map without bound.
  while (windows_.size() > 64) windows_.erase(windows_.begin());
  return id;
}

std::vector<v1::DaemonStats> CephDaemons::EndWindow(uint64_t id) {
  std::vector<Snapshot> first;
  {
    absl::MutexLock lock(&mu_);
    auto it = windows_.find(id);
    if (it == windows_.end()) return {};
    first = std::move(it->second);
    windows_.erase(it);
  }
  static const double kTicksPerSecond = static_cast<double>(::sysconf(_SC_CLK_TCK));
  std::vector<v1::DaemonStats> out;
  for (size_t i = 0; i < options_.daemons.size(); ++i) {
    const Snapshot& a = first[i];
    const Snapshot b = Take(i);
    v1::DaemonStats d;
    d.set_name(options_.daemons[i]);
    d.set_pid(b.pid);
    d.set_running(b.alive);
    d.set_rss_bytes(b.rss_bytes);
    const double seconds = (b.mono_ns - a.mono_ns) / 1e9;
    if (a.alive && b.alive && a.pid == b.pid && seconds > 0) {
      d.set_cpu_pct((b.cpu_ticks - std::min(a.cpu_ticks, b.cpu_ticks)) / kTicksPerSecond /
                    seconds * 100.0);
    }
    if (a.answered && b.answered) {
      auto delta = [](double x1, double x0) { return static_cast<uint64_t>(std::max(0.0, x1 - x0)); };
      d.set_ops(delta(b.ops, a.ops));
      d.set_write_ops(delta(b.write_ops, a.write_ops));
      d.set_read_ops(delta(b.read_ops, a.read_ops));
      d.set_in_bytes(delta(b.in_bytes, a.in_bytes));
      d.set_out_bytes(delta(b.out_bytes, a.out_bytes));
      d.set_write_latency_ms(MeanMs(b.write_lat_s, b.write_lat_n, a.write_lat_s, a.write_lat_n));
      d.set_read_latency_ms(MeanMs(b.read_lat_s, b.read_lat_n, a.read_lat_s, a.read_lat_n));
      d.set_op_latency_ms(MeanMs(b.op_lat_s, b.op_lat_n, a.op_lat_s, a.op_lat_n));
    }
    if (!b.alive) {
      d.set_warning(b.pid == 0
                        ? absl::StrFormat("%s: no pid known and no answer: %s", d.name(), b.warning)
                        : absl::StrFormat("%s (pid %u) is not running at the phase's end%s",
                                          d.name(), b.pid,
                                          a.alive ? "; it died during the phase" : ""));
    } else if (a.alive && a.pid != b.pid && a.pid != 0) {
      d.set_warning(absl::StrFormat("%s restarted during the phase (pid %u -> %u); its counters "
                                    "start again from zero",
                                    d.name(), a.pid, b.pid));
    } else if (!b.answered || !a.answered) {
      d.set_warning(absl::StrFormat("%s: no counters: %s", d.name(),
                                    b.answered ? a.warning : b.warning));
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<CephDaemons::CacheDrop> CephDaemons::DropCaches(int64_t* duration_ns) {
  const int64_t t0 = MonotonicNs();
  std::vector<CacheDrop> out;
  for (const std::string& name : options_.daemons) {
    const std::string type = TypeOf(name);
    if (type != "osd" && type != "mds") continue;  // mon/mgr hold no file data
    std::string command = R"({"prefix": "cache drop"})";
    absl::Duration timeout = options_.timeout;
    if (type == "mds") {
      command = absl::StrFormat(R"({"prefix": "cache drop", "timeout": %u})",
                                options_.mds_cache_drop_timeout_s);
      timeout += absl::Seconds(options_.mds_cache_drop_timeout_s);
    }
    const int64_t t1 = MonotonicNs();
    auto answer = AdminSocketCommand(
        AdminSocketPath(options_.admin_socket, options_.cluster, name), command, timeout);
    if (answer.ok()) {
      out.push_back({absl::StrFormat("%s %.0f ms", name, (MonotonicNs() - t1) / 1e6), true});
    } else {
      out.push_back(
          {absl::StrFormat("%s: cache not dropped: %s", name, answer.status().message()), false});
    }
  }
  *duration_ns = MonotonicNs() - t0;
  return out;
}

std::vector<std::string> CephDaemons::Down() {
  std::vector<std::string> out;
  for (size_t i = 0; i < options_.daemons.size(); ++i) {
    uint32_t pid;
    {
      absl::MutexLock lock(&mu_);
      pid = last_pids_[i];
    }
    if (pid == 0) pid = PidOf(i);  // first time: one quick socket call
    const std::string& name = options_.daemons[i];
    if (pid == 0) {
      out.push_back(absl::StrFormat("%s: no pid known (is it running? its admin socket %s)", name,
                                    AdminSocketPath(options_.admin_socket, options_.cluster,
                                                    name)));
      continue;
    }
    auto stat = ReadFileToString(absl::StrFormat("%s/%u/stat", options_.proc_root, pid));
    if (!stat.ok()) {
      // It may have been restarted under a new pid: look again once.
      uint32_t now = PidOf(i);
      if (now != 0 && now != pid &&
          ReadFileToString(absl::StrFormat("%s/%u/stat", options_.proc_root, now)).ok()) {
        continue;
      }
      out.push_back(absl::StrFormat("%s (pid %u) is not running", name, pid));
      continue;
    }
    // The state letter follows the ")" that ends the comm.
    const size_t paren = stat->rfind(')');
    if (paren != std::string::npos && paren + 2 < stat->size() &&
        ((*stat)[paren + 2] == 'T' || (*stat)[paren + 2] == 't')) {
      out.push_back(absl::StrFormat("%s (pid %u) is stopped (SIGSTOP or a debugger)", name, pid));
    }
  }
  return out;
}

std::vector<std::string> CephDaemons::Osds() const {
  std::vector<std::string> out;
  for (const std::string& d : options_.daemons) {
    if (absl::StartsWith(d, "osd.")) out.push_back(d);
  }
  return out;
}

absl::Status CephDaemons::Answers(const std::string& daemon) {
  const std::string socket = AdminSocketPath(options_.admin_socket, options_.cluster, daemon);
  auto answer = AdminSocketCommand(socket, R"({"prefix": "version"})", options_.timeout);
  if (answer.ok()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s's admin socket does not answer: %s; start the daemon, or let the agent use %s (run it "
      "as root or as a member of the socket's group)",
      daemon, answer.status().message(), socket));
}

absl::StatusOr<CephDaemons::OsdBench> CephDaemons::BenchOsd(const std::string& osd, uint64_t bytes,
                                                            uint64_t block_bytes,
                                                            absl::Duration timeout) {
  if (std::find(options_.daemons.begin(), options_.daemons.end(), osd) == options_.daemons.end()) {
    return absl::NotFoundError(absl::StrFormat(
        "%s is not among this agent's [ceph] daemons", osd));
  }
  const std::string socket = AdminSocketPath(options_.admin_socket, options_.cluster, osd);
  const std::string command = absl::StrFormat(R"({"prefix": "bench", "count": %u, "size": %u})",
                                              bytes, block_bytes);
  auto answer = AdminSocketCommand(socket, command, timeout);
  if (!answer.ok()) {
    return absl::Status(answer.status().code(),
                        absl::StrFormat("%s bench: %s", osd, answer.status().message()));
  }
  auto json = ParseJson(*answer, osd + " bench");
  if (!json.ok() || !json->fields().contains("bytes_per_sec")) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s refused its bench of %u bytes in blocks of %u (socket %s): %.300s", osd, bytes,
        block_bytes, socket, absl::StripAsciiWhitespace(*answer)));
  }
  OsdBench b;
  b.bytes = static_cast<uint64_t>(Number(&*json, "bytes_written"));
  b.block_bytes = static_cast<uint64_t>(Number(&*json, "blocksize"));
  b.seconds = Number(&*json, "elapsed_sec");
  b.bytes_per_sec = Number(&*json, "bytes_per_sec");
  b.iops = Number(&*json, "iops");
  return b;
}

}  // namespace lockstep
