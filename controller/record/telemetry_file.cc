#include "controller/record/telemetry_file.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <google/protobuf/util/json_util.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace lockstep {

namespace {

// Both parsers keep the lines before the first bad one.
TelemetryFileContents ParseJsonLines(const std::string& path, const std::string& text) {
  TelemetryFileContents out;
  std::vector<v1::TelemetryLine>& lines = out.lines;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // files of later versions
  size_t number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    ++number;
    v1::TelemetryLine parsed;
    auto status =
        google::protobuf::util::JsonStringToMessage(std::string(line), &parsed, options);
    if (!status.ok()) {
      out.damage = absl::StrFormat("%s, line %u: not a telemetry line (%s); its first %u lines "
                                   "are good",
                                   path, number, std::string(status.message()), lines.size());
      return out;
    }
    lines.push_back(std::move(parsed));
  }
  return out;
}

TelemetryFileContents ParseDelimited(const std::string& path, const std::string& bytes) {
  TelemetryFileContents out;
  std::vector<v1::TelemetryLine>& lines = out.lines;
  google::protobuf::io::ArrayInputStream input(bytes.data(), static_cast<int>(bytes.size()));
  while (true) {
    const int64_t offset = input.ByteCount();
    v1::TelemetryLine parsed;
    bool clean_eof = false;
    if (google::protobuf::util::ParseDelimitedFromZeroCopyStream(&parsed, &input, &clean_eof)) {
      lines.push_back(std::move(parsed));
      continue;
    }
    if (clean_eof) return out;
    out.damage = absl::StrFormat(
        "%s, record %u (byte %d of the uncompressed data): not a length-delimited "
        "lockstep.v1.TelemetryLine, so damaged or cut short; its first %u records are good",
        path, lines.size() + 1, offset, lines.size());
    return out;
  }
}

}  // namespace

absl::Status AppendTelemetryFile(const std::string& path,
                                 const std::vector<v1::TelemetryLine>& lines,
                                 const std::string& what) {
  if (lines.empty()) return absl::OkStatus();
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream out(&bytes);
    for (const v1::TelemetryLine& line : lines) {
      if (!google::protobuf::util::SerializeDelimitedToZeroCopyStream(line, &out)) {
        return absl::InternalError(
            absl::StrFormat("cannot serialize %s (agent %s)", what, line.address()));
      }
    }
  }
  // One gzip member per call, appended: readers (zlib's gzread, zcat) read
  // the members one after the other. Level 1: the file is written on the
  // run path after every phase, where the controller's CPU matters more than
  // the file's size (tests/bench/README.md, section 16).
  struct stat st;
  const off_t before = ::stat(path.c_str(), &st) == 0 ? st.st_size : 0;
  gzFile gz = ::gzopen(path.c_str(), "ab1");
  if (gz == nullptr) {
    return absl::InternalError(absl::StrFormat("cannot open %s: %s (%s is not kept)", path,
                                               std::strerror(errno), what));
  }
  errno = 0;
  const int written = ::gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size()));
  const int closed = ::gzclose(gz);
  if (written != static_cast<int>(bytes.size()) || closed != Z_OK) {
    const int err = errno;  // the failed write's (ENOSPC, EFBIG), if any
    // A member cut short would hide every member after it from readers: cut
    // the file back, so that only these lines are lost.
    const bool cut_back = ::truncate(path.c_str(), before) == 0;
    return absl::InternalError(absl::StrFormat(
        "cannot write %s (zlib error %d%s): %s is not kept%s", path, closed,
        err != 0 ? absl::StrCat(", ", std::strerror(err)) : "", what,
        cut_back ? "" : "; the file could not be cut back, so later phases' lines are unreadable"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TelemetryFileContents> ReadTelemetryFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrFormat("%s: %s", path, std::strerror(errno)));
  }
  gzFile gz = ::gzopen(path.c_str(), "rb");
  if (gz == nullptr) {
    TelemetryFileContents none;
    none.damage = absl::StrFormat("cannot open %s: %s", path, std::strerror(errno));
    return none;
  }
  std::string data;
  char buf[1 << 16];
  int n = 0;
  while ((n = ::gzread(gz, buf, sizeof(buf))) > 0) data.append(buf, static_cast<size_t>(n));
  int err = Z_OK;
  const char* why = ::gzerror(gz, &err);
  const std::string message = why == nullptr ? "" : why;
  ::gzclose(gz);
  // What gzip gave before an error (a member cut short: the controller was
  // killed while appending one) is parsed all the same.
  TelemetryFileContents out =
      absl::EndsWith(path, ".jsonl.gz") ? ParseJsonLines(path, data) : ParseDelimited(path, data);
  if (out.damage.empty() && (n < 0 || (err != Z_OK && err != Z_STREAM_END))) {
    out.damage = absl::StrFormat(
        "%s: gzip stops after %u good records (%s): the file was cut short or damaged", path,
        out.lines.size(), message);
  }
  return out;
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

std::string RestoreTelemetryFromDir(const std::string& dir, v1::RunRecord* run) {
  absl::StatusOr<TelemetryFileContents> file = ReadTelemetryFile(dir + "/" + kTelemetryFile);
  if (absl::IsNotFound(file.status())) file = ReadTelemetryFile(dir + "/" + kTelemetryJsonFile);
  if (!file.ok()) return "";  // neither file: runs of earlier versions hold it inline
  RestoreTelemetry(file->lines, run);
  if (file->damage.empty()) return "";
  return absl::StrFormat("%s; the agents' full telemetry of the rest is left out (run.json's "
                         "briefs and role summaries are whole)",
                         file->damage);
}

}  // namespace lockstep
