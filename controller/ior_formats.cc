#include "controller/ior_formats.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

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

std::string FormatIorJson(const v1::RunRecord& rec) {
  std::vector<std::string> tests;
  std::vector<std::string> summary;
  for (const v1::TestRecord& t : rec.tests()) {
    Obj params;
    const v1::PhaseSpec* spec = t.phases_size() > 0 ? &t.phases(0).spec() : nullptr;
    params.I("numTasks", t.total_tasks()).I("nodes", t.client_agents())
        .I("tasksPerNode", t.tasks_per_agent());
    if (spec != nullptr) {
      params.S("testFileName", spec->dir() + "/" + spec->file_name())
          .I("filePerProc", spec->file_per_process() ? 1 : 0)
          .I("segmentCount", spec->segments())
          .I("blockSize", spec->block_bytes())
          .I("transferSize", spec->transfer_bytes())
          .I("randomOffset", spec->random_offsets() ? 1 : 0)
          .I("deadlineForStonewalling", spec->stonewall_seconds())
          .I("stoneWallingWearOut", spec->stonewall_wear_out() ? 1 : 0)
          .I("fsync", spec->fsync_at_end() ? 1 : 0)
          .I("fsyncPerWrite", spec->fsync_per_transfer() ? 1 : 0)
          .I("useO_DIRECT", spec->direct() ? 1 : 0);
    }
    std::vector<std::string> results;
    for (const v1::PhaseRecord& p : t.phases()) {
      std::vector<const v1::IterationRow*> rows = {&p.row()};
      for (const auto& x : p.extra_rows()) rows.push_back(&x);
      if (p.has_remove_row()) rows.push_back(&p.remove_row());
      for (const v1::IterationRow* r : rows) {
        Obj o;
        o.S("access", r->access()).D("bwMiB", r->bw_mib()).D("blockKiB", r->block_kib())
            .D("xferKiB", r->xfer_kib()).D("iops", r->iops()).D("latency", r->latency_s())
            .D("openTime", r->open_s()).D("wrRdTime", r->wrrd_s()).D("closeTime", r->close_s())
            .D("totalTime", r->total_s()).I("iteration", r->iter());
        results.push_back(o.Str("      "));
      }
    }
    Obj test;
    test.I("TestID", t.test_id())
        .Raw("Parameters", params.Str("    "))
        .Raw("Results", Array(results, "    "));
    tests.push_back(test.Str("  "));
    for (const v1::SummaryRow& s : t.summary()) {
      Obj o;
      o.S("operation", s.operation()).S("API", s.api().empty() ? "POSIX" : s.api())
          .I("TestID", s.test_id()).I("ReferenceNumber", 0).I("segmentCount", s.segments())
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
      summary.push_back(o.Str("  "));
    }
  }
  Obj top;
  top.S("Version", "lockstep-" + rec.lockstep_version())
      .S("Began", rec.started_at())
      .S("Command line", rec.command_line())
      .S("Machine", "Linux " + rec.controller_host())
      .Raw("tests", Array(tests, ""))
      .Raw("summary", Array(summary, ""))
      .S("Finished", rec.finished_at())
      .S("Status", rec.status());
  return top.Str("") + "\n";
}

std::string FormatIorCsv(const v1::RunRecord& rec) {
  std::string s =
      "access,bw(MiB/s),IOPs,Latency,block(KiB),xfer(KiB),open(s),wr/rd(s),close(s),total(s),"
      "numTasks,iter\n";
  for (const v1::TestRecord& t : rec.tests()) {
    for (const v1::PhaseRecord& p : t.phases()) {
      std::vector<const v1::IterationRow*> rows = {&p.row()};
      for (const auto& x : p.extra_rows()) rows.push_back(&x);
      if (p.has_remove_row()) rows.push_back(&p.remove_row());
      for (const v1::IterationRow* r : rows) {
        s += absl::StrFormat("%s,%.2f,%.2f,%.4f,%.2f,%.2f,%.4f,%.4f,%.4f,%.4f,%u,%u\n",
                             r->access(), r->bw_mib(), r->iops(), r->latency_s(), r->block_kib(),
                             r->xfer_kib(), r->open_s(), r->wrrd_s(), r->close_s(), r->total_s(),
                             t.total_tasks(), r->iter());
      }
    }
  }
  return s;
}

}  // namespace lockstep
