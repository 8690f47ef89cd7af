#include "controller/results/report.h"

#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "controller/results/csv_cell.h"
#include "controller/plan/sweep.h"

namespace lockstep {
namespace {

// ---- escaping ------------------------------------------------------------------

std::string OmLabel(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string InfluxTag(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == ',' || c == '=' || c == ' ') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// Unix ns of started_at, or nullopt-like -1.
int64_t StartedNs(const v1::RunRecord& run) {
  absl::Time t;
  std::string err;
  if (absl::ParseTime(absl::RFC3339_full, run.started_at(), &t, &err)) return absl::ToUnixNanos(t);
  return -1;
}

std::string G(double v) { return absl::StrFormat("%.10g", v); }

std::string RepsText(const v1::SummaryRow& row, const char* sep) {
  std::vector<std::string> parts;
  for (double v : row.bw_mib_per_rep()) parts.push_back(absl::StrFormat("%.2f", v));
  return absl::StrJoin(parts, sep);
}

}  // namespace

std::string RenderCsv(const std::vector<v1::RunRecord>& runs) {
  std::string o =
      "run_id,name,plan_sha256,started_at,status,test_id,phase,operation,api,num_tasks,"
      "tasks_per_node,transfer_bytes,block_bytes,segments,file_per_process,repetitions,"
      "bw_mean_mib,bw_std_mib,bw_min_mib,bw_max_mib,ops_mean,ops_std,mean_time_s,"
      "aggregate_mib,bw_mib_per_rep,sweep\n";
  for (const auto& r : runs) {
    for (const auto& t : r.tests()) {
      for (const auto& s : t.summary()) {
        std::vector<std::string> f = {
            CsvCell(r.run_id()), CsvCell(r.name()), CsvCell(r.plan_sha256()),
            CsvCell(r.started_at()), CsvCell(r.status()), absl::StrCat(t.test_id()),
            CsvCell(s.phase()), CsvCell(s.operation()), CsvCell(s.api()),
            absl::StrCat(s.num_tasks()), absl::StrCat(s.tasks_per_node()),
            absl::StrCat(s.transfer_bytes()), absl::StrCat(s.block_bytes()),
            absl::StrCat(s.segments()), s.file_per_process() ? "1" : "0",
            absl::StrCat(s.repetitions()), G(s.bw_mean_mib()), G(s.bw_std_mib()),
            G(s.bw_min_mib()), G(s.bw_max_mib()), G(s.ops_mean()), G(s.ops_std()),
            G(s.mean_time_s()), G(s.aggregate_mib()), CsvCell(RepsText(s, ";")),
            CsvCell(SweepLabel(t.sweep()))};
        absl::StrAppend(&o, absl::StrJoin(f, ","), "\n");
      }
    }
  }
  return o;
}

std::string RenderOpenMetrics(const std::vector<v1::RunRecord>& runs) {
  struct Sample {
    std::string labels;
    double value;
    int64_t ts_ns;
  };
  std::map<std::string, std::vector<Sample>> fam;  // family -> samples
  for (const auto& r : runs) {
    int64_t ts = StartedNs(r);
    for (const auto& t : r.tests()) {
      for (const auto& s : t.summary()) {
        std::string labels = absl::StrFormat(
            "run_id=\"%s\",plan=\"%s\",test_id=\"%u\",phase=\"%s\",operation=\"%s\",api=\"%s\","
            "tasks=\"%u\",tasks_per_node=\"%u\",transfer_bytes=\"%u\",block_bytes=\"%u\","
            "segments=\"%u\",file_per_process=\"%s\"",
            OmLabel(r.run_id()), OmLabel(r.name()), t.test_id(), OmLabel(s.phase()),
            OmLabel(s.operation()), OmLabel(s.api()), s.num_tasks(), s.tasks_per_node(),
            s.transfer_bytes(), s.block_bytes(), s.segments(),
            s.file_per_process() ? "true" : "false");
        const double mib = 1048576.0;
        auto add = [&](const std::string& family, const std::string& extra, double v) {
          fam[family].push_back({extra.empty() ? labels : absl::StrCat(labels, ",", extra), v, ts});
        };
        add("lockstep_result_bandwidth_bytes_per_second", "stat=\"mean\"", s.bw_mean_mib() * mib);
        add("lockstep_result_bandwidth_bytes_per_second", "stat=\"min\"", s.bw_min_mib() * mib);
        add("lockstep_result_bandwidth_bytes_per_second", "stat=\"max\"", s.bw_max_mib() * mib);
        add("lockstep_result_bandwidth_bytes_per_second", "stat=\"stddev\"", s.bw_std_mib() * mib);
        add("lockstep_result_operations_per_second", "stat=\"mean\"", s.ops_mean());
        add("lockstep_result_mean_time_seconds", "", s.mean_time_s());
        add("lockstep_result_repetitions", "", s.repetitions());
      }
    }
  }
  const std::map<std::string, std::string> help = {
      {"lockstep_result_bandwidth_bytes_per_second",
       "Bandwidth of one lockstep result over its repetitions (mean, min, max, population stddev)."},
      {"lockstep_result_operations_per_second", "Mean transfers per second of one result."},
      {"lockstep_result_mean_time_seconds", "Mean duration of one repetition of the result."},
      {"lockstep_result_repetitions", "Repetitions measured for the result."},
  };
  std::string o;
  for (const auto& [name, samples] : fam) {
    absl::StrAppend(&o, "# TYPE ", name, " gauge\n");
    if (auto it = help.find(name); it != help.end()) absl::StrAppend(&o, "# HELP ", name, " ", it->second, "\n");
    for (const auto& s : samples) {
      absl::StrAppend(&o, name, "{", s.labels, "} ", G(s.value));
      if (s.ts_ns >= 0) {
        absl::StrAppend(&o, absl::StrFormat(" %d.%09d", s.ts_ns / 1000000000, s.ts_ns % 1000000000));
      }
      absl::StrAppend(&o, "\n");
    }
  }
  absl::StrAppend(&o, "# EOF\n");
  return o;
}

std::string RenderInfluxLines(const std::vector<v1::RunRecord>& runs) {
  std::string o;
  for (const auto& r : runs) {
    int64_t ts = StartedNs(r);
    for (const auto& t : r.tests()) {
      for (const auto& s : t.summary()) {
        // Tags sorted by key, empty values left out (line protocol forbids them).
        std::map<std::string, std::string> tags = {
            {"api", s.api()},
            {"block_bytes", absl::StrCat(s.block_bytes())},
            {"file_per_process", s.file_per_process() ? "true" : "false"},
            {"operation", s.operation()},
            {"phase", s.phase()},
            {"plan", r.name()},
            {"run_id", r.run_id()},
            {"segments", absl::StrCat(s.segments())},
            {"tasks", absl::StrCat(s.num_tasks())},
            {"tasks_per_node", absl::StrCat(s.tasks_per_node())},
            {"test_id", absl::StrCat(t.test_id())},
            {"transfer_bytes", absl::StrCat(s.transfer_bytes())},
        };
        std::string line = "lockstep_result";
        for (const auto& [k, v] : tags) {
          if (!v.empty()) absl::StrAppend(&line, ",", k, "=", InfluxTag(v));
        }
        std::vector<std::string> fields;
        auto field = [&](const char* k, double v) {
          if (std::isfinite(v)) fields.push_back(absl::StrCat(k, "=", G(v)));
        };
        field("bw_mean_mib", s.bw_mean_mib());
        field("bw_std_mib", s.bw_std_mib());
        field("bw_min_mib", s.bw_min_mib());
        field("bw_max_mib", s.bw_max_mib());
        field("ops_mean", s.ops_mean());
        field("mean_time_s", s.mean_time_s());
        fields.push_back(absl::StrCat("repetitions=", s.repetitions(), "i"));
        absl::StrAppend(&line, " ", absl::StrJoin(fields, ","));
        if (ts >= 0) absl::StrAppend(&line, " ", ts);
        absl::StrAppend(&o, line, "\n");
      }
    }
  }
  return o;
}

absl::Status WriteReportFile(const std::string& path, std::string_view content,
                             std::string_view what) {
  return Annotate(WriteFileAtomically(path, content), absl::StrCat("writing the ", std::string(what)));
}

}  // namespace lockstep
