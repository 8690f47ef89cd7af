#include "controller/ior_output.h"

#include "absl/strings/str_format.h"
#include "common/sizes.h"

namespace lockstep {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kMB = 1000.0 * 1000.0;

std::string Line(const char* key, const std::string& value) {
  return absl::StrFormat("%-20s: %s\n", key, value);
}

}  // namespace

std::string PPDouble(double value) {
  if (value < 0) return "   -       ";
  int precision = value < 1 ? 6 : value < 3600 ? 2 : 0;
  return absl::StrFormat("%-10.*f ", precision, value);
}

std::string FormatOptions(const TestDescription& t) {
  const v1::PhaseSpec& s = t.spec;
  std::string out = "Options: \n";
  out += Line("api", "POSIX");
  out += Line("apiVersion", "");
  out += Line("test filename", t.path);
  out += Line("access", s.file_per_process() ? "file-per-process" : "single-shared-file");
  out += Line("type", "independent");
  out += Line("segments", absl::StrFormat("%u", s.segments()));
  out += Line("ordering in a file", "sequential");
  out += Line("ordering inter file",
              t.reorder ? absl::StrFormat("constant task offset = %u", s.reorder_shift())
                        : std::string("no tasks offsets"));
  out += Line("nodes", absl::StrFormat("%u", t.nodes));
  out += Line("tasks", absl::StrFormat("%u", s.total_tasks()));
  out += Line("clients per node", absl::StrFormat("%u", t.tasks_per_node));
  out += Line("repetitions", absl::StrFormat("%u", t.repetitions));
  out += Line("xfersize", HumanBytes(s.transfer_bytes()));
  out += Line("blocksize", HumanBytes(s.block_bytes()));
  out += Line("aggregate filesize",
              HumanBytes(s.block_bytes() * s.segments() * s.total_tasks()));
  if (s.direct()) out += Line("O_DIRECT", "yes");
  if (s.fsync_at_end()) out += Line("fsync", "at end of write (-e)");
  if (s.fsync_per_transfer()) out += Line("fsync", "after every transfer (-Y)");
  return out;
}

std::string FormatResultsHeader() {
  return "access    bw(MiB/s)  IOPS       Latency(s)  block(KiB) xfer(KiB)  open(s)    wr/rd(s)   "
         "close(s)   total(s)   iter\n"
         "------    ---------  ----       ----------  ---------- ---------  --------   --------   "
         "--------   --------   ----\n";
}

std::string FormatIterationRow(const v1::IterationRow& r) {
  std::string out = absl::StrFormat("%-10s", r.access());
  out += PPDouble(r.bw_mib());
  out += PPDouble(r.iops());
  out += PPDouble(r.latency_s());
  out += PPDouble(r.block_kib());
  out += PPDouble(r.xfer_kib());
  out += PPDouble(r.open_s());
  out += PPDouble(r.wrrd_s());
  out += PPDouble(r.close_s());
  out += PPDouble(r.total_s());
  out += absl::StrFormat("%-4d\n", r.iter());
  return out;
}

std::string FormatRemoveRow(double seconds, uint32_t iter) {
  std::string out = "remove    -          -          -          -          -          -          "
                    "-          ";
  out += PPDouble(seconds);
  out += absl::StrFormat("%-4d\n", iter);
  return out;
}

std::string FormatSummaryHeader() {
  std::string out = "\nSummary of all tests:\n";
  out += absl::StrFormat("%-9s %10s %10s %10s %10s %10s %10s %10s %10s %10s", "Operation",
                         "Max(MiB)", "Min(MiB)", "Mean(MiB)", "StdDev", "Max(OPs)", "Min(OPs)",
                         "Mean(OPs)", "StdDev", "Mean(s)");
  out += " Stonewall(s) Stonewall(MiB) Test# #Tasks tPN reps fPP reord reordoff reordrand seed"
         " segcnt ";
  out += absl::StrFormat("%8s %8s %9s %5s", "blksiz", "xsize", "aggs(MiB)", "API");
  out += " RefNum\n";
  return out;
}

std::string FormatSummaryRow(const v1::SummaryRow& r) {
  std::string out = absl::StrFormat("%-9s ", r.operation());
  for (double v : {r.bw_max_mib(), r.bw_min_mib(), r.bw_mean_mib(), r.bw_std_mib(), r.ops_max(),
                   r.ops_min(), r.ops_mean(), r.ops_std()}) {
    out += absl::StrFormat("%10.2f ", v);
  }
  out += absl::StrFormat("%10.5f ", r.mean_time_s());
  out += absl::StrFormat("%12s ", "NA");
  out += absl::StrFormat("%14s ", "NA");
  out += absl::StrFormat("%5d ", r.test_id());
  out += absl::StrFormat("%6d ", r.num_tasks());
  out += absl::StrFormat("%3d ", r.tasks_per_node());
  out += absl::StrFormat("%4d ", r.repetitions());
  out += absl::StrFormat("%3d ", r.file_per_process() ? 1 : 0);
  out += absl::StrFormat("%5d ", r.reorder());
  out += absl::StrFormat("%8d ", r.reorder_offset());
  out += absl::StrFormat("%9d ", r.reorder_random());
  out += absl::StrFormat("%4d ", r.reorder_random_seed());
  out += absl::StrFormat("%6d ", r.segments());
  out += absl::StrFormat("%8d ", r.block_bytes());
  out += absl::StrFormat("%8d ", r.transfer_bytes());
  out += absl::StrFormat("%9.1f ", r.aggregate_mib());
  out += absl::StrFormat("%5s ", r.api());
  out += absl::StrFormat("%6d\n", 0);
  return out;
}

std::string FormatMaxLines(const std::vector<v1::SummaryRow>& rows) {
  std::string out;
  for (const v1::SummaryRow& r : rows) {
    double bytes_per_s = r.bw_max_mib() * kMiB;
    if (r.operation() == "write") {
      out += absl::StrFormat("Max Write: %.2f MiB/sec (%.2f MB/sec)\n", r.bw_max_mib(),
                             bytes_per_s / kMB);
    } else if (r.operation() == "read") {
      out += absl::StrFormat("Max Read:  %.2f MiB/sec (%.2f MB/sec)\n", r.bw_max_mib(),
                             bytes_per_s / kMB);
    }
  }
  return out;
}

}  // namespace lockstep
