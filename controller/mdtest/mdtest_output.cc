#include "controller/mdtest/mdtest_output.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/names.h"
#include "controller/record/ior_math.h"

namespace lockstep {
namespace {

// mdtest's rows: directory steps, file steps, tree steps.
constexpr v1::MdtestOp kDirRows[] = {v1::MD_DIR_CREATE, v1::MD_DIR_STAT, v1::MD_DIR_RENAME,
                                     v1::MD_DIR_REMOVE};
constexpr v1::MdtestOp kFileRows[] = {v1::MD_FILE_CREATE, v1::MD_FILE_STAT, v1::MD_FILE_READ,
                                      v1::MD_FILE_REMOVE};
constexpr v1::MdtestOp kTreeRows[] = {v1::MD_TREE_CREATE, v1::MD_TREE_REMOVE};

// The line number mdtest 4.1.0+dev (hpc/ior 5fcf0ba) prints in its -N note.
constexpr int kShiftNoteLine = 2594;

}  // namespace

SampleStats SampleStatistics(const std::vector<double>& values) {
  // IOR's population figures, with mdtest's sample standard deviation (÷ n−1).
  RepStats p = PopulationStats(values);
  SampleStats s{p.max, p.min, p.mean, 0};
  const double n = static_cast<double>(values.size());
  if (values.size() > 1) s.sd = p.sd * std::sqrt(n / (n - 1));
  return s;
}

std::string MdtestTimestamp(int64_t unix_seconds) {
  time_t t = static_cast<time_t>(unix_seconds);
  struct tm local;
  localtime_r(&t, &local);
  char buf[64];
  strftime(buf, sizeof(buf), "%m/%d/%Y %T", &local);
  return buf;
}

std::string FormatMdtestFsLine(const v1::FsStats& fs) {
  const double total = static_cast<double>(fs.blocks()) * static_cast<double>(fs.block_bytes());
  const double free = static_cast<double>(fs.blocks_free()) * static_cast<double>(fs.block_bytes());
  double size = total / static_cast<double>(1ull << 30);
  const char* unit = "GiB";
  if (size > 1024) {
    size = total / static_cast<double>(1ull << 40);
    unit = "TiB";
  }
  const double used = (1 - free / total) * 100;
  // long long, as mdtest: f_ffree = -1 (ceph-fuse) prints mdtest's 133.3%.
  const double inodes_used = (1 - static_cast<double>(static_cast<int64_t>(fs.files_free())) /
                                      static_cast<double>(static_cast<int64_t>(fs.files()))) *
                             100;
  return absl::StrFormat("%-20s: %.1f %s   Used FS: %2.1f%%   Inodes: %.1f Mi   Used Inodes: %2.1f%%\n",
                         "FS", size, unit, used,
                         static_cast<double>(fs.files()) / static_cast<double>(1 << 20),
                         inodes_used);
}

std::optional<v1::FsStats> MdtestFsStats(const v1::RunRecord& record) {
  for (const v1::TestRecord& t : record.tests()) {
    for (const v1::PhaseRecord& p : t.phases()) {
      if (p.kind() != v1::MDTEST) continue;
      for (const v1::AgentPhaseRecord& a : p.agents()) {
        for (const v1::TaskResult& task : a.tasks()) {
          if (task.rank() == 0 && task.has_dir_fs()) return task.dir_fs();
        }
      }
    }
  }
  return std::nullopt;
}

std::string FormatMdtestHeader(const MdtestCommandInfo& info, const std::string& started,
                               const std::optional<v1::FsStats>& fs) {
  std::string s = absl::StrFormat("-- started at %s --\n\n", started);
  s += absl::StrFormat("mdtest-4.1.0+dev was launched with %u total task(s) on %u node(s)\n",
                       info.tasks, info.nodes);
  s += "Command line used: mdtest";
  for (const std::string& a : info.args) s += " '" + a + "'";
  s += "\n";
  if (info.read_warning) s += "WARNING: Read bytes is 0, thus, a read test will actually just open/close\n";
  // 1 for each rank on the node of rank 0 (ranks fill the agents in order).
  std::string map;
  for (uint32_t r = 0; r < info.tasks; ++r) map += r < info.tasks_per_node ? '1' : '0';
  s += "Nodemap: " + map + "\n";
  if (fs) {
    s += absl::StrFormat("%-20s: %s\n", "Path", info.path);
    s += FormatMdtestFsLine(*fs);
  } else {
    s += "WARNING: Backend returned error during statfs\n";
  }
  if (info.shift > 0) {
    s += absl::StrFormat("V-0: Rank %3d Line %5d Shifting ranks by %d for each phase.\n", 0,
                         kShiftNoteLine, info.shift);
  }
  const uint64_t all = uint64_t{info.tasks} * info.items;
  if (info.files && info.dirs) {
    s += absl::StrFormat("%u tasks, %u files/directories\n", info.tasks, all);
  } else if (info.files) {
    s += absl::StrFormat("%u tasks, %u files\n", info.tasks, all);
  } else if (info.dirs) {
    s += absl::StrFormat("%u tasks, %u directories\n", info.tasks, all);
  }
  return s;
}

std::vector<MdtestRow> CollectMdtestRows(const MdtestCommandInfo& info,
                                         const v1::RunRecord& record, bool time, int test_index) {
  std::vector<v1::MdtestOp> ops;
  if (info.dirs) ops.insert(ops.end(), std::begin(kDirRows), std::end(kDirRows));
  if (info.files) ops.insert(ops.end(), std::begin(kFileRows), std::end(kFileRows));
  ops.insert(ops.end(), std::begin(kTreeRows), std::end(kTreeRows));
  std::vector<MdtestRow> out;
  for (v1::MdtestOp op : ops) {
    MdtestRow row;
    row.op = op;
    row.values.assign(std::max<uint32_t>(info.iterations, 1), 0.0);
    if (test_index < record.tests_size()) {
      for (const v1::PhaseRecord& p : record.tests(test_index).phases()) {
        if (p.kind() != v1::MDTEST || p.spec().md_op() != op || !p.ok()) continue;
        if (p.repetition() >= row.values.size()) continue;
        row.values[p.repetition()] = time ? p.row().total_s() : p.md_rate();
      }
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::string FormatMdtestTable(const std::vector<MdtestRow>& rows, uint32_t iterations, bool time) {
  std::string s = time
      ? absl::StrFormat("\nSUMMARY time (in ms/op): (of %u iterations)\n", iterations)
      : absl::StrFormat("\nSUMMARY rate (in ops/sec): (of %u iterations)\n", iterations);
  s += "   Operation                     Max            Min           Mean        Std Dev\n";
  s += "   ---------                     ---            ---           ----        -------\n";
  for (const MdtestRow& r : rows) {
    SampleStats st = SampleStatistics(r.values);
    s += absl::StrFormat("   %-22s %14.3f %14.3f %14.3f %14.3f\n", MdtestOpTitle(r.op), st.max,
                         st.min, st.mean, iterations <= 1 ? 0.0 : st.sd);
  }
  return s;
}

std::string FormatMdtestStonewallLines(const MdtestCommandInfo& info, const v1::RunRecord& record) {
  std::string s;
  if (record.tests_size() == 0) return s;
  for (const v1::PhaseRecord& p : record.tests(0).phases()) {
    if (p.kind() != v1::MDTEST || p.spec().md_stonewall_seconds() == 0 || !p.ok()) continue;
    uint64_t lo = UINT64_MAX, hi = 0, sum = 0, tasks = 0;
    for (const v1::AgentPhaseRecord& a : p.agents()) {
      for (const v1::TaskResult& t : a.tasks()) {
        lo = std::min(lo, t.stonewall_pairs());
        hi = std::max(hi, t.stonewall_pairs());  // what every task continued to
        sum += t.stonewall_pairs();
        ++tasks;
      }
    }
    // mdtest prints it when the wall cut the items short: items != sum / tasks.
    if (tasks == 0 || info.items == sum / tasks) continue;
    s += absl::StrFormat("Continue stonewall hit min: %d max: %d avg: %.1f \n", lo, hi,
                         static_cast<double>(sum) / static_cast<double>(tasks));
  }
  return s;
}

std::string FormatMdtestSummary(const MdtestCommandInfo& info, const v1::RunRecord& record,
                                const std::string& finished) {
  std::string s = FormatMdtestStonewallLines(info, record);
  if (info.print_rate) {
    s += FormatMdtestTable(CollectMdtestRows(info, record, false), info.iterations, false);
  }
  if (info.print_time) {
    s += FormatMdtestTable(CollectMdtestRows(info, record, true), info.iterations, true);
  }
  s += absl::StrFormat("-- finished at %s --\n\n", finished);
  return s;
}

absl::Status MdtestReportObserver::OnPhaseDone(const v1::PhaseRecord& phase) {
  agents_.Keep(phase);
  return absl::OkStatus();
}

namespace {
// The second of an RFC 3339 time of the record; now when it does not parse.
int64_t RecordSecond(const std::string& rfc3339) {
  absl::Time t;
  std::string unparsed;
  if (!absl::ParseTime(absl::RFC3339_full, rfc3339, &t, &unparsed)) t = absl::Now();
  return absl::ToUnixSeconds(t);
}
}  // namespace

absl::Status MdtestReportObserver::OnRunEnd(const v1::RunRecord& run, const std::string&) {
  if (run.tests_size() == 0) return absl::OkStatus();
  const v1::RunRecord full = agents_.Full(run);
  out_->Print(
      FormatMdtestHeader(info_, MdtestTimestamp(RecordSecond(run.started_at())),
                         MdtestFsStats(full)) +
      FormatMdtestSummary(info_, full, MdtestTimestamp(RecordSecond(run.finished_at()))));
  return absl::OkStatus();
}

v1::MdtestReportInfo MdtestReportInfoOf(const MdtestCommandInfo& info) {
  v1::MdtestReportInfo r;
  for (const std::string& a : info.args) r.add_args(a);
  r.set_path(info.path);
  r.set_tasks(info.tasks);
  r.set_nodes(info.nodes);
  r.set_tasks_per_node(info.tasks_per_node);
  r.set_read_warning(info.read_warning);
  r.set_shift(info.shift);
  r.set_files(info.files);
  r.set_dirs(info.dirs);
  r.set_items(info.items);
  r.set_iterations(info.iterations);
  r.set_print_rate(info.print_rate);
  r.set_print_time(info.print_time);
  return r;
}

MdtestCommandInfo MdtestCommandInfoOf(const v1::MdtestReportInfo& r) {
  MdtestCommandInfo info;
  info.args.assign(r.args().begin(), r.args().end());
  info.path = r.path();
  info.tasks = r.tasks();
  info.nodes = r.nodes();
  info.tasks_per_node = r.tasks_per_node();
  info.read_warning = r.read_warning();
  info.shift = r.shift();
  info.files = r.files();
  info.dirs = r.dirs();
  info.items = r.items();
  info.iterations = r.iterations();
  info.print_rate = r.print_rate();
  info.print_time = r.print_time();
  return info;
}

}  // namespace lockstep
