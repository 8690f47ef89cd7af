#include "controller/ior/lockstep_lines.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/record/layers.h"
#include "absl/strings/str_split.h"
#include "common/names.h"
#include "controller/ior/ior_report.h"
#include "controller/plan/phase_kind.h"
#include "controller/record/ior_math.h"
#include "controller/record/telemetry_summary.h"

namespace lockstep {

std::string LockstepLines::AgentsReady(const v1::RunRecord& run) {
  for (const v1::AgentRecord& a : run.agents()) host_by_address_[a.address()] = a.facts().hostname();
  size_t clients = 0;
  for (const v1::AgentRecord& a : run.agents()) clients += a.role() == v1::CLIENT;
  std::string out = absl::StrFormat("# lockstep %s, run %s (%s)\n", run.lockstep_version(),
                                    run.run_id(), run.plan_file());
  if (!run.ior_command_line().empty()) out += "# command: " + run.command_line() + "\n";
  if (run.smoke()) {
    out += "# smoke run (--smoke): sizes capped, one repetition; a check that the plan runs, "
           "not a measurement of it\n";
    for (const std::string& c : run.smoke_changes()) out += "#   " + c + "\n";
  }
  out += absl::StrFormat("# agents: %u (%u client)\n", run.agents_size(), clients);
  for (const v1::AgentRecord& a : run.agents()) {
    const v1::HostFacts& f = a.facts();
    out += absl::StrFormat(
        "#   %-21s %-6s %s, %u cores, kernel %s, %s, clock offset %+.1f us (±%.1f us)\n",
        a.address(), RoleName(a.role()), f.hostname(), f.cores(), f.kernel(),
        f.roots_size() > 0 ? f.roots(0).fs_type() : "?",
        static_cast<double>(a.clock().offset_ns()) / 1e3,
        static_cast<double>(a.clock().delay_ns()) / 2e3);
  }
  return out;
}

std::string LockstepLines::TestStarted(const v1::TestRecord& test) {
  if (!IorTestParamsOf(test).direct) return "";
  return absl::StrFormat("# %-20s: %s\n", "O_DIRECT", "yes");
}

std::string LockstepLines::PhaseDone(const v1::PhaseRecord& p) const {
  std::string out;
  for (const std::string& line : KindOf(p.kind()).ReportNotes(p, host_by_address_)) {
    out += "# " + line + "\n";
  }
  for (const v1::IterationRow& extra : p.extra_rows()) out += "# " + IorIterationRow(extra);
  if (p.skew_exceeded()) {
    out += absl::StrFormat(
        "# start skew %.1f us (± %.1f us of clock uncertainty) of %s exceeds max_start_skew_us "
        "(marked)\n",
        p.start_skew_ns() / 1e3, p.start_skew_uncertainty_ns() / 1e3, p.phase_id());
  }
  if (p.has_stonewall() && p.spec().stonewall_wear_out() &&
      (p.stonewall().tail_s() > 0 || p.stonewall().stop_after_deadline_ms() > 0)) {
    // What slow media stretch (IO500's complaint): not an IOR line.
    out += absl::StrFormat(
        "# wear-out tail %.3f s after the stonewall; the last task stopped issuing new work "
        "%.3f ms after its deadline\n",
        p.stonewall().tail_s(), p.stonewall().stop_after_deadline_ms());
  }
  // A record of earlier versions kept the lines as text; a record now has
  // the telemetry they are rendered from.
  const std::vector<std::string> telemetry =
      p.telemetry_lines_size() > 0
          ? std::vector<std::string>(p.telemetry_lines().begin(), p.telemetry_lines().end())
          : TelemetryLines(p, host_by_address_);
  for (const std::string& line : telemetry) out += "#" + line + "\n";
  return out;
}

std::string LockstepLines::Note(const std::string& text) {
  std::string out;
  for (const auto& line : absl::StrSplit(text, '\n')) absl::StrAppend(&out, "# ", line, "\n");
  return out;
}

std::string LockstepLines::FilesRemoved(double seconds, uint32_t iter) {
  return absl::StrFormat("# remove    %s iter %d\n", PPDouble(seconds), iter);
}

std::string LockstepLines::TestDone(const v1::TestRecord& test) {
  std::string table;
  for (const v1::PhaseRecord& p : test.phases()) {
    if (IsSuperseded(p)) continue;
    table += absl::StrFormat("#   %-12s %4u  %14.1f%s %16.1f  %11.1f  %7.1f  %9.1f  %7.1f\n",
                             p.phase(), p.repetition(), p.start_skew_ns() / 1e3,
                             p.skew_exceeded() ? "!" : " ", p.release_skew_ns() / 1e3,
                             p.latency().p50_us(), p.latency().p99_us(), p.latency().p999_us(),
                             p.latency().max_us());
  }
  std::string layers;  // issue 42: the end-to-end figures beside the layers below
  for (const std::string& line : LayersLines({test.layers().begin(), test.layers().end()})) {
    layers += "# " + line + "\n";
  }
  if (table.empty()) return layers;
  return "#   phase        iter  start skew(us)  release skew(us)  lat p50(us)  p99(us)  "
         "p99.9(us)  max(us)\n" +
         table + layers;
}

std::string LockstepLines::Footer(const v1::RunRecord& run, const std::string& run_dir) {
  std::string out;
  if (run.status() != "complete" && !run.status().empty()) {
    out += Note(absl::StrFormat("Status : %s: %s", run.status(), run.error()));
  }
  if (!run_dir.empty()) out += absl::StrFormat("# Results : %s/\n", run_dir);
  return out;
}

absl::Status LockstepLinesObserver::Print(const std::string& text) {
  if (!text.empty()) out_->Print(text);
  return absl::OkStatus();
}

absl::Status LockstepLinesObserver::OnAgentsReady(const v1::RunRecord& run) {
  return Print(lines_.AgentsReady(run));
}

absl::Status LockstepLinesObserver::OnTestStarted(const v1::TestRecord& test,
                                                  const v1::PhaseRecord&) {
  if (started_test_ == static_cast<int>(test.test_id())) return absl::OkStatus();
  started_test_ = static_cast<int>(test.test_id());
  return Print(LockstepLines::TestStarted(test));
}

absl::Status LockstepLinesObserver::OnPhaseDone(const v1::PhaseRecord& phase) {
  return Print(lines_.PhaseDone(phase));
}

absl::Status LockstepLinesObserver::OnFilesRemoved(double seconds, uint32_t iter) {
  return Print(LockstepLines::FilesRemoved(seconds, iter));
}

absl::Status LockstepLinesObserver::OnTestDone(const v1::TestRecord& test) {
  return Print(LockstepLines::TestDone(test));
}

absl::Status LockstepLinesObserver::OnNote(const std::string& text) {
  return Print(LockstepLines::Note(text));
}

absl::Status LockstepLinesObserver::OnRunEnd(const v1::RunRecord& run, const std::string& run_dir) {
  return Print(LockstepLines::Footer(run, run_dir));
}

}  // namespace lockstep
