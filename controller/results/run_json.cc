#include "controller/results/run_json.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "google/protobuf/util/json_util.h"

namespace lockstep {
namespace {

absl::Status CheckFinite(double v, std::string_view origin, const std::string& field) {
  if (std::isfinite(v) && v >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "run.json %s: field %s is %g; a bandwidth must be a finite number >= 0 (the file is "
      "corrupt: re-export it from the run directory or the history db)",
      std::string(origin), field, v));
}

// protobuf's JSON errors read "INVALID_ARGUMENT:<what>\n<context>\n^": keep
// one line.
std::string CleanProtobufError(std::string s) {
  absl::string_view v(s);
  absl::ConsumePrefix(&v, "INVALID_ARGUMENT:");
  std::string out;
  for (char c : v) {
    if (c == '\n' || c == '\r') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '^')) out.pop_back();
  return out;
}

}  // namespace

bool IsSafeRunId(std::string_view run_id) {
  if (run_id.empty() || run_id.size() > 128 || run_id == "." || run_id == "..") return false;
  return std::all_of(run_id.begin(), run_id.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
           c == '-';
  });
}

absl::StatusOr<v1::RunRecord> ParseRunJson(std::string_view json, std::string_view origin) {
  const std::string where(origin);
  if (absl::StripAsciiWhitespace(absl::string_view(json.data(), json.size())).empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("run.json %s: the file is empty; was the run interrupted before it "
                        "wrote its record?",
                        where));
  }
  v1::RunRecord run;
  google::protobuf::util::JsonParseOptions strict;
  strict.ignore_unknown_fields = false;
  auto st = google::protobuf::util::JsonStringToMessage(std::string(json), &run, strict);
  if (!st.ok()) {
    // A newer writer may have added fields; say so rather than "unknown field".
    v1::RunRecord loose;
    google::protobuf::util::JsonParseOptions lenient;
    lenient.ignore_unknown_fields = true;
    if (google::protobuf::util::JsonStringToMessage(std::string(json), &loose, lenient).ok() &&
        loose.format_version() > kMaxRunFormatVersion) {
      run = std::move(loose);
    } else {
      return absl::InvalidArgumentError(absl::StrFormat(
          "run.json %s: not a valid lockstep.v1.RunRecord: %s (the file is cut short, "
          "hand-edited or not a run.json)",
          where, CleanProtobufError(st.ToString())));
    }
  }
  if (run.format_version() > kMaxRunFormatVersion) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "run.json %s: field format_version is %u but this lockstep reads format_version <= %u; "
        "upgrade lockstep to read it",
        where, run.format_version(), kMaxRunFormatVersion));
  }
  if (run.format_version() == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "run.json %s: field format_version is missing (or 0); every run.json written by "
        "lockstep has it, so this is not a lockstep run record",
        where));
  }
  if (run.run_id().empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("run.json %s: field run_id is missing; a run record needs its id", where));
  }
  for (int t = 0; t < run.tests_size(); ++t) {
    const auto& test = run.tests(t);
    for (int s = 0; s < test.summary_size(); ++s) {
      const auto& row = test.summary(s);
      std::string f = absl::StrFormat("tests[%d].summary[%d]", t, s);
      RETURN_IF_ERROR(CheckFinite(row.bw_mean_mib(), where, f + ".bw_mean_mib"));
      for (int r = 0; r < row.bw_mib_per_rep_size(); ++r) {
        RETURN_IF_ERROR(
            CheckFinite(row.bw_mib_per_rep(r), where, absl::StrFormat("%s.bw_mib_per_rep[%d]", f, r)));
      }
    }
  }
  return run;
}

absl::StatusOr<v1::RunRecord> ReadRunJson(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseRunJson(text, path);
}

std::string RunToJson(const v1::RunRecord& run) {
  std::string out;
  google::protobuf::util::JsonPrintOptions opts;
  opts.add_whitespace = true;
  opts.preserve_proto_field_names = true;  // as the run writer does
  (void)google::protobuf::util::MessageToJsonString(run, &out, opts);
  return out;
}

}  // namespace lockstep
