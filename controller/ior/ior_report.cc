#include "controller/ior/ior_report.h"

#include <algorithm>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/layout.h"
#include "common/names.h"
#include "controller/plan/phase_kind.h"
#include "controller/record/command_summary.h"
#include "common/sizes.h"
#include "controller/record/ior_math.h"
#include "controller/record/phase_reduce.h"
#include "controller/plan/sweep.h"

namespace lockstep {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = kMiB * 1024.0;
constexpr double kMB = 1000.0 * 1000.0;

// IOR's "%-20s: %s" key-value line.
std::string KeyVal(const std::string& key, const std::string& value) {
  return absl::StrFormat("%-20s: %s\n", key, value);
}

bool IsTransferKind(v1::PhaseKind k) {
  return k == v1::WRITE || k == v1::READ || k == v1::REWRITE;
}

std::string FsLine(const v1::FsStats& fs) {
  const IorFsFigures f = IorFsFiguresOf(fs);
  return KeyVal("FS", absl::StrFormat("%.1f %s   Used FS: %2.1f%%   Inodes: %.1f Mi   Used "
                                      "Inodes: %2.1f%%",
                                      f.size, f.unit, f.used_pct, f.inodes_mi, f.used_inodes_pct));
}

std::string OptionsBlock(const v1::TestRecord& test, const IorTestParams& p, bool verbose) {
  const v1::PhaseSpec& s = p.layout;
  std::string out = "\nOptions: \n";
  out += KeyVal("api", "POSIX");
  out += KeyVal("apiVersion", "");
  out += KeyVal("test filename", s.dir() + "/" + s.file_name());
  out += KeyVal("access", s.file_per_process() ? "file-per-process" : "single-shared-file");
  out += KeyVal("type", "independent");
  out += KeyVal("segments", absl::StrCat(s.segments()));
  out += KeyVal("ordering in a file", p.random_offsets ? "random" : "sequential");
  if (p.reorder.node_offset > 0) {
    out += KeyVal("ordering inter file", "constant task offset");
    out += KeyVal("task offset", absl::StrCat(p.reorder.node_offset));
  } else if (p.reorder.random) {
    out += KeyVal("ordering inter file", "random task offset");
    out += KeyVal("task offset", absl::StrCat(p.reorder.task_offset));
    out += KeyVal("reorder random seed", absl::StrCat(p.reorder.random_seed));
  } else {
    out += KeyVal("ordering inter file", "no tasks offsets");
  }
  out += KeyVal("nodes", absl::StrCat(test.client_agents()));
  out += KeyVal("tasks", absl::StrCat(test.total_tasks()));
  out += KeyVal("clients per node", absl::StrCat(test.tasks_per_agent()));
  out += KeyVal("memoryBuffer", "CPU");
  out += KeyVal("dataAccess", "CPU");
  out += KeyVal("GPUDirect", "0");
  out += KeyVal("repetitions", absl::StrCat(test.repetitions()));
  out += KeyVal("xfersize", IorHumanBytes(s.transfer_bytes()));
  out += KeyVal("blocksize", IorHumanBytes(s.block_bytes()));
  out += KeyVal("aggregate filesize",
                IorHumanBytes(s.block_bytes() * s.segments() * test.total_tasks()));
  if (p.stonewall_seconds > 0) {
    out += KeyVal("stonewallingTime", absl::StrCat(p.stonewall_seconds));
    out += KeyVal("stoneWallingWearOut", p.stonewall_wear_out ? "1" : "0");
  }
  if (verbose) out += KeyVal("verbose", "1");
  return out;
}

std::string ResultsHeader() {
  return "\nResults: \n\n"
         "access    bw(MiB/s)  IOPS       Latency(s)  block(KiB) xfer(KiB)  open(s)    wr/rd(s)   "
         "close(s)   total(s)   iter\n"
         "------    ---------  ----       ----------  ---------- ---------  --------   --------   "
         "--------   --------   ----\n";
}

}  // namespace

std::string IorIterationRow(const v1::IterationRow& r) {
  std::string out = absl::StrFormat("%-10s", r.access());
  out += PPDouble(r.bw_mib());
  out += PPDouble(r.iops());
  out += PPDouble(r.latency_s(), "  ");
  out += PPDouble(r.block_kib());
  out += PPDouble(r.xfer_kib());
  out += PPDouble(r.open_s());
  out += PPDouble(r.wrrd_s());
  out += PPDouble(r.close_s());
  out += PPDouble(r.total_s());
  out += absl::StrFormat("%-4d\n", r.iter());
  return out;
}

namespace {

std::string SummaryHeader() {
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

std::string SummaryRowText(const v1::SummaryRow& r, int32_t reference_number) {
  std::string out = absl::StrFormat("%-9s ", r.operation());
  for (double v : {r.bw_max_mib(), r.bw_min_mib(), r.bw_mean_mib(), r.bw_std_mib(), r.ops_max(),
                   r.ops_min(), r.ops_mean(), r.ops_std()}) {
    out += absl::StrFormat("%10.2f ", v);
  }
  out += absl::StrFormat("%10.5f ", r.mean_time_s());
  if (r.stonewall()) {
    out += absl::StrFormat("%10.2f %13.2f ", r.stonewall_s(), r.stonewall_mib());
  } else {
    out += absl::StrFormat("%10s %13s ", "NA", "NA");
  }
  out += absl::StrFormat("%5d %6d %3d %4d %3d %5d %8d %9d %4d %6d %8d %8d %9.1f %3s %6d\n",
                         r.test_id(), r.num_tasks(), r.tasks_per_node(), r.repetitions(),
                         r.file_per_process() ? 1 : 0, r.reorder(), r.reorder_offset(),
                         r.reorder_random(), r.reorder_random_seed(),
                         r.segments(), r.block_bytes(), r.transfer_bytes(), r.aggregate_mib(),
                         r.api().empty() ? "POSIX" : r.api(), reference_number);
  return out;
}

// IOR's CheckFileSize warnings: the bytes moved are not the expected
// aggregate (a stonewall), or the files' size after the phase is not the
// bytes moved (a read of a file larger than the layout). A record without
// the agents' stat (older agents) counts the bytes moved as the size.
std::string SizeWarnings(const v1::PhaseRecord& p) {
  const v1::IterationRow& r = p.row();
  const uint64_t stat_bytes = r.has_stat_bytes() ? r.stat_bytes() : r.bytes();
  if (!IsTransferKind(p.kind()) || r.expected_bytes() == 0 ||
      (r.bytes() == r.expected_bytes() && stat_bytes == r.bytes())) {
    return "";
  }
  std::string out;
  out += absl::StrFormat("WARNING: Expected aggregate file size       = %d\n", r.expected_bytes());
  out += absl::StrFormat("WARNING: Stat() of aggregate file size      = %d\n", stat_bytes);
  out += absl::StrFormat("WARNING: Using actual aggregate bytes moved = %d\n", r.bytes());
  if (p.spec().stonewall_seconds() > 0) {
    out += "WARNING: Maybe caused by deadlineForStonewalling\n";
  }
  return out;
}

}  // namespace

std::string PPDouble(double value, const char* append) {
  if (value < 0) return absl::StrCat("   -      ", append);
  int precision = value < 1 ? 6 : value < 3600 ? 2 : 0;
  return absl::StrFormat("%-10.*f%s", precision, value, append);
}

std::string IorHumanBytes(uint64_t v) {
  constexpr uint64_t kM = 1 << 20, kG = 1 << 30;
  if (v >= kG) {
    return v % kG ? absl::StrFormat("%.2f GiB", static_cast<double>(v) / kG)
                  : absl::StrFormat("%d GiB", v / kG);
  }
  if (v >= kM) {
    return v % kM ? absl::StrFormat("%.2f MiB", static_cast<double>(v) / kM)
                  : absl::StrFormat("%d MiB", v / kM);
  }
  return absl::StrFormat("%d bytes", v);
}

std::string IorTime(const std::string& rfc3339) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, rfc3339, &t, &err)) return rfc3339;
  return absl::FormatTime("%a %b %e %H:%M:%S %Y", t, absl::LocalTimeZone());
}

IorTestParams IorTestParamsOf(const v1::TestRecord& test, const v1::RunRecord* run) {
  IorTestParams p;
  const v1::PhaseSpec* layout = nullptr;
  for (const v1::PhaseSpec& s : test.plan_specs()) {
    if (layout == nullptr && IsTransferKind(s.kind())) layout = &s;
    p.write |= s.kind() == v1::WRITE;
    p.read |= s.kind() == v1::READ;
    p.random_offsets |= s.random_offsets() || s.random_blocks();
    p.random_blocks |= s.random_blocks();
    p.direct |= s.direct();
    p.fsync |= s.fsync_at_end();
    p.fsync_per_transfer |= s.fsync_per_transfer();
    p.verify_after_write |= s.verify_after_write();
    p.verify |= s.verify();
    if (s.stonewall_seconds() > 0 && p.stonewall_seconds == 0) {
      p.stonewall_seconds = s.stonewall_seconds();
      p.stonewall_wear_out = s.stonewall_wear_out();
    }
  }
  if (layout == nullptr && test.plan_specs_size() > 0) layout = &test.plan_specs(0);
  if (layout != nullptr) p.layout = *layout;
  p.reorder = run != nullptr ? TestReorderOf(*run, test) : TestReorderOf(test.plan_specs());
  return p;
}

IorFsFigures IorFsFiguresOf(const v1::FsStats& fs) {
  IorFsFigures f;
  f.size = static_cast<double>(fs.blocks() * fs.block_bytes()) / kGiB;
  if (f.size > 1024) {
    f.size /= 1024;
    f.unit = "TiB";
  }
  // IOR keeps these in long long: a file system that reports f_ffree = -1
  // (ceph-fuse: "no limit") prints IOR's 133.3%, and so do we.
  auto used = [](uint64_t free, uint64_t total) {
    return total == 0 ? 0.0
                      : (1 - static_cast<double>(static_cast<int64_t>(free)) /
                                 static_cast<double>(static_cast<int64_t>(total))) *
                            100;
  };
  f.used_pct = used(fs.blocks_free(), fs.blocks());
  f.inodes_mi = static_cast<double>(fs.files()) / kMiB;
  f.used_inodes_pct = used(fs.files_free(), fs.files());
  return f;
}

std::string IorReport::Header(const v1::RunRecord& run) const {
  std::string out = "IOR-4.1.0+dev: Lockstep Coordinated Test of Parallel I/O\n";
  out += KeyVal("Began", IorTime(run.started_at()));
  out += KeyVal("Command line",
                run.ior_command_line().empty() ? run.command_line() : run.ior_command_line());
  out += KeyVal("Machine", "Linux " + run.controller_host());
  return out;
}

std::string IorReport::AgentsReady(const v1::RunRecord& run) {
  ior_options_.set_ior_reorder_constant(run.ior_reorder_constant());
  ior_options_.set_ior_reorder_random(run.ior_reorder_random());
  ior_options_.set_ior_reorder_random_seed(run.ior_reorder_random_seed());
  ior_options_.set_ior_task_offset(run.ior_task_offset());
  return own_.AgentsReady(run);
}

std::string IorReport::TestStarted(const v1::TestRecord& test, const v1::PhaseRecord& first) {
  if (started_test_ == static_cast<int>(test.test_id())) return "";
  started_test_ = static_cast<int>(test.test_id());
  IorTestParams params = IorTestParamsOf(test, &ior_options_);
  if (test.plan_specs_size() == 0) params.layout = first.spec();
  const v1::PhaseSpec& s = params.layout;
  std::string out;
  out += KeyVal("TestID", absl::StrCat(test.test_id()));
  // A sweep's point ("stripe_size=64k checksums=false"): not IOR's, but what
  // tells the tests of a sweep apart.
  if (test.sweep_size() > 0) out += KeyVal("Sweep", SweepLabel(test.sweep()));
  out += KeyVal("StartTime", IorTime(test.started_at()));
  // IOR's Path: rank 0's own file before the repetitions (no -m suffix, no
  // -C/-Z reordering).
  v1::PhaseSpec own = s;
  own.set_multi_file(false);
  own.set_reorder_shift(0);
  own.set_reorder_random(false);
  out += KeyVal("Path", TaskFilePath(s.dir(), own, 0));
  out += FsLine(first.dir_fs());
  out += OptionsBlock(test, params, verbose_);
  out += LockstepLines::TestStarted(test);
  out += ResultsHeader();
  return out;
}

std::string IorReport::PhaseDone(const v1::PhaseRecord& p) const {
  std::string out;
  if (p.has_stonewall() && p.spec().stonewall_wear_out()) {
    const v1::StonewallRecord& w = p.stonewall();
    const double tasks = std::max<double>(p.spec().total_tasks(), 1);
    out += absl::StrFormat(
        "stonewalling pairs accessed min: %d max: %d -- min data: %.1f GiB mean data: %.1f GiB "
        "time: %.1fs\n",
        w.pairs_min(), w.pairs_max(), static_cast<double>(w.min_bytes()) / kGiB,
        static_cast<double>(w.total_bytes()) / tasks / kGiB, w.duration_s());
  }
  out += SizeWarnings(p);
  if (KindOf(p.kind()).IorReportRow()) out += IorIterationRow(p.row());
  return out + own_.PhaseDone(p);
}

std::string IorReport::Note(const std::string& text) { return LockstepLines::Note(text); }

std::string IorReport::FilesRemoved(double seconds, uint32_t iter) const {
  // Lockstep's '#' line always (the report's '#' lines are LockstepLines'),
  // IOR's row too with -v.
  const std::string own = LockstepLines::FilesRemoved(seconds, iter);
  if (!verbose_) return own;
  return absl::StrFormat("remove    -          -          -           -          -          -  "
                         "        -          -          %s%-4d\n",
                         PPDouble(seconds), iter) +
         own;
}

std::string IorReport::TestDone(const v1::TestRecord& test) const {
  std::string out;
  if (verbose_) {
    for (const v1::SummaryRow& r : test.summary()) {
      const double bytes_per_s = r.bw_max_mib() * kMiB;
      if (r.operation() == "write") {
        out += absl::StrFormat("Max Write: %.2f MiB/sec (%.2f MB/sec)\n", r.bw_max_mib(),
                               bytes_per_s / kMB);
      } else if (r.operation() == "read") {
        out += absl::StrFormat("Max Read:  %.2f MiB/sec (%.2f MB/sec)\n", r.bw_max_mib(),
                               bytes_per_s / kMB);
      }
    }
  }
  for (const v1::PhaseRecord& p : test.phases()) {
    if (p.repetition() == 0 && p.has_stonewall() && p.spec().stonewall_wear_out() &&
        p.kind() == v1::WRITE && !IsSuperseded(p)) {
      out += absl::StrFormat("Pairs deadlineForStonewallingaccessed: %d\n",
                             p.stonewall().pairs_max());
      break;
    }
  }
  return out + LockstepLines::TestDone(test);
}

std::string IorReport::Footer(const v1::RunRecord& run, const std::string& run_dir) const {
  std::string out;
  std::vector<const v1::SummaryRow*> rows;
  for (const v1::TestRecord& t : run.tests()) {
    for (const v1::SummaryRow& r : t.summary()) {
      // mdtest steps have mdtest's own SUMMARY table.
      if (r.operation() != "mdtest") rows.push_back(&r);
    }
  }
  if (!rows.empty()) {
    out += SummaryHeader();
    for (const v1::SummaryRow* r : rows) out += SummaryRowText(*r, run.ior_reference_number());
  }
  out += KeyVal("Finished", IorTime(run.finished_at()));
  return out + LockstepLines::Footer(run, run_dir);
}

absl::Status IorReportObserver::Print(const std::string& text) {
  if (!text.empty()) out_->Print(text);
  return absl::OkStatus();
}

absl::Status IorReportObserver::OnRunBegin(const v1::RunRecord& run) {
  return Print(report_.Header(run));
}

absl::Status IorReportObserver::OnAgentsReady(const v1::RunRecord& run) {
  return Print(report_.AgentsReady(run));
}

absl::Status IorReportObserver::OnTestStarted(const v1::TestRecord& test,
                                              const v1::PhaseRecord& first) {
  return Print(report_.TestStarted(test, first));
}

absl::Status IorReportObserver::OnPhaseDone(const v1::PhaseRecord& phase) {
  return Print(report_.PhaseDone(phase));
}

absl::Status IorReportObserver::OnFilesRemoved(double seconds, uint32_t iter) {
  return Print(report_.FilesRemoved(seconds, iter));
}

absl::Status IorReportObserver::OnTestDone(const v1::TestRecord& test) {
  return Print(report_.TestDone(test));
}

absl::Status IorReportObserver::OnNote(const std::string& text) {
  return Print(IorReport::Note(text));
}

absl::Status IorReportObserver::OnRunEnd(const v1::RunRecord& run, const std::string& run_dir) {
  return Print(report_.Footer(run, run_dir));
}

std::string RenderIorReport(const v1::RunRecord& run, const std::string& run_dir) {
  ReportText text;
  IorReportObserver report(run.ior_verbose(), &text);
  // It prints into `text`: never fails.
  ReplayRun(run, run_dir, &report, ShowsFailedPhaseOf).IgnoreError();
  return text.text();
}

}  // namespace lockstep
