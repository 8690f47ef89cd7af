#include "controller/record/ai_reduce.h"

#include <algorithm>
#include <limits>
#include <map>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/histogram.h"
#include "common/sizes.h"
#include "controller/record/ior_math.h"
#include "controller/record/phase_reduce.h"

namespace lockstep {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// The phase's I/O window: max(rdwr stop) − min(rdwr start), seconds.
double WindowSeconds(const std::vector<const v1::TaskResult*>& tasks) {
  return Window(tasks, &v1::TaskResult::rdwr_start_unix_ns, &v1::TaskResult::rdwr_stop_unix_ns);
}

// The IOR-like row every AI phase has: bytes over the window.
v1::IterationRow RowOf(const std::vector<const v1::TaskResult*>& tasks, const std::string& access,
                       uint64_t bytes, uint64_t ops, uint32_t rep) {
  v1::IterationRow row;
  row.set_access(access);
  row.set_iter(rep);
  const double secs = WindowSeconds(tasks);
  row.set_wrrd_s(secs);
  row.set_total_s(secs);
  row.set_bytes(bytes);
  row.set_expected_bytes(bytes);
  if (secs > 0) {
    row.set_bw_mib(static_cast<double>(bytes) / kMiB / secs);
    row.set_iops(static_cast<double>(ops) / secs);
  }
  return row;
}

// One epoch's AU of one accelerator: its compute / its wall (at most 1).
double EpochAu(const v1::TrainEpoch& ep) {
  return ep.wall_ns() > 0 ? std::min(1.0, static_cast<double>(ep.compute_ns()) /
                                              static_cast<double>(ep.wall_ns()))
                          : 0;
}

// An accelerator's AU over the phase: the mean of its epochs' (its own AU
// when it reported no epochs).
double AcceleratorAu(const v1::TrainResult& tr) {
  if (tr.epochs_size() == 0) return tr.au();
  double sum = 0;
  for (const v1::TrainEpoch& ep : tr.epochs()) sum += EpochAu(ep);
  return sum / tr.epochs_size();
}

// AU as DLIO's statscounter.py: per epoch the mean of the accelerators' AU
// (its allreduce over ranks / comm size), for the phase the mean over the
// epochs (train_au_mean_percentage), passed when that mean is at or above
// the threshold (train_au_meet_expectation).
void TrainSummary(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
                  v1::AiSummary* ai) {
  LatencyHistogram wait;
  double lo = 1, hi = 0;
  std::vector<double> epoch_sum;
  for (const v1::TaskResult* t : tasks) {
    const v1::TrainResult& tr = t->train();
    wait.MergeProto(tr.batch_wait());
    lo = std::min(lo, AcceleratorAu(tr));
    hi = std::max(hi, AcceleratorAu(tr));
    ai->set_samples(ai->samples() + tr.samples());
    for (int e = 0; e < tr.epochs_size(); ++e) {
      if (static_cast<size_t>(e) >= epoch_sum.size()) epoch_sum.push_back(0);
      epoch_sum[e] += EpochAu(tr.epochs(e));
    }
  }
  double sum = 0;
  for (double s : epoch_sum) {
    const double au = tasks.empty() ? 0 : s / static_cast<double>(tasks.size());
    ai->add_epoch_au(au);
    sum += au;
  }
  ai->set_au_mean(epoch_sum.empty() ? 0 : sum / static_cast<double>(epoch_sum.size()));
  ai->set_au_min(tasks.empty() ? 0 : lo);
  ai->set_au_max(hi);
  ai->set_au_threshold(spec.au_threshold());
  ai->set_au_passed(!tasks.empty() && ai->au_mean() >= spec.au_threshold());
  wait.ToProto(ai->mutable_batch_wait());
  *ai->mutable_batch_wait_summary() = SummarizeHistogram(wait);
}

void CheckpointSummary(const std::vector<const v1::TaskResult*>& tasks, v1::AiSummary* ai) {
  std::map<uint32_t, double> min_rank, max_duration, bytes;
  for (const v1::TaskResult* t : tasks) {
    for (const v1::CheckpointShard& c : t->checkpoints()) {
      const double secs = static_cast<double>(c.stop_unix_ns() - c.start_unix_ns()) / 1e9;
      const double mib_s = secs > 0 ? static_cast<double>(c.bytes()) / kMiB / secs : 0;
      auto [it, fresh] = min_rank.emplace(c.index(), mib_s);
      if (!fresh) it->second = std::min(it->second, mib_s);
      max_duration[c.index()] = std::max(max_duration[c.index()], secs);
      bytes[c.index()] += static_cast<double>(c.bytes());
    }
  }
  double sum_min = 0, sum_dur = 0, sum_agg = 0;
  for (const auto& [index, d] : max_duration) {
    sum_min += min_rank[index];
    sum_dur += d;
    sum_agg += d > 0 ? bytes[index] / kMiB / d : 0;
  }
  const double n = static_cast<double>(max_duration.size());
  ai->set_checkpoints(static_cast<uint32_t>(max_duration.size()));
  if (n == 0) return;
  ai->set_min_rank_mib_per_s(sum_min / n);
  ai->set_max_duration_s(sum_dur / n);
  ai->set_aggregate_mib_per_s(sum_agg / n);
}

// AgentPhaseRecord.au (the mean of its accelerators' AcceleratorAu) and
// samples_per_s of each client from its own tasks.
void HostFigures(v1::PhaseRecord* pr) {
  for (v1::AgentPhaseRecord& a : *pr->mutable_agents()) {
    if (a.tasks_size() == 0) continue;
    double au = 0;
    uint64_t samples = 0;
    std::vector<const v1::TaskResult*> own;
    for (const v1::TaskResult& t : a.tasks()) {
      au += AcceleratorAu(t.train());
      samples += t.train().samples();
      own.push_back(&t);
    }
    a.set_au(au / a.tasks_size());
    const double secs = WindowSeconds(own);
    a.set_samples_per_s(secs > 0 ? static_cast<double>(samples) / secs : 0);
  }
}

// What every AI phase's record has: the tasks' bytes and files over the window.
v1::AiSummary* CommonSummary(const std::vector<const v1::TaskResult*>& tasks,
                             v1::PhaseRecord* pr) {
  v1::AiSummary* ai = pr->mutable_ai();
  uint64_t bytes = 0, files = 0;
  for (const v1::TaskResult* t : tasks) {
    bytes += t->bytes();
    files += t->files();
  }
  ai->set_accelerators(static_cast<uint32_t>(tasks.size()));
  ai->set_bytes(bytes);
  ai->set_files(files);
  const double secs = WindowSeconds(tasks);
  ai->set_seconds(secs);
  if (secs > 0) {
    ai->set_mib_per_s(static_cast<double>(bytes) / kMiB / secs);
    ai->set_files_per_s(static_cast<double>(files) / secs);
  }
  return ai;
}

}  // namespace

void ReduceDatagen(const std::vector<const v1::TaskResult*>& tasks, uint32_t rep,
                   v1::PhaseRecord* pr) {
  const v1::AiSummary* ai = CommonSummary(tasks, pr);
  *pr->mutable_row() = RowOf(tasks, "datagen", ai->bytes(), ai->files(), rep);
}

void ReduceTrain(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
                 uint32_t rep, v1::PhaseRecord* pr) {
  v1::AiSummary* ai = CommonSummary(tasks, pr);
  TrainSummary(tasks, spec, ai);
  if (ai->seconds() > 0) ai->set_samples_per_s(static_cast<double>(ai->samples()) / ai->seconds());
  *pr->mutable_row() = RowOf(tasks, "train", ai->bytes(), ai->samples(), rep);
  HostFigures(pr);
}

void ReduceCheckpoint(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
                      uint32_t rep, v1::PhaseRecord* pr) {
  v1::AiSummary* ai = CommonSummary(tasks, pr);
  CheckpointSummary(tasks, ai);
  const bool write = spec.checkpoint_op() == v1::CHECKPOINT_WRITE;
  *pr->mutable_row() =
      RowOf(tasks, write ? "checkpoint-write" : "checkpoint-read", ai->bytes(), ai->files(), rep);
}

std::vector<std::string> DatagenReportLines(const v1::PhaseRecord& pr) {
  const v1::AiSummary& ai = pr.ai();
  return {absl::StrFormat("datagen: %u files, %s in %.3f s by %u writers: %.1f files/s, %.2f MiB/s",
                          ai.files(), HumanBytes(ai.bytes()), ai.seconds(), ai.accelerators(),
                          ai.files_per_s(), ai.mib_per_s())};
}

std::vector<std::string> TrainReportLines(const v1::PhaseRecord& pr) {
  const v1::AiSummary& ai = pr.ai();
  std::vector<std::string> epochs;
  for (double au : ai.epoch_au()) epochs.push_back(absl::StrFormat("%.2f%%", au * 100));
  std::vector<std::string> out = {absl::StrFormat(
      "train: %u accelerators, %u samples, %.1f samples/s, %.2f MiB/s; AU %.2f%% (min %.2f%%, "
      "max %.2f%%; per epoch %s)%s",
      ai.accelerators(), ai.samples(), ai.samples_per_s(), ai.mib_per_s(), ai.au_mean() * 100,
      ai.au_min() * 100, ai.au_max() * 100, absl::StrJoin(epochs, " "),
      ai.au_threshold() > 0 ? absl::StrFormat(", threshold %.0f%%: %s", ai.au_threshold() * 100,
                                              ai.au_passed() ? "PASS" : "FAIL")
                            : ", AU not judged (no compute time)")};
  std::vector<std::string> hosts;
  for (const v1::AgentPhaseRecord& a : pr.agents()) {
    if (a.tasks_size() > 0 || a.au() > 0) {
      hosts.push_back(absl::StrFormat("%s %.2f%% (%.1f samples/s)", a.address(), a.au() * 100,
                                      a.samples_per_s()));
    }
  }
  if (!hosts.empty()) out.push_back("train AU per host: " + absl::StrJoin(hosts, ", "));
  const v1::LatencySummary& w = ai.batch_wait_summary();
  out.push_back(absl::StrFormat("train batch wait: %u batches, mean %.0f us, p50 %.0f us, "
                                "p99 %.0f us, max %.0f us",
                                w.ops(), w.mean_us(), w.p50_us(), w.p99_us(), w.max_us()));
  return out;
}

std::vector<std::string> CheckpointReportLines(const v1::PhaseRecord& pr) {
  const v1::AiSummary& ai = pr.ai();
  return {absl::StrFormat(
      "checkpoint %s: %u checkpoints of %s by %u ranks: %.2f MiB/s min across ranks, "
      "%.3f s max duration, %.2f MiB/s aggregate (means over the checkpoints)",
      pr.spec().checkpoint_op() == v1::CHECKPOINT_WRITE ? "write" : "read", ai.checkpoints(),
      HumanBytes(pr.spec().shard_bytes() * pr.spec().total_tasks()), ai.accelerators(),
      ai.min_rank_mib_per_s(), ai.max_duration_s(), ai.aggregate_mib_per_s())};
}

}  // namespace lockstep
