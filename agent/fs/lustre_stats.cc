#include "agent/fs/lustre_stats.h"

#include <filesystem>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/procfs.h"
#include "common/files.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

// The Lustre stats files sampled: <root>/<type>/<instance>/<file>.
struct LustreStatsFile {
  const char* type;
  const char* file;
  bool rpc_stats;
};
constexpr LustreStatsFile kLustreStatsFiles[] = {
    {"obdfilter", "stats", false},
    {"mdt", "md_stats", false},
    {"llite", "stats", false},
    {"osc", "rpc_stats", true},
};

bool ParseSnapshotTime(const std::vector<absl::string_view>& f, double* out) {
  if (f.size() < 2) return false;
  absl::string_view name = absl::StripSuffix(f[0], ":");
  if (name != "snapshot_time") return false;
  return absl::SimpleAtod(f[1], out);
}

bool ParseBucket(absl::string_view s, uint64_t* out) {
  uint64_t mult = 1;
  if (!s.empty() && (s.back() == 'K' || s.back() == 'k')) {
    mult = 1024;
    s.remove_suffix(1);
  } else if (!s.empty() && (s.back() == 'M' || s.back() == 'm')) {
    mult = 1024 * 1024;
    s.remove_suffix(1);
  }
  if (!absl::SimpleAtoi(s, out)) return false;
  *out *= mult;
  return true;
}

}  // namespace

void SampleLustreStats(const std::vector<std::string>& roots, FsStatCounters* out,
                       std::vector<std::string>* warnings) {
  for (const std::string& root : roots) {
    if (std::error_code ec; !fs::is_directory(root, ec)) continue;
    for (const LustreStatsFile& kind : kLustreStatsFiles) {
      std::error_code ec;
      const fs::path dir = fs::path(root) / kind.type;
      if (!fs::is_directory(dir, ec)) continue;
      for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const fs::path file = it->path() / kind.file;
        std::string source = absl::StrFormat("%s.%s.%s", kind.type,
                                             it->path().filename().string(), kind.file);
        if (out->contains(source)) continue;  // an earlier root had it
        std::error_code ec2;
        if (!fs::exists(file, ec2)) continue;
        absl::StatusOr<std::string> text = ReadFileToString(file.string());
        if (!text.ok()) {
          warnings->push_back(absl::StrFormat("Lustre stats %s unreadable: %s", source,
                                              text.status().message()));
          continue;
        }
        absl::StatusOr<LustreStatsSample> parsed =
            kind.rpc_stats ? ParseLustreRpcStats(*text) : ParseLustreStats(*text);
        if (!parsed.ok()) {
          warnings->push_back(absl::StrFormat("%s: %s", file.string(), parsed.status().message()));
          continue;
        }
        auto& counters = (*out)[std::move(source)];
        for (FsStat& c : parsed->counters) {
          std::string name = c.name;
          counters[std::move(name)] = std::move(c);
        }
      }
    }
  }
}

absl::StatusOr<LustreStatsSample> ParseLustreStats(std::string_view std_text) {
  absl::string_view text(std_text.data(), std_text.size());
  LustreStatsSample out;
  for (absl::string_view line : TextLines(text)) {
    std::vector<absl::string_view> f = TextFields(line);
    if (ParseSnapshotTime(f, &out.snapshot_time_s)) continue;
    if (f.size() < 3 || f[2] != "samples") continue;  // start_time, elapsed_time, ...
    FsStat s;
    s.name = std::string(f[0]);
    if (!absl::SimpleAtoi(f[1], &s.samples)) {
      return BadTextLine("Lustre stats", line, "sample count is not a number");
    }
    size_t next = 3;
    if (f.size() > 3 && absl::StartsWith(f[3], "[") && absl::EndsWith(f[3], "]")) {
      s.unit = std::string(f[3].substr(1, f[3].size() - 2));
      next = 4;
    }
    // min max sum [sumsq]
    if (f.size() >= next + 3) {
      if (!absl::SimpleAtoi(f[next + 2], &s.sum)) {
        int64_t signed_sum;  // a few gauges print negative sums: no delta meaning
        if (!absl::SimpleAtoi(f[next + 2], &signed_sum)) {
          return BadTextLine("Lustre stats", line, "sum is not a number");
        }
        s.sum = 0;
      }
    }
    out.counters.push_back(std::move(s));
  }
  return out;
}

absl::StatusOr<LustreStatsSample> ParseLustreRpcStats(std::string_view std_text) {
  absl::string_view text(std_text.data(), std_text.size());
  LustreStatsSample out;
  std::string histogram;  // current title, "" before the first header
  for (absl::string_view line : TextLines(text)) {
    std::vector<absl::string_view> f = TextFields(line);
    if (ParseSnapshotTime(f, &out.snapshot_time_s)) continue;
    size_t bar = line.find('|');
    size_t pct = line.find('%');
    // The column title "rpcs" just before the first '%' ("rpcs in flight"
    // starts with "rpcs" too).
    size_t rpcs = pct == absl::string_view::npos ? pct : line.rfind("rpcs", pct);
    if (bar != absl::string_view::npos && rpcs != absl::string_view::npos && rpcs > 0 &&
        pct < bar && !f.empty() && !absl::EndsWith(f[0], ":")) {
      // "pages per rpc         rpcs   % cum % |       rpcs   % cum %"
      std::string title(absl::StripAsciiWhitespace(line.substr(0, rpcs)));
      absl::AsciiStrToLower(&title);
      histogram = absl::StrReplaceAll(title, {{" ", "_"}});
      continue;
    }
    if (histogram.empty() || bar == absl::string_view::npos || f.empty() ||
        !absl::EndsWith(f[0], ":")) {
      continue;  // gauges, the "read write" line, blank lines
    }
    uint64_t bucket;
    if (!ParseBucket(absl::StripSuffix(f[0], ":"), &bucket)) {
      return BadTextLine("Lustre rpc_stats", line, "bucket is not a number");
    }
    std::vector<absl::string_view> halves = absl::StrSplit(line, '|');
    std::vector<absl::string_view> rf = TextFields(halves[0]);
    std::vector<absl::string_view> wf = TextFields(halves[1]);
    uint64_t r, w;
    if (rf.size() < 2 || wf.empty() || !absl::SimpleAtoi(rf[1], &r) ||
        !absl::SimpleAtoi(wf[0], &w)) {
      return BadTextLine("Lustre rpc_stats", line, "RPC counts are not numbers");
    }
    std::string b = std::string(absl::StripSuffix(f[0], ":"));
    out.counters.push_back({absl::StrFormat("read.%s.%s", histogram, b), "rpcs", r, r * bucket});
    out.counters.push_back({absl::StrFormat("write.%s.%s", histogram, b), "rpcs", w, w * bucket});
  }
  return out;
}

FsStatsSource LustreStatsSource(std::vector<std::string> roots) {
  return [roots = std::move(roots)](FsStatCounters* out, std::vector<std::string>* warnings) {
    SampleLustreStats(roots, out, warnings);
  };
}

}  // namespace lockstep
