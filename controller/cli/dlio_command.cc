// `lockstep dlio CONFIG.yaml`: DLIO's workload YAML -> a plan
// (controller/dlio) -> run -> DLIO's per-epoch and [METRIC] lines from
// run.json; --find-max-accelerators sweeps the train phase.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "controller/plan/plan.h"
#include "controller/cli/cli_commands.h"
#include "controller/cli/cli_common.h"
#include "controller/cli/command_specs.h"
#include "controller/cli/exit_codes.h"
#include "controller/cli/front_end.h"
#include "controller/cli/reach_agents.h"
#include "controller/dlio/accelerator_sweep.h"
#include "controller/dlio/dlio_config.h"
#include "controller/dlio/dlio_plan.h"
#include "controller/cli/printed_report.h"
#include "common/limits.h"
#include "controller/plan/write_places.h"
#include "controller/run/coordinator.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

// Everything the runs share, decided before the first.
struct DlioRun {
  DlioConfig config;
  DlioPlanOptions plan_options;
  // Local agents: the directories PlaceLocally created (a --smoke run
  // removes those left empty).
  std::vector<std::string> created_dirs;
};

// The directories create_directories(dir) would create.
std::vector<std::string> MissingDirs(const fs::path& dir) {
  std::vector<std::string> missing;
  std::error_code ec;
  for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p.string());
    if (p == p.parent_path()) break;
  }
  return missing;
}

// Local agents: the data folder made absolute (DLIO's is relative to the
// working directory) and the checkpoint folder (a relative one below it:
// DlioCheckpointDir), checked, created; the agents' root is their common
// ancestor.
absl::Status PlaceLocally(const ParsedFlags& f, DlioRun* run, std::string* local_root) {
  DlioConfig& c = run->config;
  const std::string data = AbsolutePath(DlioDataDir(c, run->plan_options));
  run->plan_options.data_dir = data;
  const std::string ckpt = AbsolutePath(DlioCheckpointDir(c, run->plan_options));
  c.checkpoint_folder = ckpt;
  const LocalWritePlaces places = CommandLineWritePlaces(f.GetList("root"));
  std::error_code ec;
  fs::path root;
  for (const auto& [dir, what] : {std::pair{data, "dataset.data_folder"},
                                  std::pair{ckpt, "checkpoint.checkpoint_folder"}}) {
    if (absl::Status w = CheckLocalWritePlace(dir, places, what); !w.ok()) {
      return absl::InvalidArgumentError(w.message());
    }
    for (std::string& m : MissingDirs(dir)) run->created_dirs.push_back(std::move(m));
    fs::create_directories(dir, ec);
    if (ec) {
      return absl::InvalidArgumentError(
          absl::StrFormat("cannot create %s (%s): %s", dir, what, ec.message()));
    }
    if (root.empty()) {
      root = dir;
      continue;
    }
    fs::path common;
    const fs::path other(dir);
    for (auto a = root.begin(), b = other.begin();
         a != root.end() && b != other.end() && *a == *b; ++a, ++b) {
      common /= *a;
    }
    root = common;
  }
  // Folders whose common ancestor is a system directory ("/" of /mnt/data
  // and /scratch/ckpt): the data folder is the root, and the checkpoint
  // folder, an absolute phase directory, a root of its own.
  *local_root = IsSystemDirectory(root.string()) ? data : root.string();
  return absl::OkStatus();
}

// DLIO's per-epoch and [METRIC] lines (its statscounter.py wording) for the
// phases of one run.
void PrintDlioMetrics(const v1::RunRecord& record) {
  for (const v1::TestRecord& t : record.tests()) {
    for (const v1::PhaseRecord& p : t.phases()) {
      const v1::AiSummary& ai = p.ai();
      std::string out;
      if (p.kind() == v1::TRAIN) {
        double sum = 0, sq = 0;
        for (int e = 0; e < ai.epoch_au_size(); ++e) {
          out += absl::StrFormat("[OUTPUT] Epoch %d [Training] Accelerator Utilization [AU] "
                                 "(%%): %.4f\n",
                                 e + 1, 100 * ai.epoch_au(e));
          sum += ai.epoch_au(e);
          sq += ai.epoch_au(e) * ai.epoch_au(e);
        }
        const double n = std::max(1, ai.epoch_au_size());
        const double mean = sum / n, sd = std::sqrt(std::max(0.0, sq / n - mean * mean));
        out += "[METRIC] ==========================================================\n";
        out += absl::StrFormat("[METRIC] Number of Simulated Accelerators: %u\n", ai.accelerators());
        out += absl::StrFormat("[METRIC] Training Accelerator Utilization [AU] (%%): %.4f (%.4f)\n",
                               100 * mean, 100 * sd);
        out += absl::StrFormat("[METRIC] Training Throughput (samples/second): %.4f\n",
                               ai.samples_per_s());
        out += absl::StrFormat("[METRIC] Training I/O Throughput (MB/second): %.4f\n",
                               ai.mib_per_s());
        out += absl::StrFormat("[METRIC] train_au_meet_expectation: %s\n",
                               ai.au_passed() ? "success" : "fail");
        out += "[METRIC] ==========================================================\n";
        out += "# lockstep dlio: AU (%) is the mean over epochs and its (stdev) across epochs, "
               "as DLIO's; throughput over the whole phase (DLIO: the mean of the epochs'); "
               "MB is 2^20 bytes, as DLIO's\n";
      } else if (p.kind() == v1::CHECKPOINT) {
        const bool save = p.spec().checkpoint_op() == v1::CHECKPOINT_WRITE;
        out += absl::StrFormat("[METRIC] Checkpoint %s duration (seconds): %.4f\n",
                               save ? "save" : "load", ai.max_duration_s());
        out += absl::StrFormat("[METRIC] Checkpoint %s I/O Throughput (GB/second): %.4f\n",
                               save ? "save" : "load", ai.aggregate_mib_per_s() / 1024);
      }
      PrintToStdout(out);
    }
  }
}

// Where the checkpoints went, on every client agent ("host:/path"; a
// relative folder is below the agent's first root, as every relative plan
// dir), or that a --smoke run removed them.
void PrintCheckpointPlaces(const DlioRun& run, const v1::RunRecord& record) {
  if (!run.config.checkpoint || run.plan_options.train_only) return;
  const std::string dir = DlioCheckpointDir(run.config, run.plan_options);
  std::vector<std::string> places;
  for (const v1::AgentRecord& a : record.agents()) {
    if (a.role() == v1::OSS || a.role() == v1::MDS || !a.has_facts()) continue;
    const v1::HostFacts& facts = a.facts();
    std::string path = dir;
    if (!absl::StartsWith(dir, "/") && facts.roots_size() > 0) {
      path = (fs::path(facts.roots(0).path()) / dir).lexically_normal().string();
    }
    const std::string place = (facts.hostname().empty() ? a.address() : facts.hostname()) + ":" +
                              path;
    if (std::find(places.begin(), places.end(), place) == places.end()) places.push_back(place);
  }
  if (places.empty()) return;
  PrintToStdout(absl::StrFormat("# lockstep dlio: checkpoints %s %s\n",
                                run.plan_options.smoke ? "(removed: --smoke) were in" : "are in",
                                absl::StrJoin(places, ", ")));
}

// A --smoke run removes what it wrote: the agents removed the files; the
// directories created for them here go too when empty.
void RemoveCreatedDirs(const DlioRun& run) {
  std::vector<std::string> dirs = run.created_dirs;
  std::sort(dirs.begin(), dirs.end(), [](const std::string& a, const std::string& b) {
    return a.size() > b.size();  // children before their parents
  });
  for (const std::string& d : dirs) {
    std::error_code ec;
    fs::remove(d, ec);  // an empty directory only; one with files stays
  }
}

// What one run said: its exit code, and its train phase's AU.
struct StepResult {
  int exit_code = kExitOk;
  bool trained = false;
  double au = 0;
  bool passed = false;
};

StepResult StepResultOf(const RunOutcome& outcome) {
  StepResult r;
  for (const v1::TestRecord& t : outcome.record.tests()) {
    for (const v1::PhaseRecord& p : t.phases()) {
      if (p.kind() != v1::TRAIN) continue;
      r.trained = true;
      r.au = p.ai().au_mean();
      r.passed = p.ai().au_passed();
    }
  }
  r.exit_code = ExitCodeFor(outcome.failure);
  return r;
}

// The sweep --find-max-accelerators asks for, and the workload it measures
// (training only; its steps after the first read the dataset).
absl::StatusOr<AcceleratorSweep> SweepOf(const ParsedFlags& f, DlioRun* run) {
  if (run->config.computation_time_seconds <= 0) {
    return absl::InvalidArgumentError("--find-max-accelerators needs train.computation_time > 0 "
                                      "(AU is compute time / wall time)");
  }
  run->config.checkpoint = false;
  run->config.train = true;
  run->plan_options.later_runs_read_dataset = true;
  std::vector<uint32_t> counts;
  for (const std::string& s : f.GetList("accelerator-counts")) {
    uint32_t n = 0;
    if (!absl::SimpleAtoi(s, &n) || n < 1 || n > kMaxAgentTasks) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--accelerator-counts: %s is not a count from 1 to %u", s, kMaxAgentTasks));
    }
    counts.push_back(n);
  }
  const uint32_t start = run->plan_options.accelerators_per_host;
  const uint32_t max = static_cast<uint32_t>(f.GetUint("max-accelerators"));
  if (counts.empty() && start > max) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--accelerators %u is above --max-accelerators %u: the sweep starts at --accelerators; "
        "lower it or raise --max-accelerators",
        start, max));
  }
  return AcceleratorSweep(std::move(counts), start, max);
}

// DLIO's workload YAML and Lockstep's flags (ParsedFlags of
// DlioCommandSpec): the agents first (the plan is per host), then the data
// and checkpoint folders and the plan; one run, or with
// --find-max-accelerators one run per accelerator count. After each run
// DLIO's per-epoch and [METRIC] lines.
class DlioFrontEnd final : public FlagsFrontEnd {
 public:
  explicit DlioFrontEnd(const ParsedFlags& f) : FlagsFrontEnd(f) {}

  const char* name() const override { return "dlio"; }
  // The workload, its overrides and the sweep, before any agent is reached.
  absl::StatusOr<CliCommand> Parse(const std::vector<std::string>& /*args*/,
                                   const FileReader& /*read_file*/) override {
    auto text = ReadInput("a DLIO config");
    if (!text.ok()) return text.status();
    auto config = ParseDlioConfig(*text, f_.positional()[0]);
    if (!config.ok()) return UsageError(config.status());
    run_.config = *std::move(config);
    for (size_t i = 1; i < f_.positional().size(); ++i) {
      const std::string& a = f_.positional()[i];
      if (!IsDlioOverride(a)) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s is not an override; write ++workload.SECTION.KEY=VALUE", a));
      }
      RETURN_IF_ERROR(UsageError(ApplyDlioOverride(a, &run_.config)));
    }
    RETURN_IF_ERROR(UsageError(CheckDlioCheckpointFolder(run_.config)));
    for (const std::string& n : run_.config.ignored) PrintToStdout(NoteLine(n));
    DlioPlanOptions& po = run_.plan_options;
    po.data_dir = f_.GetString("data-dir");
    po.smoke = f_.GetBool("smoke");
    po.accelerators_per_host = static_cast<uint32_t>(f_.GetUint("accelerators"));
    if (f_.GetBool("find-max-accelerators")) {
      auto sweep = SweepOf(f_, &run_);
      if (!sweep.ok()) return sweep.status();
      sweep_ = *std::move(sweep);
    }
    return CommandOfFlags();  // history: each run, every step of a sweep
  }
  absl::Status SetUpAgents(const std::atomic<bool>* interrupted, CliCommand* cmd,
                           RunOptions* o) override {
    RETURN_IF_ERROR(FrontEndAgentsFromFlags(f_, interrupted, o));
    run_.plan_options.hosts = ClientAgentCount(*o);
    if (o->agents.empty()) RETURN_IF_ERROR(PlaceLocally(f_, &run_, &o->local_root));
    absl::Status planned = PlanFor(
        sweep_ ? sweep_->first() : run_.plan_options.accelerators_per_host, true, &cmd->plan);
    if (!planned.ok()) Finish();
    return planned;
  }
  // IOR's report (not at -v) as the run goes, DLIO's lines after it.
  bool Describe(const CliCommand& /*cmd*/, v1::RunRecord* /*fields*/) override { return true; }
  std::optional<int> AfterRun(CliCommand* cmd, const RunOutcome& outcome,
                              const std::string& /*report_text*/) override {
    // DLIO's lines read the phases' own figures (AiSummary), not the agents'.
    PrintDlioMetrics(outcome.record);
    PrintCheckpointPlaces(run_, outcome.record);
    const StepResult r = StepResultOf(outcome);
    const std::optional<int> code = sweep_ ? SweepStepDone(r, cmd) : r.exit_code;
    if (code) Finish();
    return code;
  }

 private:
  // The plan with `n` accelerators per host (a sweep's; its first step
  // also writes the dataset when the workload does), through `lockstep
  // run`'s checks.
  absl::Status PlanFor(uint32_t n, bool first, Plan* plan) {
    DlioPlanOptions& po = run_.plan_options;
    if (sweep_) {
      po.accelerators_per_host = n;
      po.train_only = !first;
      PrintToStdout(NoteLine(absl::StrFormat("find-max: %u accelerators per host", n)));
    }
    const DlioPlan dp = DlioToPlan(run_.config, po);
    for (const std::string& note : dp.notes) PrintToStdout(NoteLine(note));
    auto parsed = ParsePlan(dp.toml, run_.config.path + " (as a plan)");
    if (!parsed.ok()) return UsageError(parsed.status());
    *plan = *std::move(parsed);
    plan->text = dp.toml;
    return absl::OkStatus();
  }
  // A sweep's step ended: its line, then the next step's plan, or the
  // sweep's answer and exit code.
  std::optional<int> SweepStepDone(const StepResult& r, CliCommand* cmd) {
    const uint32_t n = run_.plan_options.accelerators_per_host;
    const double threshold_pct = 100 * run_.config.au_threshold;
    // A count whose AU fails its threshold is a result of the sweep, not an error.
    if (r.exit_code != kExitOk && r.exit_code != kExitAuBelowThreshold) return r.exit_code;
    if (r.trained) {
      PrintToStdout(NoteLine(absl::StrFormat(
          "find-max: %u accelerators per host: AU %.2f%% (threshold %.2f%%): %s", n, 100 * r.au,
          threshold_pct, r.passed ? "pass" : "fail")));
    }
    if (std::optional<uint32_t> next = sweep_->Next(n, r.passed)) {
      if (absl::Status s = PlanFor(*next, false, &cmd->plan); !s.ok()) {
        std::fputs(UsageLine(s).c_str(), stderr);
        return kExitUsage;
      }
      return std::nullopt;
    }
    if (sweep_->best() == 0) {
      PrintToStdout(NoteLine(absl::StrFormat(
          "find-max: no count tried keeps AU at or above %.2f%%", threshold_pct)));
      return kExitFailure;
    }
    PrintToStdout(NoteLine(absl::StrFormat(
        "find-max: the most accelerators per host with AU at or above %.2f%%: %u%s",
        threshold_pct, sweep_->best(), sweep_->failed() == 0 ? " (none tried failed)" : "")));
    return kExitOk;
  }
  // A --smoke run removes what it wrote (not a sweep's: its steps read the
  // dataset the first wrote).
  void Finish() {
    const DlioPlanOptions& po = run_.plan_options;
    if (po.smoke && !po.later_runs_read_dataset) RemoveCreatedDirs(run_);
  }

  DlioRun run_;
  std::optional<AcceleratorSweep> sweep_;
};

}  // namespace

int DlioCommand(const std::vector<std::string>& args, const std::string& command_line,
                const std::atomic<bool>* interrupted) {
  const CommandSpec& spec = DlioCommandSpec();
  auto flags = ParseFlags(args, spec);
  if (auto code = HelpOrUsageExit(spec, flags)) return *code;
  if (flags->positional().empty()) {
    std::fprintf(stderr,
                 "lockstep dlio: give DLIO's workload CONFIG.yaml (deploy/plans/dlio/*.yaml)\n%s\n",
                 FormatUsage(spec).c_str());
    return kExitUsage;
  }
  DlioFrontEnd dlio(*flags);
  return RunFrontEnd(dlio, args, command_line, interrupted);
}

}  // namespace lockstep
