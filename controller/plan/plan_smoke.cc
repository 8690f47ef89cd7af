#include "controller/plan/plan_smoke.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/names.h"
#include "common/sizes.h"
#include "controller/plan/sweep.h"

namespace lockstep {
namespace {

// ---- smoke ------------------------------------------------------------------

class Capper {
 public:
  Capper(Plan* plan, const PhasePlan* phase) : plan_(plan), phase_(phase) {}

  // value = min(value, cap), noting "phase P: KEY FROM -> TO".
  void Bytes(const char* key, uint64_t cap, uint64_t* value) {
    if (*value <= cap) return;
    Note(key, HumanBytes(*value), HumanBytes(cap));
    *value = cap;
  }
  template <typename T>
  void Count(const char* key, T cap, T* value) {
    if (*value <= cap) return;
    Note(key, absl::StrCat(*value), absl::StrCat(cap));
    *value = cap;
  }
  void Note(const char* key, const std::string& from, const std::string& to) {
    Add(absl::StrFormat("%s: %s %s -> %s", Where(), key, from, to));
  }
  void Dropped(const std::string& what, const std::string& why) {
    Add(absl::StrFormat("%s: %s left out (%s)", Where(), what, why));
  }

 private:
  // Once each: a sweep's points repeat their phase's values.
  void Add(const std::string& line) {
    std::vector<std::string>& c = plan_->smoke_changes;
    if (std::find(c.begin(), c.end(), line) == c.end()) c.push_back(line);
  }

  std::string Where() const {
    return phase_ == nullptr ? "[run]" : absl::StrCat("phase ", phase_->name);
  }
  Plan* plan_;
  const PhasePlan* phase_;
};

// The AI phases: a small dataset (each accelerator still gets a batch), one
// epoch, short compute, small shards.
void SmokeAi(const SmokeOptions& o, Capper& c, PhasePlan* p) {
  AiPhasePlan& a = p->ai;
  c.Count<uint64_t>("num_files", 64, &a.num_files);
  c.Count<uint64_t>("samples_per_file", 4, &a.samples_per_file);
  c.Bytes("record_size", std::min<uint64_t>(o.max_bytes, 1 << 20), &a.record_bytes);
  c.Bytes("record_size_stdev", a.record_bytes / 4, &a.record_stdev_bytes);
  if (a.dataset_memory_multiple > 0) {
    c.Dropped(absl::StrFormat("dataset_memory_multiple = %g", a.dataset_memory_multiple),
              "a smoke dataset is small on purpose");
    a.dataset_memory_multiple = 0;
  }
  c.Count<uint32_t>("epochs", 1, &a.epochs);
  c.Count<double>("computation_time_seconds", 0.01, &a.computation_time_seconds);
  c.Count<double>("computation_time_stdev_seconds", 0.002, &a.computation_stdev_seconds);
  if (p->kind == v1::TRAIN && a.num_files > 0) {
    uint32_t most_tasks = 1;
    for (uint32_t tpa : p->tasks_per_agent) most_tasks = std::max(most_tasks, tpa);
    const uint64_t per = a.num_files * a.samples_per_file /
                         (uint64_t{most_tasks} * std::max<uint32_t>(o.max_client_agents, 1));
    c.Count<uint32_t>("batch_size", static_cast<uint32_t>(std::max<uint64_t>(per, 1)),
                      &a.batch_size);
  }
  c.Count<uint32_t>("checkpoints", 2, &a.checkpoints);
  if (p->kind == v1::CHECKPOINT && a.shard_bytes == 0) {
    c.Note("model", a.model, "shard_size " + HumanBytes(o.max_bytes));
    a.shard_bytes = o.max_bytes;
  }
  c.Bytes("shard_size", o.max_bytes, &a.shard_bytes);
}

void SmokePhase(const SmokeOptions& o, Plan* plan, PhasePlan* p) {
  Capper c(plan, p);
  for (uint32_t& tpa : p->tasks_per_agent) c.Count("tasks_per_agent", o.max_tasks_per_agent, &tpa);
  c.Bytes("transfer_size", o.max_bytes, &p->transfer_bytes);
  if (p->block_bytes > o.max_bytes) {
    // A block stays a whole number of transfers.
    const uint64_t cap = std::max(p->transfer_bytes, o.max_bytes / p->transfer_bytes * p->transfer_bytes);
    c.Bytes("block_size", cap, &p->block_bytes);
  }
  if (p->block_bytes > 0) {
    c.Count<uint64_t>("segments", std::max<uint64_t>(1, o.max_bytes / p->block_bytes), &p->segments);
  }
  if (p->total_bytes > 0) {
    // total_size: at most the cap per task of one agent (fewer with more agents).
    uint32_t most_tasks = 1;
    for (uint32_t tpa : p->tasks_per_agent) most_tasks = std::max(most_tasks, tpa);
    c.Bytes("total_size", o.max_bytes * most_tasks, &p->total_bytes);
  }
  c.Count<uint64_t>("small_files", o.max_items, &p->small_files);
  c.Bytes("small_file_max_size", std::min<uint64_t>(o.max_bytes, 1 << 20), &p->small_file_max_bytes);
  p->small_file_min_bytes = std::min(p->small_file_min_bytes, p->small_file_max_bytes);
  c.Count<uint64_t>("md_items", o.max_items, &p->md_items);
  c.Count<uint64_t>("seeks", o.max_items, &p->seeks);
  c.Bytes("md_write_bytes", o.max_bytes, &p->md_write_bytes);
  c.Bytes("md_read_bytes", o.max_bytes, &p->md_read_bytes);
  c.Count("stonewall_seconds", o.max_stonewall_seconds, &p->stonewall_seconds);
  c.Count("md_stonewall_seconds", o.max_stonewall_seconds, &p->md_stonewall_seconds);
  c.Count<uint32_t>("delay_seconds", 0, &p->delay_seconds);
  SmokeAi(o, c, p);
  if (o.lustre) return;
  if (p->set_stripe) {
    c.Dropped("striping (stripe_count/stripe_size/stripe_index/stripe_pool/object_size)",
              "the directories are not on Lustre");
    p->set_stripe = false;
  }
  if (p->checksums != v1::CHECKSUMS_UNCHANGED) {
    c.Dropped(absl::StrCat("checksums = ", p->checksums == v1::CHECKSUMS_ON ? "true" : "false"),
              "the directories are not on Lustre");
    p->checksums = v1::CHECKSUMS_UNCHANGED;
  }
}

// ---- dry run ----------------------------------------------------------------

// What one phase of one test would move and make.
struct PhaseEstimate {
  uint32_t tasks = 0;            // over all client agents
  uint64_t bytes_per_task = 0;
  uint64_t ops_per_task = 0;     // metadata operations
  uint64_t files = 0;            // over all agents
  double seconds = 0;
  std::string note;
};

// The mean of a log-uniform size in [lo, hi] (small_files).
double LogUniformMean(uint64_t lo, uint64_t hi) {
  if (hi <= lo || lo == 0) return static_cast<double>(hi);
  return static_cast<double>(hi - lo) / std::log(static_cast<double>(hi) / static_cast<double>(lo));
}

PhaseEstimate EstimatePhase(const Plan& plan, const PhasePlan& p, uint32_t test,
                            uint32_t clients, const DryRunOptions& o) {
  PhaseEstimate e;
  const uint32_t tpa = plan.TasksPerAgent(p, test);
  e.tasks = tpa * clients;
  switch (p.kind) {
    case v1::WRITE:
    case v1::READ:
    case v1::REWRITE:
      if (auto split = SplitAggregate(plan, p, test, clients); split.ok()) {
        e.bytes_per_task = split->block_bytes * p.segments;  // total_size: this test's split
      } else {
        e.note = std::string(split.status().message());
      }
      e.files = p.file_per_process ? e.tasks : 1;
      if (p.kind == v1::REWRITE) e.note = "read and written back";
      break;
    case v1::SMALL_FILES:
      e.bytes_per_task = static_cast<uint64_t>(
          static_cast<double>(p.small_files) * LogUniformMean(p.small_file_min_bytes,
                                                              p.small_file_max_bytes));
      e.ops_per_task = p.small_files;
      e.files = p.small_files * e.tasks;
      e.note = "written, then read back";
      break;
    case v1::MDTEST:
      e.ops_per_task = p.md_items;
      e.bytes_per_task = p.md_items * std::max(p.md_write_bytes, p.md_read_bytes);
      e.files = p.md_op == v1::MD_FILE_CREATE ? p.md_items * e.tasks : 0;
      e.note = MdtestOpName(p.md_op);
      break;
    case v1::FIND:
      e.note = "walks the tree; counts what it finds";
      break;
    case v1::SEEKS:
      // Random reads of transfer_bytes, seek_rewrite_pct of them written back.
      e.ops_per_task = p.seeks;
      e.bytes_per_task = p.seeks * p.transfer_bytes * (100 + p.seek_rewrite_pct) / 100;
      e.files = 1;
      e.note = absl::StrFormat("%u%% written back; timed at the metadata rate", p.seek_rewrite_pct);
      break;
    case v1::DATAGEN:
    case v1::TRAIN: {
      const AiPhasePlan& a = p.ai;
      const double dataset = static_cast<double>(a.num_files) * a.samples_per_file * a.record_bytes;
      const double passes = p.kind == v1::TRAIN ? a.epochs : 1;
      e.bytes_per_task = static_cast<uint64_t>(dataset * passes / std::max<uint32_t>(e.tasks, 1));
      e.files = p.kind == v1::DATAGEN ? a.num_files : 0;
      e.note = p.kind == v1::TRAIN ? absl::StrFormat("%u epochs; compute %g s per batch of %u",
                                                     a.epochs, a.computation_time_seconds,
                                                     a.batch_size)
                                   : "the dataset, split over the tasks";
      break;
    }
    case v1::CHECKPOINT:
      e.bytes_per_task = (p.ai.shard_bytes > 0 ? p.ai.shard_bytes
                                                : p.ai.total_checkpoint_bytes /
                                                      std::max<uint32_t>(e.tasks, 1)) *
                         p.ai.checkpoints;
      e.files = p.ai.checkpoint_op == v1::CHECKPOINT_WRITE ? uint64_t{e.tasks} * p.ai.checkpoints : 0;
      e.note = p.ai.model.empty() ? "checkpoint shards" : "model " + p.ai.model;
      break;
    case v1::COMMAND:
      e.note = absl::StrFormat("runs %s; duration not estimated",
                               p.command_argv.empty() ? "?" : p.command_argv.front());
      break;
    default:
      e.note = "duration not estimated";
      break;
  }
  const double bytes = static_cast<double>(e.bytes_per_task) * e.tasks;
  const double ops = static_cast<double>(e.ops_per_task) * e.tasks;
  e.seconds = p.kind == v1::SEEKS ? ops / o.rate_ops_s
                                  : bytes / (o.rate_mib_s * 1048576.0) + ops / o.rate_ops_s;
  const uint32_t wall = std::max(p.stonewall_seconds, p.md_stonewall_seconds);
  if (wall > 0 && e.seconds > wall) {
    e.seconds = wall;
    e.note = absl::StrFormat("stonewall %u s: ends it sooner, the bytes an upper bound", wall);
  }
  return e;
}

std::string Duration(double s) {
  if (s < 120) return absl::StrFormat("%.1f s", s);
  if (s < 7200) return absl::StrFormat("%.1f min", s / 60);
  return absl::StrFormat("%.1f h", s / 3600);
}

}  // namespace

void MakeSmokePlan(const SmokeOptions& options, Plan* plan) {
  plan->smoke = true;
  Capper run(plan, nullptr);
  run.Count<uint32_t>("repetitions", 1, &plan->repetitions);
  if (options.max_client_agents > 0) {
    for (uint32_t& n : plan->client_agents) {
      run.Count("client_agents", options.max_client_agents, &n);
    }
  }
  if (!options.lustre && plan->lustre_lru_clear) {
    run.Dropped("lustre_lru_clear", "the directories are not on Lustre");
    plan->lustre_lru_clear = false;
  }
  for (PhasePlan& p : plan->phases) {
    SmokePhase(options, plan, &p);
    // A sweep's tests run its points (controller/plan/sweep.h).
    for (PhasePlan& point : p.points) {
      point.name = p.name;
      SmokePhase(options, plan, &point);
    }
  }
}

std::string FormatDryRun(const Plan& plan, const DryRunAgents& agents,
                         const DryRunOptions& options) {
  std::string out = absl::StrFormat(
      "dry run of %s: nothing is sent to any agent, no file is touched\n"
      "agents: %u client(s), %u server(s) (%s)\n"
      "%u test(s) x %u repetition(s); estimates at %.0f MiB/s and %.0f metadata ops/s\n",
      plan.source, agents.clients, agents.servers, agents.source, plan.tests(), plan.repetitions,
      options.rate_mib_s, options.rate_ops_s);
  if (plan.smoke) {
    out += "smoke plan (--smoke): sizes capped, one repetition:\n";
    for (const std::string& c : plan.smoke_changes) out += "  " + c + "\n";
  }
  double total_bytes = 0, total_s = 0;
  uint64_t phases = 0;
  for (uint32_t t = 0; t < plan.tests(); ++t) {
    const uint32_t clients =
        plan.ClientAgents(t) > 0 ? std::min(plan.ClientAgents(t), agents.clients) : agents.clients;
    absl::StrAppendFormat(&out, "test %u: %u client agent(s), %u task(s) per agent%s\n", t,
                          clients, plan.TasksPerAgent(plan.phases.front(), t),
                          plan.ClientAgents(t) > agents.clients
                              ? absl::StrFormat(" (client_agents asks for %u: the run would "
                                                "refuse this test)",
                                                plan.ClientAgents(t))
                              : "");
    for (const PhasePlan& phase : plan.phases) {
      const PhasePlan p = ResolvePhase(plan, phase, t);
      const PhaseEstimate e = EstimatePhase(plan, p, t, clients, options);
      const uint64_t per_agent = e.bytes_per_task * plan.TasksPerAgent(p, t);
      const uint64_t all = e.bytes_per_task * e.tasks;
      absl::StrAppendFormat(
          &out, "  %-18s %-11s %5u tasks  %10s/agent  %10s in all  %8llu files  ~%s%s\n",
          p.name, PhaseKindName(p.kind), e.tasks, HumanBytes(per_agent), HumanBytes(all),
          static_cast<unsigned long long>(e.files), Duration(e.seconds),
          e.note.empty() ? "" : absl::StrCat("  (", e.note, ")"));
      total_bytes += static_cast<double>(all) * plan.repetitions;
      total_s += e.seconds * plan.repetitions;
      phases += plan.repetitions;
    }
  }
  absl::StrAppendFormat(&out,
                        "total: %llu phase runs, %s moved, ~%s of I/O (plus set-up, cache "
                        "barriers and removal)\n",
                        static_cast<unsigned long long>(phases),
                        HumanBytes(static_cast<uint64_t>(total_bytes)), Duration(total_s));
  return out;
}

}  // namespace lockstep
