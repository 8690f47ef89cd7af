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
#include "controller/plan/plan.h"
#include "controller/cli/cli_commands.h"
#include "controller/cli/cli_common.h"
#include "controller/cli/command_specs.h"
#include "controller/cli/exit_codes.h"
#include "controller/cli/front_end.h"
#include "controller/cli/reach_agents.h"
#include "controller/dlio/dlio_config.h"
#include "controller/dlio/dlio_plan.h"
#include "controller/cli/printed_report.h"
#include "common/limits.h"
#include "controller/plan/write_places.h"
#include "controller/run/coordinator.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "lockstep dlio: %s\n", message.c_str());
  return code;
}

struct DlioRun {
  DlioConfig config;
  DlioPlanOptions plan_options;
  RunOptions options;
  HistoryRecording history;  // each run (a --find-max-accelerators step too)
  bool local = false;
  // Local agents: the directories PlaceLocally created (a --smoke run
  // removes those left empty).
  std::vector<std::string> created_dirs;
};

// The agents and credentials (as `lockstep io500`); an exit code on error.
std::optional<int> ReachDlioAgents(const ParsedFlags& f, const std::atomic<bool>* interrupted,
                                   DlioRun* run) {
  RunOptions& o = run->options;
  if (auto e = FrontEndAgentsFromFlags(f, interrupted, &o)) {
    return e->message.empty() ? e->exit_code : Fail(e->exit_code, e->message);
  }
  run->local = o.agents.empty();
  run->plan_options.hosts = ClientAgentCount(o);
  return std::nullopt;
}

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
std::optional<int> PlaceLocally(const ParsedFlags& f, DlioRun* run) {
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
      return Fail(kExitUsage, std::string(w.message()));
    }
    for (std::string& m : MissingDirs(dir)) run->created_dirs.push_back(std::move(m));
    fs::create_directories(dir, ec);
    if (ec) return Fail(kExitUsage, absl::StrFormat("cannot create %s (%s): %s", dir, what,
                                                    ec.message()));
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
  run->options.local_root = root.string();
  return std::nullopt;
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

struct StepResult {
  int exit_code = kExitOk;
  bool trained = false;
  double au = 0;
  bool passed = false;
};

StepResult RunOnce(DlioRun* run, const std::string& command_line) {
  const DlioPlan dp = DlioToPlan(run->config, run->plan_options);
  for (const std::string& n : dp.notes) PrintToStdout("# lockstep dlio: " + n + "\n");
  StepResult r;
  auto plan = ParsePlan(dp.toml, run->config.path + " (as a plan)");
  if (!plan.ok()) {
    r.exit_code = Fail(kExitUsage, std::string(plan.status().message()));
    return r;
  }
  plan->text = dp.toml;
  run->options.command_line = command_line;
  // IOR's report (not at -v), then DLIO's lines.
  const FrontEndRun ran = RunFrontEndPlan("dlio", *plan, /*text_to_stdout=*/true, run->history,
                                          {}, &run->options);
  const RunOutcome& outcome = ran.outcome;
  // DLIO's lines read the phases' own figures (AiSummary), not the agents'.
  const v1::RunRecord& record = outcome.record;
  PrintDlioMetrics(record);
  PrintCheckpointPlaces(*run, record);
  for (const v1::TestRecord& t : record.tests()) {
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

// One step of the sweep: the train phase with `n` accelerators per host
// (the first step also writes the dataset when the workload does).
StepResult SweepStep(DlioRun* run, const std::string& command_line, uint32_t n, bool first) {
  run->plan_options.accelerators_per_host = n;
  run->plan_options.train_only = !first;
  PrintToStdout(absl::StrFormat("# lockstep dlio: find-max: %u accelerators per host\n", n));
  StepResult r = RunOnce(run, command_line);
  if ((r.exit_code == kExitOk || r.exit_code == kExitAuBelowThreshold) && r.trained) {
    PrintToStdout(
        absl::StrFormat("# lockstep dlio: find-max: %u accelerators per host: AU %.2f%% "
                        "(threshold %.2f%%): %s\n",
                        n, 100 * r.au, 100 * run->config.au_threshold, r.passed ? "pass" : "fail"));
  }
  return r;
}

int FindMaxAccelerators(const ParsedFlags& f, const std::string& command_line, DlioRun* run) {
  if (run->config.computation_time_seconds <= 0) {
    return Fail(kExitUsage, "--find-max-accelerators needs train.computation_time > 0 (AU is "
                            "compute time / wall time)");
  }
  run->config.checkpoint = false;  // the sweep measures training only
  run->config.train = true;
  run->plan_options.later_runs_read_dataset = true;  // its steps after the first read it
  std::vector<uint32_t> counts;
  for (const std::string& s : f.GetList("accelerator-counts")) {
    uint32_t n = 0;
    if (!absl::SimpleAtoi(s, &n) || n < 1 || n > kMaxAgentTasks) {
      return Fail(kExitUsage, absl::StrFormat("--accelerator-counts: %s is not a count from 1 "
                                              "to %u",
                                              s, kMaxAgentTasks));
    }
    counts.push_back(n);
  }
  const uint32_t max = static_cast<uint32_t>(f.GetUint("max-accelerators"));
  uint32_t best = 0, failed = 0;
  bool first = true;
  auto step = [&](uint32_t n) -> std::optional<int> {
    StepResult r = SweepStep(run, command_line, n, first);
    first = false;
    // A count whose AU fails its threshold is a result of the sweep, not an error.
    if (r.exit_code != kExitOk && r.exit_code != kExitAuBelowThreshold) return r.exit_code;
    if (r.passed) {
      best = std::max(best, n);
    } else if (failed == 0 || n < failed) {
      failed = n;
    }
    return std::nullopt;
  };
  if (!counts.empty()) {
    for (uint32_t n : counts) {
      if (auto code = step(n)) return *code;
    }
  } else {
    // Doubling until AU falls below the threshold, then bisection.
    for (uint32_t n = run->plan_options.accelerators_per_host; n <= max && failed == 0; n *= 2) {
      if (auto code = step(n)) return *code;
      if (n > max / 2 && n != max && failed == 0) {
        if (auto code = step(max)) return *code;
        break;
      }
    }
    while (failed > 0 && failed - best > 1 && best > 0) {
      if (auto code = step(best + (failed - best) / 2)) return *code;
    }
  }
  if (best == 0) {
    PrintToStdout(
        absl::StrFormat("# lockstep dlio: find-max: no count tried keeps AU at or above "
                        "%.2f%%\n",
                        100 * run->config.au_threshold));
    return kExitFailure;
  }
  PrintToStdout(absl::StrFormat(
      "# lockstep dlio: find-max: the most accelerators per host with AU at "
      "or above %.2f%%: %u%s\n",
      100 * run->config.au_threshold, best, failed == 0 ? " (none tried failed)" : ""));
  return kExitOk;
}

}  // namespace

int DlioCommand(const std::vector<std::string>& args, const std::string& command_line,
                const std::atomic<bool>* interrupted) {
  const CommandSpec& spec = DlioCommandSpec();
  auto flags = ParseFlags(args, spec);
  if (auto code = HelpOrUsageExit(spec, flags)) return *code;
  const ParsedFlags& f = *flags;
  if (f.positional().empty()) {
    return Fail(kExitUsage, "give DLIO's workload CONFIG.yaml (deploy/plans/dlio/*.yaml)\n" +
                                FormatUsage(spec));
  }
  const std::string& path = f.positional()[0];
  auto text = ReadPlanInput(path, "a DLIO config");
  if (!text.ok()) return Fail(kExitUsage, std::string(text.status().message()));
  auto config = ParseDlioConfig(*text, path);
  if (!config.ok()) return Fail(kExitUsage, std::string(config.status().message()));
  DlioRun run;
  run.config = *std::move(config);
  for (size_t i = 1; i < f.positional().size(); ++i) {
    const std::string& a = f.positional()[i];
    if (!IsDlioOverride(a)) {
      return Fail(kExitUsage, absl::StrFormat("%s is not an override; write "
                                              "++workload.SECTION.KEY=VALUE",
                                              a));
    }
    if (absl::Status s = ApplyDlioOverride(a, &run.config); !s.ok()) {
      return Fail(kExitUsage, std::string(s.message()));
    }
  }
  if (absl::Status s = CheckDlioCheckpointFolder(run.config); !s.ok()) {
    return Fail(kExitUsage, std::string(s.message()));
  }
  for (const std::string& n : run.config.ignored) PrintToStdout("# lockstep dlio: " + n + "\n");
  if (auto code = ReachDlioAgents(f, interrupted, &run)) return *code;
  DlioPlanOptions& po = run.plan_options;
  po.data_dir = f.GetString("data-dir");
  po.smoke = f.GetBool("smoke");
  po.accelerators_per_host = static_cast<uint32_t>(f.GetUint("accelerators"));
  if (run.local) {
    if (auto code = PlaceLocally(f, &run)) return *code;
  }
  RunOptions& o = run.options;
  o.out_dir = f.GetString("out");
  o.interrupted = interrupted;
  run.history = HistoryRecordingOf(f);
  const int code = f.GetBool("find-max-accelerators")
                      ? FindMaxAccelerators(f, command_line, &run)
                      : RunOnce(&run, command_line).exit_code;
  if (po.smoke && !po.later_runs_read_dataset) RemoveCreatedDirs(run);
  return code;
}

}  // namespace lockstep
