#include "controller/ior/ior_formats.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/layout.h"
#include "controller/record/ior_math.h"
#include "controller/ior/ior_report.h"

namespace lockstep {
namespace {

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", static_cast<int>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string Num(double v) { return std::isfinite(v) ? absl::StrFormat("%.6f", v) : "0"; }

// An ordered JSON object: fields keep the order they were added in (IOR's).
class Obj {
 public:
  Obj& S(const std::string& k, const std::string& v) { return Raw(k, Quote(v)); }
  Obj& D(const std::string& k, double v) { return Raw(k, Num(v)); }
  Obj& I(const std::string& k, uint64_t v) { return Raw(k, absl::StrFormat("%u", v)); }
  Obj& Raw(const std::string& k, const std::string& v) {
    fields_.push_back(Quote(k) + ": " + v);
    return *this;
  }
  std::string Str(const std::string& indent) const {
    if (fields_.empty()) return "{}";
    return "{\n" + indent + "  " + absl::StrJoin(fields_, ",\n" + indent + "  ") + "\n" + indent +
           "}";
  }

 private:
  std::vector<std::string> fields_;
};

std::string Array(const std::vector<std::string>& items, const std::string& indent) {
  if (items.empty()) return "[]";
  return "[\n" + indent + "  " + absl::StrJoin(items, ",\n" + indent + "  ") + "\n" + indent + "]";
}

}  // namespace

namespace {

bool IsTransfer(v1::PhaseKind k) { return k == v1::WRITE || k == v1::READ || k == v1::REWRITE; }

std::string Percent(double pct) { return absl::StrFormat("%2.1f%%", pct); }

std::string TestJson(const v1::TestRecord& t, const v1::RunRecord& rec) {
  const IorTestParams p = IorTestParamsOf(t, &rec);
  const v1::PhaseSpec& s = p.layout;
  const TestReorder& reorder = p.reorder;
  bool removed = false;  // IOR's keepFile: no timed removal in the test
  for (const v1::PhaseRecord& ph : t.phases()) removed |= ph.has_remove_row();
  const bool keep = !removed;
  const std::string path = s.dir() + "/" + s.file_name();
  v1::FsStats fs;
  for (const v1::PhaseRecord& ph : t.phases()) {
    if (ph.has_dir_fs()) {
      fs = ph.dir_fs();
      break;
    }
  }
  const IorFsFigures f = IorFsFiguresOf(fs);
  Obj params;
  params.I("testID", t.test_id()).Raw("refnum", absl::StrCat(rec.ior_reference_number())).S("api", "POSIX")
      .S("platform", rec.controller_host() + "(Linux)").S("testFileName", path)
      .I("deadlineForStonewall", p.stonewall_seconds)
      .I("stoneWallingWearOut", p.stonewall_wear_out ? 1 : 0)
      .I("maxTimeDuration", 0).I("outlierThreshold", 0).S("options", "(null)").I("dryRun", 0)
      .I("nodes", t.client_agents()).I("memoryPerTask", 0).I("memoryPerNode", 0)
      .I("tasksPerNode", t.tasks_per_agent()).I("repetitions", t.repetitions())
      .I("multiFile", s.multi_file() ? 1 : 0).I("interTestDelay", s.delay_seconds()).I("fsync", p.fsync ? 1 : 0)
      .I("fsyncperwrite", p.fsync_per_transfer ? 1 : 0).I("useExistingTestFile", 0).I("uniqueDir", 0)
      .I("singleXferAttempt", 0).I("readFile", p.read ? 1 : 0).I("writeFile", p.write ? 1 : 0)
      .I("filePerProc", s.file_per_process() ? 1 : 0).I("reorderTasks", reorder.node_offset > 0 ? 1 : 0)
      .I("reorderTasksRandom", reorder.random ? 1 : 0)
      .Raw("reorderTasksRandomSeed", absl::StrCat(reorder.random_seed))
      .I("randomOffset", p.random_blocks ? 2 : p.random_offsets ? 1 : 0)
      .I("checkWrite", p.verify_after_write ? 1 : 0)
      .I("checkRead", p.verify ? 1 : 0).I("dataPacketType", 0).I("keepFile", keep ? 1 : 0)
      .I("keepFileWithError", 0).I("warningAsErrors", 0).I("verbose", rec.ior_verbose() ? 1 : 0)
      .S("data packet type", "g").I("setTimeStampSignature/incompressibleSeed", 0)
      .I("collective", 0).I("segmentCount", s.segments()).I("transferSize", s.transfer_bytes())
      .I("blockSize", s.block_bytes()).I("useO_DIRECT", p.direct ? 1 : 0);
  Obj options;
  options.S("api", "POSIX").S("apiVersion", "").S("test filename", path)
      .S("access", s.file_per_process() ? "file-per-process" : "single-shared-file")
      .S("type", "independent").I("segments", s.segments())
      .S("ordering in a file", p.random_offsets ? "random" : "sequential")
      .S("ordering inter file", reorder.node_offset > 0 ? "constant task offset"
                                : reorder.random       ? "random task offset"
                                                       : "no tasks offsets");
  if (reorder.node_offset > 0) options.I("task offset", reorder.node_offset);
  if (reorder.random) {
    options.I("task offset", reorder.task_offset)
        .Raw("reorder random seed", absl::StrCat(reorder.random_seed));
  }
  options.I("nodes", t.client_agents()).I("tasks", t.total_tasks())
      .I("clients per node", t.tasks_per_agent()).S("memoryBuffer", "CPU")
      .S("dataAccess", "CPU").S("GPUDirect", "0").I("repetitions", t.repetitions())
      .S("xfersize", IorHumanBytes(s.transfer_bytes()))
      .S("blocksize", IorHumanBytes(s.block_bytes()))
      .S("aggregate filesize",
         IorHumanBytes(s.block_bytes() * s.segments() * t.total_tasks()));
  if (p.stonewall_seconds > 0) {
    options.I("stonewallingTime", p.stonewall_seconds)
        .I("stoneWallingWearOut", p.stonewall_wear_out ? 1 : 0);
  }
  std::vector<std::string> results;
  for (const v1::PhaseRecord& ph : t.phases()) {
    if (!ph.ok() || !IsTransfer(ph.kind())) continue;
    const v1::IterationRow& r = ph.row();
    Obj o;
    o.S("access", r.access()).D("bwMiB", r.bw_mib()).D("blockKiB", r.block_kib())
        .D("xferKiB", r.xfer_kib()).D("iops", r.iops()).D("latency", r.latency_s())
        .D("openTime", r.open_s()).D("wrRdTime", r.wrrd_s()).D("closeTime", r.close_s())
        .D("totalTime", r.total_s()).I("iteration", r.iter());
    results.push_back(o.Str("      "));
  }
  Obj test;
  test.I("TestID", t.test_id()).S("StartTime", IorTime(t.started_at()))
      .S("Path", TaskFilePath(s.dir(), s, 0))
      .S("Capacity", absl::StrFormat("%.1f %s", f.size, f.unit))
      .S("Used Capacity", Percent(f.used_pct))
      .S("Inodes", absl::StrFormat("%.1f Mi", f.inodes_mi))
      .S("Used Inodes", Percent(f.used_inodes_pct))
      .Raw("Parameters", params.Str("    "))
      .Raw("Options", options.Str("    "))
      .Raw("Results", Array(results, "    "));
  return test.Str("  ");
}

}  // namespace

std::string FormatIorJson(const v1::RunRecord& rec, const std::string& run_dir) {
  std::vector<std::string> tests;
  std::vector<std::string> summary;
  for (const v1::TestRecord& t : rec.tests()) {
    tests.push_back(TestJson(t, rec));
    for (const v1::SummaryRow& s : t.summary()) {
      if (s.operation() == "mdtest") continue;
      Obj o;
      o.S("operation", s.operation()).S("API", s.api().empty() ? "POSIX" : s.api())
          .I("TestID", s.test_id()).Raw("ReferenceNumber", absl::StrCat(rec.ior_reference_number())).I("segmentCount", s.segments())
          .I("blockSize", s.block_bytes()).I("transferSize", s.transfer_bytes())
          .I("numTasks", s.num_tasks()).I("tasksPerNode", s.tasks_per_node())
          .I("repetitions", s.repetitions()).I("filePerProc", s.file_per_process() ? 1 : 0)
          .I("reorderTasks", s.reorder()).I("taskPerNodeOffset", s.reorder_offset())
          .I("reorderTasksRandom", s.reorder_random())
          .Raw("reorderTasksRandomSeed", absl::StrFormat("%d", s.reorder_random_seed()))
          .D("bwMaxMIB", s.bw_max_mib()).D("bwMinMIB", s.bw_min_mib())
          .D("bwMeanMIB", s.bw_mean_mib()).D("bwStdMIB", s.bw_std_mib())
          .D("OPsMax", s.ops_max()).D("OPsMin", s.ops_min()).D("OPsMean", s.ops_mean())
          .D("OPsSD", s.ops_std()).D("MeanTime", s.mean_time_s())
          .D("xsizeMiB", s.aggregate_mib());
      if (s.stonewall()) o.D("StonewallTime", s.stonewall_s()).D("StonewallMiB", s.stonewall_mib());
      summary.push_back(o.Str("  "));
    }
  }
  Obj lockstep;
  lockstep.S("version", rec.lockstep_version()).S("run_id", rec.run_id())
      .S("run_dir", run_dir).S("status", rec.status()).S("error", rec.error())
      .S("command_line", rec.command_line());
  Obj top;
  top.S("Version", "4.1.0+dev")
      .S("Began", IorTime(rec.started_at()))
      .S("Command line", rec.ior_command_line().empty() ? rec.command_line()
                                                         : rec.ior_command_line())
      .S("Machine", "Linux " + rec.controller_host())
      .Raw("tests", Array(tests, ""))
      .Raw("summary", Array(summary, ""))
      .S("Finished", IorTime(rec.finished_at()))
      .Raw("lockstep", lockstep.Str(""));
  return top.Str("") + "\n";
}

std::string FormatIorCsv(const v1::RunRecord& rec) {
  std::string s =
      "access,bw(MiB/s),IOPS,Latency,block(KiB),xfer(KiB),open(s),wr/rd(s),close(s),total(s),"
      "numTasks,iter\n";
  for (const v1::TestRecord& t : rec.tests()) {
    for (const v1::PhaseRecord& p : t.phases()) {
      if (!p.ok() || !IsTransfer(p.kind())) continue;
      const v1::IterationRow& r = p.row();
      s += absl::StrFormat("%s,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%u,%u\n", r.access(),
                           r.bw_mib(), r.iops(), r.latency_s(), r.block_kib(), r.xfer_kib(),
                           r.open_s(), r.wrrd_s(), r.close_s(), r.total_s(), t.total_tasks(),
                           r.iter());
    }
  }
  return s;
}

}  // namespace lockstep
