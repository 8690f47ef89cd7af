#include "agent/fs/lustre_stats.h"

#include <filesystem>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
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

}  // namespace

void SampleLustreStats(const std::vector<std::string>& roots, LustreCounters* out,
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
        for (LustreStat& c : parsed->counters) {
          std::string name = c.name;
          counters[std::move(name)] = std::move(c);
        }
      }
    }
  }
}

}  // namespace lockstep
