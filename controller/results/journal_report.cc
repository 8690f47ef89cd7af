#include "controller/results/journal_report.h"

#include <cstdio>
#include <algorithm>

#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "controller/record/fold.h"
#include "controller/record/journal.h"
#include "controller/record/ior_math.h"
#include "controller/ior/ior_report.h"
#include "controller/record/run_observer.h"
#include "controller/record/phase_reduce.h"
#include "controller/record/run_status.h"
#include "controller/record/telemetry_file.h"
#include "controller/results/run_report.h"
#include "controller/plan/plan.h"
#include "controller/plan/sweep.h"
#include "common/json.h"
#include "common/names.h"

namespace lockstep {
namespace {

std::string RoleLabel(v1::Role role) {
  return role == v1::CLIENT ? "clients" : RoleName(role);
}

// "t0-r1-w: lead 29.1 ms, slowest start margin 16.0 ms (127.0.0.1:4001)".
std::string StartLine(const v1::PhaseRecord& p) {
  std::string line = absl::StrFormat("#   %s:", p.phase_id());
  if (p.lead_ns() != 0) line += absl::StrFormat(" lead %.1f ms,", p.lead_ns() / 1e6);
  const v1::AgentPhaseRecord* slowest = SlowestStartClient(p);
  if (slowest != nullptr || p.start_margin_ns() != 0) {
    const int64_t margin_ns = slowest ? slowest->start_margin_ns() : p.start_margin_ns();
    line += absl::StrFormat(" slowest agent's start margin %.1f ms%s%s", margin_ns / 1e6,
                            slowest ? " (" + slowest->address() + ")" : "",
                            margin_ns < 0 ? ": Start arrived after the instant" : "");
  } else {
    line += " no start margin recorded";
  }
  if (p.start_last_sent_unix_ns() > p.start_first_sent_unix_ns() &&
      p.start_first_sent_unix_ns() != 0) {
    line += absl::StrFormat(", Starts sent over %.1f ms",
                            (p.start_last_sent_unix_ns() - p.start_first_sent_unix_ns()) / 1e6);
  }
  return line + "\n";
}

std::string RoleLine(const v1::RoleTelemetry& r) {
  const v1::TelemetryBrief& m = r.mean();
  return absl::StrFormat(
      "#     %s (%u agent%s, %u host%s): busy %.1f of %u cores (max %.1f); cpu %.0f%% user, "
      "%.0f%% sys, %.0f%% iowait; disk %.1f MB/s read, %.1f MB/s write; net %.1f MB/s rx, "
      "%.1f MB/s tx; load1 max %.1f%s\n",
      RoleLabel(r.role()), r.agents(), r.agents() == 1 ? "" : "s", r.hosts(),
      r.hosts() == 1 ? "" : "s", m.busy_cores().mean(), m.cores(), r.max().busy_cores().max(),
      m.user_pct(), m.system_pct(), m.iowait_pct(), m.disk_read_mb_s(), m.disk_write_mb_s(),
      m.net_rx_mb_s(), m.net_tx_mb_s(), r.max().load1_max(),
      r.max().warnings() > 0 ? absl::StrFormat("; %u warning(s) in %s", r.max().warnings(),
                                               kTelemetryFile)
                             : "");
}

}  // namespace

std::string FormatPhaseStarts(const v1::RunRecord& run) {
  std::string out;
  for (const v1::TestRecord& t : run.tests()) {
    for (const v1::PhaseRecord& p : t.phases()) {
      const bool has_start = p.lead_ns() != 0 || p.start_margin_ns() != 0;
      if (!has_start && p.role_telemetry_size() == 0) continue;
      out += StartLine(p);
      for (const v1::RoleTelemetry& r : p.role_telemetry()) out += RoleLine(r);
    }
  }
  if (out.empty()) return out;
  return "# Per phase: the start instant's lead and the margin by which the slowest agent had "
         "its Start; host telemetry by role (means over hosts)\n" +
         out;
}

std::string FormatRunSummary(const v1::RunRecord& run) { return RenderRunReport(run, ""); }

absl::StatusOr<RebuiltRun> RebuildRun(const std::string& run_dir) {
  RebuiltRun out;
  // Asked first: a controller that ends after this wrote its run.json
  // before it let the journal go, so a run not held now has its last
  // run.json (or none) already in place and a rebuild never replaces it.
  const bool held = JournalIsHeld(run_dir);
  auto json = ReadFileToString(run_dir + "/run.json");
  if (json.ok()) {
    auto s = google::protobuf::util::JsonStringToMessage(*json, &out.record);
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s/run.json does not parse (%s); move it aside and run `lockstep report %s` again to "
          "rebuild it from the journal",
          run_dir, s.ToString(), run_dir));
    }
    // The telemetry lines print from the agents' full telemetry.
    out.warning = RestoreTelemetryFromDir(run_dir, &out.record);
    out.text = RenderRunReport(out.record, run_dir) + FormatPhaseStarts(out.record);
    return out;
  }
  auto journal = ReadFileToString(run_dir + "/journal.jsonl");
  if (!journal.ok()) {
    return absl::NotFoundError(absl::StrFormat(
        "%s has neither run.json nor journal.jsonl: not a lockstep run directory", run_dir));
  }
  out.from_journal = true;
  v1::RunRecord& run = out.record;
  // What the run knew before its first phase (run-start.json: the Began and
  // Command line lines, the agents); a run from before it has none.
  auto start = ReadFileToString(run_dir + "/run-start.json");
  const bool started = start.ok() && google::protobuf::util::JsonStringToMessage(*start, &run).ok();
  if (!started) {
    run.Clear();
    // A run from before run-start.json: as `lockstep run` prints, with the
    // Max Write/Read lines (run-start.json carries the front end's choice).
    run.set_ior_verbose(true);
  }
  run.clear_tests();
  run.set_format_version(1);
  std::string base = run_dir;
  while (!base.empty() && base.back() == '/') base.pop_back();
  run.set_run_id(base.substr(base.find_last_of('/') + 1));
  auto plan = ReadFileToString(run_dir + "/plan.toml");
  if (plan.ok()) run.set_plan_sha256(Sha256Hex(*plan));
  // The tests as the run began them and their phases (record/journal.h).
  const ReplayedJournal journal_read = ReplayJournal(*journal, &run);
  out.torn_lines = journal_read.torn_lines;
  if (!journal_read.inferred_tests.empty()) {
    // An older journal, without test_start lines: what the live run knew
    // from the plan, from the plan the run kept when it still parses (the
    // repetitions planned, the sweep point), else what the lines reached.
    const absl::StatusOr<Plan> parsed =
        plan.ok() ? ParsePlan(*plan, run_dir + "/plan.toml") : absl::StatusOr<Plan>(plan.status());
    for (v1::TestRecord& t : *run.mutable_tests()) {
      if (!parsed.ok() || journal_read.inferred_tests.count(t.test_id()) == 0) continue;
      t.set_repetitions(std::max(t.repetitions(), parsed->repetitions));
      for (const v1::SweepValue& v : SweepValuesOf(*parsed, t.test_id())) *t.add_sweep() = v;
    }
  }
  // The live run's rules: each test folded (record/fold.h), the status from
  // how the run ended (record/run_status.h); without a run_end line the
  // controller stopped before its end.
  for (v1::TestRecord& t : *run.mutable_tests()) FoldTest(run, &t);
  v1::RunEnd end;
  end.set_ending(v1::RunEnd::INTERRUPTED);
  end.set_error("the controller stopped before writing run.json; rebuilt from journal.jsonl");
  ApplyRunEnd(journal_read.end.value_or(end), &run);
  out.running = held;
  if (out.running) {
    run.set_status("running");
    run.set_error("the run is still going (its controller holds journal.jsonl): rebuilt from "
                  "the journal so far");
  }
  out.warning = RestoreTelemetryFromDir(run_dir, &run);
  out.text = RenderRunReport(run, run_dir) + FormatPhaseStarts(run);
  return out;
}

absl::Status WriteRebuiltRun(const std::string& run_dir, const RebuiltRun& run) {
  if (!run.from_journal || run.running) return absl::OkStatus();
  // As a run writes it: the agents' full telemetry stays in telemetry.pb.gz.
  v1::RunRecord record = run.record;
  for (v1::TestRecord& t : *record.mutable_tests()) {
    for (v1::PhaseRecord& p : *t.mutable_phases()) {
      for (v1::AgentPhaseRecord& a : *p.mutable_agents()) a.clear_telemetry();
    }
  }
  RETURN_IF_ERROR(WriteFileAtomically(run_dir + "/run.json", ToJson(record, true) + "\n"));
  return WriteSummaryTxt(run_dir, run.text);
}

}  // namespace lockstep
