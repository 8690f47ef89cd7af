#include "agent/procfs.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace lockstep {
std::vector<absl::string_view> TextFields(absl::string_view line) {
  return absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
}

std::vector<absl::string_view> TextLines(absl::string_view text) {
  return absl::StrSplit(text, '\n', absl::SkipWhitespace());
}

absl::Status BadTextLine(absl::string_view what, absl::string_view line, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: cannot parse line \"%s\": %s", what, line, why));
}

namespace {

bool ToU64(absl::string_view s, uint64_t* out) { return absl::SimpleAtoi(s, out); }

}  // namespace

absl::StatusOr<ProcStat> ParseProcStat(std::string_view std_text) {
  absl::string_view text(std_text.data(), std_text.size());
  ProcStat out;
  bool have_cpu = false;
  for (absl::string_view line : TextLines(text)) {
    if (!absl::StartsWith(line, "cpu")) continue;
    std::vector<absl::string_view> f = TextFields(line);
    if (f[0] == "cpu") {
      // user nice system idle iowait irq softirq steal guest guest_nice; the
      // last ones are missing on old kernels.
      if (f.size() < 5) return BadTextLine("/proc/stat", line, "fewer than 4 cpu times");
      uint64_t v[10] = {0};
      for (size_t i = 1; i < f.size() && i <= 10; ++i) {
        if (!ToU64(f[i], &v[i - 1])) {
          return BadTextLine("/proc/stat", line, absl::StrFormat("field %d is not a number", i));
        }
      }
      out.cpu = CpuTimes{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]};
      have_cpu = true;
    } else if (f[0].size() > 3 && std::isdigit(static_cast<unsigned char>(f[0][3]))) {
      ++out.cores;
    }
  }
  if (!have_cpu) {
    return absl::InvalidArgumentError("/proc/stat: no aggregate \"cpu \" line");
  }
  return out;
}

CpuPercent CpuPercentBetween(const CpuTimes& before, const CpuTimes& after) {
  auto d = [](uint64_t a, uint64_t b) { return b > a ? static_cast<double>(b - a) : 0.0; };
  CpuPercent p;
  double user = d(before.user, after.user), nice = d(before.nice, after.nice),
         system = d(before.system, after.system), idle = d(before.idle, after.idle),
         iowait = d(before.iowait, after.iowait), irq = d(before.irq, after.irq),
         softirq = d(before.softirq, after.softirq), steal = d(before.steal, after.steal);
  double total = user + nice + system + idle + iowait + irq + softirq + steal;
  if (total <= 0) return p;
  auto pct = [total](double v) { return v * 100.0 / total; };  // exactly 100 when v == total
  p.user = pct(user);
  p.nice = pct(nice);
  p.system = pct(system);
  p.idle = pct(idle);
  p.iowait = pct(iowait);
  p.irq = pct(irq);
  p.softirq = pct(softirq);
  p.steal = pct(steal);
  return p;
}

absl::StatusOr<ProcessTicks> ParseProcPidStat(std::string_view std_text) {
  absl::string_view text = absl::StripAsciiWhitespace(absl::string_view(std_text.data(), std_text.size()));
  const size_t open = text.find(" (");
  const size_t close = text.rfind(')');
  ProcessTicks out;
  if (open == absl::string_view::npos || close == absl::string_view::npos || close < open ||
      !absl::SimpleAtoi(text.substr(0, open), &out.pid)) {
    return BadTextLine("/proc/PID/stat", text, "expected \"PID (COMM) STATE ...\"");
  }
  out.comm = std::string(text.substr(open + 2, close - open - 2));
  // Fields after the comm, from field 3 (state): flags is field 9, utime
  // 14, stime 15, starttime 22 (proc(5)).
  std::vector<absl::string_view> f = TextFields(text.substr(close + 1));
  uint64_t flags = 0;
  if (f.size() < 20 || !ToU64(f[6], &flags) || !ToU64(f[11], &out.user_ticks) ||
      !ToU64(f[12], &out.system_ticks) || !ToU64(f[19], &out.start_ticks)) {
    return BadTextLine("/proc/PID/stat", text,
                       "fewer than 22 fields, or flags/utime/stime/starttime not numbers");
  }
  out.kernel_thread = (flags & kPfKthread) != 0;
  return out;
}

absl::StatusOr<LoadAvgSample> ParseLoadAvg(std::string_view std_text) {
  absl::string_view text(std_text.data(), std_text.size());
  absl::string_view line = absl::StripAsciiWhitespace(text);
  std::vector<absl::string_view> f = TextFields(line);
  LoadAvgSample out;
  if (f.size() < 4 || !absl::SimpleAtod(f[0], &out.load1) ||
      !absl::SimpleAtod(f[1], &out.load5) || !absl::SimpleAtod(f[2], &out.load15)) {
    return BadTextLine("/proc/loadavg", line, "expected \"L1 L5 L15 R/T LASTPID\"");
  }
  std::pair<absl::string_view, absl::string_view> rt = absl::StrSplit(f[3], '/');
  if (!absl::SimpleAtoi(rt.first, &out.running) || !absl::SimpleAtoi(rt.second, &out.threads)) {
    return BadTextLine("/proc/loadavg", line, "4th field is not R/T");
  }
  return out;
}

absl::StatusOr<MemInfoSample> ParseMemInfo(std::string_view std_text) {
  absl::string_view text(std_text.data(), std_text.size());
  MemInfoSample out;
  bool dirty = false, writeback = false;
  for (absl::string_view line : TextLines(text)) {
    // Two lines of some fifty are wanted: split only those.
    if (!absl::StartsWith(line, "Dirty:") && !absl::StartsWith(line, "Writeback:")) continue;
    std::vector<absl::string_view> f = TextFields(line);
    if (f.size() < 2) continue;
    uint64_t* dst = nullptr;
    if (f[0] == "Dirty:") {
      dst = &out.dirty_bytes;
      dirty = true;
    } else if (f[0] == "Writeback:") {
      dst = &out.writeback_bytes;
      writeback = true;
    } else {
      continue;
    }
    uint64_t v;
    if (!ToU64(f[1], &v)) return BadTextLine("/proc/meminfo", line, "value is not a number");
    uint64_t mult = 1;
    if (f.size() > 2) {
      if (f[2] == "kB") {
        mult = 1024;
      } else {
        return BadTextLine("/proc/meminfo", line, "unit is not kB");
      }
    }
    *dst = v * mult;
  }
  if (!dirty || !writeback) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "/proc/meminfo: no %s line", !dirty ? "\"Dirty:\"" : "\"Writeback:\""));
  }
  return out;
}

absl::StatusOr<std::vector<DiskCounters>> ParseDiskStats(std::string_view std_text) {
  absl::string_view text(std_text.data(), std_text.size());
  std::vector<DiskCounters> out;
  for (absl::string_view line : TextLines(text)) {
    std::vector<absl::string_view> f = TextFields(line);
    DiskCounters d;
    if (f.size() == 7) {
      // Partition lines of 2.6.x kernels: reads read_sectors writes write_sectors.
      d.device = std::string(f[2]);
      if (!ToU64(f[3], &d.reads) || !ToU64(f[4], &d.read_sectors) ||
          !ToU64(f[5], &d.writes) || !ToU64(f[6], &d.write_sectors)) {
        return BadTextLine("/proc/diskstats", line, "a counter is not a number");
      }
      out.push_back(std::move(d));
      continue;
    }
    if (f.size() < 14) {
      return BadTextLine("/proc/diskstats", line,
                     absl::StrFormat("%d fields, expected 14, 18 or 20", f.size()));
    }
    d.device = std::string(f[2]);
    uint64_t merged;
    if (!ToU64(f[3], &d.reads) || !ToU64(f[4], &merged) || !ToU64(f[5], &d.read_sectors) ||
        !ToU64(f[6], &d.read_ms) || !ToU64(f[7], &d.writes) || !ToU64(f[8], &merged) ||
        !ToU64(f[9], &d.write_sectors) || !ToU64(f[10], &d.write_ms) ||
        !ToU64(f[11], &d.in_flight) || !ToU64(f[12], &d.io_ms)) {
      return BadTextLine("/proc/diskstats", line, "a counter is not a number");
    }
    out.push_back(std::move(d));
  }
  return out;
}

absl::StatusOr<std::vector<NetCounters>> ParseNetDev(std::string_view std_text) {
  absl::string_view text(std_text.data(), std_text.size());
  std::vector<NetCounters> out;
  for (absl::string_view line : TextLines(text)) {
    if (line.find('|') != absl::string_view::npos) continue;  // the two header lines
    size_t colon = line.find(':');
    if (colon == absl::string_view::npos) {
      return BadTextLine("/proc/net/dev", line, "no \"iface:\" prefix");
    }
    NetCounters n;
    n.iface = std::string(absl::StripAsciiWhitespace(line.substr(0, colon)));
    std::vector<absl::string_view> f = TextFields(line.substr(colon + 1));
    if (f.size() < 16) {
      return BadTextLine("/proc/net/dev", line,
                         absl::StrFormat("%d counters, expected 16", f.size()));
    }
    uint64_t v[16];
    for (int i = 0; i < 16; ++i) {
      if (!ToU64(f[i], &v[i])) {
        return BadTextLine("/proc/net/dev", line, "a counter is not a number");
      }
    }
    n.rx_bytes = v[0];
    n.rx_packets = v[1];
    n.rx_errs = v[2];
    n.rx_drop = v[3];
    n.tx_bytes = v[8];
    n.tx_packets = v[9];
    n.tx_errs = v[10];
    n.tx_drop = v[11];
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace lockstep
