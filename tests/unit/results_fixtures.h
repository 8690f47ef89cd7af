// Synthetic RunRecords for the history/compare/gate/report tests.
#ifndef LOCKSTEP_TESTS_UNIT_RESULTS_FIXTURES_H_
#define LOCKSTEP_TESTS_UNIT_RESULTS_FIXTURES_H_

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "common/histogram.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep::testing {

struct SynthResult {
  std::string operation;       // also the phase name
  uint32_t tasks = 1;
  std::vector<double> reps;    // MiB/s per repetition
};

struct SynthRun {
  std::string run_id = "run-a";
  std::string name = "seed";
  std::string plan_sha256 = "ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12";
  std::string started_at = "2026-01-10T12:00:00Z";
  std::string status = "complete";
  std::string kernel = "6.1.0-18-amd64";
  std::string agent_version = "0.1.0";
  std::string fs_type = "ext4";
  bool direct = false;
  std::vector<SynthResult> results;
};

// `base` * (1 + noise * offsets[i]) for i < n: deterministic "noise".
// Whether `what` occurs in `s` (a report, a message).
inline bool Has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

inline std::vector<double> Reps(double base, double noise, int n, int salt = 0) {
  static const double kOffsets[] = {-1.0, 0.35, -0.55, 0.9, 0.1, -0.25, 0.6, -0.8, 0.45, -0.05};
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(base * (1 + noise * kOffsets[(i + salt) % 10]));
  return out;
}

inline v1::RunRecord MakeRun(const SynthRun& s) {
  v1::RunRecord run;
  run.set_format_version(1);
  run.set_run_id(s.run_id);
  run.set_name(s.name);
  run.set_plan_sha256(s.plan_sha256);
  run.set_plan_file("plans/" + s.name + ".toml");
  run.set_started_at(s.started_at);
  run.set_finished_at(s.started_at);
  run.set_status(s.status);
  run.set_controller_host("ctl");
  run.set_lockstep_version("0.1.0");
  run.set_command_line("lockstep run plans/" + s.name + ".toml");
  for (int a = 0; a < 2; ++a) {
    auto* agent = run.add_agents();
    agent->set_address("10.0.0." + std::to_string(a + 1) + ":7070");
    agent->set_role(v1::CLIENT);
    agent->set_status("ok");
    auto* f = agent->mutable_facts();
    f->set_hostname("node" + std::to_string(a + 1));
    f->set_role(v1::CLIENT);
    f->set_kernel(s.kernel);
    f->set_agent_version(s.agent_version);
    f->set_os("Debian GNU/Linux 12 (bookworm)");
    f->set_cores(16);
    f->set_memory_bytes(64ULL << 30);
    auto* root = f->add_roots();
    root->set_path("/mnt/fs");
    root->set_fs_type(s.fs_type);
    agent->mutable_clock()->set_offset_ns(1200);
    agent->mutable_clock()->set_uncertainty_ns(300);
  }
  // One test per task count; every result of that count is a summary row.
  std::map<uint32_t, v1::TestRecord*> tests;
  for (const auto& r : s.results) {
    v1::TestRecord*& t = tests[r.tasks];
    if (t == nullptr) {
      t = run.add_tests();
      t->set_test_id(static_cast<uint32_t>(run.tests_size()));
      t->set_tasks_per_agent(std::max(1u, r.tasks / 2));
      t->set_total_tasks(r.tasks);
      t->set_client_agents(2);
    }
    auto* row = t->add_summary();
    row->set_operation(r.operation);
    row->set_phase(r.operation);
    row->set_api("POSIX");
    row->set_test_id(t->test_id());
    row->set_num_tasks(r.tasks);
    row->set_tasks_per_node(std::max(1u, r.tasks / 2));
    row->set_repetitions(static_cast<uint32_t>(r.reps.size()));
    row->set_file_per_process(true);
    row->set_segments(1);
    row->set_block_bytes(16ULL << 20);
    row->set_transfer_bytes(1ULL << 20);
    double sum = 0, mn = 1e300, mx = 0;
    for (double v : r.reps) {
      row->add_bw_mib_per_rep(v);
      sum += v;
      mn = std::min(mn, v);
      mx = std::max(mx, v);
    }
    double mean = r.reps.empty() ? 0 : sum / static_cast<double>(r.reps.size());
    double ss = 0;
    for (double v : r.reps) ss += (v - mean) * (v - mean);
    row->set_bw_mean_mib(mean);
    row->set_bw_min_mib(r.reps.empty() ? 0 : mn);
    row->set_bw_max_mib(mx);
    row->set_bw_std_mib(r.reps.empty() ? 0 : std::sqrt(ss / static_cast<double>(r.reps.size())));
    row->set_ops_mean(mean);
    row->set_mean_time_s(16.0 * r.tasks / std::max(mean, 1.0));
    // One phase record per repetition, with per-agent series and latency.
    for (size_t rep = 0; rep < r.reps.size(); ++rep) {
      auto* ph = t->add_phases();
      ph->set_phase_id("t" + std::to_string(t->test_id()) + "/r" + std::to_string(rep) + "/" +
                       r.operation);
      ph->set_phase(r.operation);
      ph->set_kind(r.operation == "read" ? v1::READ : v1::WRITE);
      ph->set_repetition(static_cast<uint32_t>(rep));
      ph->set_ok(true);
      auto* spec = ph->mutable_spec();
      spec->set_phase_name(r.operation);
      spec->set_transfer_bytes(1ULL << 20);
      spec->set_block_bytes(16ULL << 20);
      spec->set_segments(1);
      spec->set_file_per_process(true);
      spec->set_direct(s.direct);
      spec->set_dir("/mnt/fs/bench");
      ph->mutable_row()->set_access(r.operation);
      ph->mutable_row()->set_bw_mib(r.reps[rep]);
      auto* lat = ph->mutable_latency();
      lat->set_ops(1000);
      lat->set_p50_us(800 + 10.0 * r.tasks);
      lat->set_p90_us(1500 + 10.0 * r.tasks);
      lat->set_p99_us(4000);
      lat->set_p999_us(9000);
      lat->set_max_us(20000);
      lat->set_mean_us(1000);
      for (int a = 0; a < 2; ++a) {
        auto* ag = ph->add_agents();
        ag->set_address("10.0.0." + std::to_string(a + 1) + ":7070");
        ag->set_series_interval_ms(100);
        // One task per agent: 500 transfers of 0.7 ms + 10 us per task and more.
        auto* task = ag->add_tasks();
        task->set_rank(static_cast<uint32_t>(a));
        LatencyHistogram h;
        for (int k = 0; k < 500; ++k) h.Record((700 + 10ULL * r.tasks + k) * 1000);
        h.ToProto(task->mutable_latency());
        for (int k = 0; k < 20; ++k) {
          double bps = r.reps[rep] / 2 * 1048576.0 * (1 + 0.1 * std::sin(k + a));
          ag->add_series_bytes(static_cast<uint64_t>(bps * 0.1));
        }
      }
    }
  }
  return run;
}

// The AI figures of every repetition of the results named `operation`
// ("train", "checkpoint-write", "checkpoint-read") of a MakeRun run: rep i
// has base[i] as its AU (train; au_min 0.02 lower, hosts 0.01 either side,
// samples/s 1000 x base, passed when base >= threshold > 0) or as the
// checkpoint scale (min-rank MiB/s 100 x base, aggregate 400 x base,
// duration 1 / base).
inline void SetAiFigures(v1::RunRecord* run, const std::string& operation,
                         const std::vector<double>& base, double threshold = 0) {
  for (auto& test : *run->mutable_tests()) {
    for (auto& ph : *test.mutable_phases()) {
      if (ph.phase() != operation || ph.repetition() >= base.size()) continue;
      const double b = base[ph.repetition()];
      v1::AiSummary* ai = ph.mutable_ai();
      ai->set_accelerators(2);
      if (operation == "train") {
        ph.set_kind(v1::TRAIN);
        ai->set_au_mean(b);
        ai->set_au_min(b - 0.02);
        ai->set_au_max(b + 0.01);
        ai->set_samples_per_s(1000 * b);
        ai->set_au_threshold(threshold);
        ai->set_au_passed(threshold > 0 && b >= threshold);
        for (int a = 0; a < ph.agents_size(); ++a) {
          ph.mutable_agents(a)->set_au(b + (a == 0 ? -0.01 : 0.01));
        }
      } else {
        ph.set_kind(v1::CHECKPOINT);
        ph.mutable_spec()->set_checkpoint_op(operation == "checkpoint-read" ? v1::CHECKPOINT_READ
                                                                            : v1::CHECKPOINT_WRITE);
        ai->set_checkpoints(2);
        ai->set_min_rank_mib_per_s(100 * b);
        ai->set_aggregate_mib_per_s(400 * b);
        ai->set_max_duration_s(1 / b);
      }
    }
  }
}

// A fresh directory under /tmp, removed by the caller with `rm -rf` semantics
// not needed: tests write few small files.
inline std::string TempDir(const std::string& tag) {
  std::string tmpl = "/tmp/lockstep-" + tag + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  char* d = ::mkdtemp(buf.data());
  return d ? std::string(d) : std::string("/tmp");
}

}  // namespace lockstep::testing

// The fixtures by their short names in every results test (TempDir stays
// qualified: test_util.h has a TempDir class).
namespace lockstep {
using testing::Has;
using testing::MakeRun;
using testing::Reps;
using testing::SetAiFigures;
using testing::SynthRun;
}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_UNIT_RESULTS_FIXTURES_H_
