#include "controller/results/telemetry_file.h"

#include <sys/stat.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace lockstep {

absl::StatusOr<std::vector<v1::TelemetryLine>> ReadTelemetryFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrFormat("%s: %s", path, std::strerror(errno)));
  }
  gzFile gz = ::gzopen(path.c_str(), "rb");
  if (gz == nullptr) {
    return absl::NotFoundError(absl::StrFormat("cannot open %s: %s", path, std::strerror(errno)));
  }
  std::string text;
  char buf[1 << 16];
  int n = 0;
  while ((n = ::gzread(gz, buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(n));
  int err = Z_OK;
  const char* why = ::gzerror(gz, &err);
  const std::string message = why == nullptr ? "" : why;
  ::gzclose(gz);
  if (n < 0 || (err != Z_OK && err != Z_STREAM_END)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: not a readable gzip file (%s); it may be truncated", path, message));
  }
  std::vector<v1::TelemetryLine> lines;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // files of later versions
  size_t number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    ++number;
    v1::TelemetryLine parsed;
    auto status =
        google::protobuf::util::JsonStringToMessage(std::string(line), &parsed, options);
    if (!status.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat("%s, line %u: not a telemetry line: %s",
                                                        path, number,
                                                        std::string(status.message())));
    }
    lines.push_back(std::move(parsed));
  }
  return lines;
}

size_t RestoreTelemetry(const std::vector<v1::TelemetryLine>& lines, v1::RunRecord* run) {
  // (phase_id, address) → the agent records in phase order.
  std::map<std::pair<std::string, std::string>, std::vector<v1::AgentPhaseRecord*>> slots;
  for (v1::TestRecord& t : *run->mutable_tests()) {
    for (v1::PhaseRecord& p : *t.mutable_phases()) {
      for (v1::AgentPhaseRecord& a : *p.mutable_agents()) {
        slots[{p.phase_id(), a.address()}].push_back(&a);
      }
    }
  }
  std::map<std::pair<std::string, std::string>, size_t> used;
  size_t restored = 0;
  for (const v1::TelemetryLine& line : lines) {
    const std::pair<std::string, std::string> key{line.phase_id(), line.address()};
    auto it = slots.find(key);
    if (it == slots.end()) continue;
    size_t& k = used[key];
    if (k >= it->second.size()) continue;
    *it->second[k++]->mutable_telemetry() = line.telemetry();
    ++restored;
  }
  return restored;
}

absl::Status RestoreTelemetryFromDir(const std::string& dir, v1::RunRecord* run) {
  absl::StatusOr<std::vector<v1::TelemetryLine>> lines =
      ReadTelemetryFile(dir + "/telemetry.jsonl.gz");
  if (absl::IsNotFound(lines.status())) return absl::OkStatus();
  if (!lines.ok()) return lines.status();
  RestoreTelemetry(*lines, run);
  return absl::OkStatus();
}

}  // namespace lockstep
