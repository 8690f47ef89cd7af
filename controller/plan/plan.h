// A plan: the TOML file `lockstep run` executes. Parsing and validation only;
// every error names the file, line and column, the key and the fix.
#ifndef LOCKSTEP_CONTROLLER_PLAN_PLAN_H_
#define LOCKSTEP_CONTROLLER_PLAN_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/plan/kind_params.h"
#include "controller/plan/limits.h"  // the bounds the values below are checked against
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

struct AgentPlan {
  std::string address;  // HOST:PORT
  v1::Role role = v1::CLIENT;
};

// One key of a phase given as a list: the values of the sweep, as the plan
// wrote them ("64k", "true", "4"), test i taking value i.
struct PhaseSweep {
  std::string key;                  // the plan key ("stripe_size")
  std::vector<std::string> values;  // one per test
  // Every phase of the plan sweeps `key` with these values: SweepValuesOf
  // names it once (set by MarkSharedSweeps, controller/plan/sweep.h).
  bool shared = false;
};

// A phase's values (test 0's when it sweeps): everything of a PhasePlan
// but its lists, so that a test's phase (ResolvePhase) is copied in time
// independent of the sweep's length.
struct PhaseValues {
  std::string name;
  v1::PhaseKind kind = v1::WRITE;
  std::string dir;
  std::string file_name = "testfile";
  bool file_per_process = false;          // IOR's default is one shared file
  // file_names: one plain name per task, used as is (IOzone -F); file per
  // process only. Empty: "<file_name>.%08d".
  std::vector<std::string> file_names;
  uint64_t transfer_bytes = 256 * 1024;   // IOR defaults: -t 256k -b 1m -s 1
  uint64_t block_bytes = 1024 * 1024;
  uint64_t segments = 1;
  // total_size: the aggregate of every task of a test (0: not given, use
  // block_bytes). Each test's block is SplitAggregate()'s.
  uint64_t total_bytes = 0;
  bool fsync = false;                     // IOR -e
  bool fsync_per_transfer = false;        // IOR -Y
  bool direct = false;
  bool keep = false;                      // IOR -k
  bool verify = false;                    // IOR -R (read phases)
  bool reorder_tasks = false;             // IOR -C
  uint32_t reorder_node_offset = 1;       // IOR -Q: read what tasks this many agents further wrote
  bool remove_files = false;              // read: remove the files read after the repetition (IOR without -k)
  bool reorder_random = false;            // IOR -Z (read phases)
  int32_t reorder_random_seed = 0;        // IOR -X
  bool multi_file = false;                // IOR -m: files "<name>.<repetition>"
  std::string cache;                      // overrides [run] cache when set
  // Lustre striping of `dir` before the phase's files are created.
  bool set_stripe = false;
  int32_t stripe_count = 0;               // 0 default, -1 all OSTs
  uint64_t stripe_size_bytes = 0;         // 0 default; multiple of 64 KiB
  int32_t stripe_index = -1;
  std::string stripe_pool;
  uint64_t object_size_bytes = 0;         // CephFS object_size; 0 = the directory's
  v1::ChecksumMode checksums = v1::CHECKSUMS_UNCHANGED;
  bool random_offsets = false;            // IOR -z
  bool random_blocks = false;             // IOR -z -z (read phases): random, repeating blocks
  uint32_t stonewall_seconds = 0;         // IOR -D
  bool stonewall_wear_out = false;        // IOR -O stoneWallingWearOut=1 (per agent)
  bool verify_after_write = false;        // IOR -W (write phases, untimed)
  uint32_t delay_seconds = 0;             // IOR -d (untimed)
  bool intra_barriers = false;            // IOR -g (across agents: via the controller)
  // The name of an earlier phase of the same test whose agreed stonewall
  // count (IOR pairs after wear-out, mdtest items) this phase works on
  // instead of its own (IO500's write -> read hand-off; PhaseSpec.stonewall_count).
  std::string stonewall_count_from;

  // The keys a kind owns (controller/plan/kinds/KIND_plan.h): Own<T>() on a
  // const phase reads them (T's defaults when the phase never set them), on
  // a mutable one gives them to set.
  template <typename T>
  const T& Own() const {
    return own.Get<T>();
  }
  template <typename T>
  T& Own() {
    return own.Mutable<T>();
  }
  KindParamsSet own;
};

struct PhasePlan : PhaseValues {
  std::vector<uint32_t> tasks_per_agent;  // more than one value: a sweep

  // A sweep (controller/plan/sweep.h): the keys given as lists, and the
  // phase as read for each test (points[i]: every list at value i). The
  // fields above are test 0's; ResolvePhase gives test i's. Both empty
  // without a sweep.
  std::vector<PhaseSweep> sweep;
  std::vector<PhasePlan> points;
};

struct Plan {
  std::string source;      // file name for messages
  std::string text;        // the TOML as read
  std::string name;
  uint32_t repetitions = 1;
  uint32_t connect_timeout_ms = 5000;
  uint32_t lease_ms = 5000;
  // [run] lease_ms was named. Otherwise the run sizes the lease to its
  // agents (LeaseMsForAgents, controller/plan/limits.h) once it knows them.
  bool lease_ms_given = false;
  uint32_t progress_interval_ms = 1000;
  uint64_t seed = 1;
  // Cache barrier before every phase: "none", "clients" or "all" (clients
  // and servers): sync clients, sync servers, then drop_caches everywhere.
  std::string cache = "none";
  uint32_t drop_mode = 3;         // value written to /proc/sys/vm/drop_caches
  bool cache_required = false;    // fail (not warn) where dropping is refused
  bool lustre_lru_clear = false;  // ldlm.namespaces.*.lru_size=clear on clients
  // Start skew bound: 0 = none. Beyond it a phase is marked, repeated (up to
  // 3 times) or fails the run.
  uint32_t max_start_skew_us = 0;
  std::string on_skew = "mark";   // "mark", "repeat", "fail"
  // Clock offset uncertainty bound (0 = none): "warn" or "fail".
  uint32_t max_clock_uncertainty_us = 0;
  std::string on_clock = "warn";
  // An agent lost mid-run: "stop" the run, or "continue" without it (later
  // results marked partial).
  std::string on_agent_loss = "stop";
  // A transfer in flight longer than this fails the phase with the task,
  // file and offset it is stuck on (0 = never).
  uint32_t io_stall_timeout_ms = 120000;
  std::vector<AgentPlan> agents;  // empty: local agents
  // [run] client_agents: in test t only the first client_agents[t] client
  // agents take part (1 node, then 4, then 8: seed 000); a list sweeps with
  // the phases' lists. Empty: every client agent in every test.
  std::vector<uint32_t> client_agents;
  std::vector<PhasePlan> phases;
  // `lockstep run --smoke` (controller/plan/plan_smoke.h): the plan was made
  // small; one line per value changed or setting left out.
  bool smoke = false;
  std::vector<std::string> smoke_changes;

  // Number of tests (sweep points): the length of the list-valued keys.
  uint32_t tests() const;
  // How many client agents take part in test `t`; 0 = all.
  uint32_t ClientAgents(uint32_t t) const;
  // tasks_per_agent of phase `p` in test `t` (the rest of a test's values:
  // ResolvePhase, controller/plan/sweep.h).
  uint32_t TasksPerAgent(const PhasePlan& p, uint32_t t) const;
  // The cache mode of phase `p`: its own, else the plan's.
  const std::string& CacheMode(const PhasePlan& p) const { return p.cache.empty() ? cache : p.cache; }
};

// A phase's block in one test: block_bytes, or with total_size the
// aggregate split equally over every task of the test (client agents ×
// tasks per agent, × segments), rounded down to a multiple of the transfer.
struct AggregateSplit {
  uint64_t block_bytes = 0;
  uint64_t dropped_bytes = 0;  // total_size − what the tasks move (the rounding)
};

// The split of phase `p` in test `test` run by `client_agents` client
// agents. InvalidArgument, naming the phase, total_size, both values and
// the fix, when the aggregate is smaller than one transfer per task;
// OutOfRange, naming block_size, segments and the tasks, when the test's
// bytes (block × segments × tasks) exceed kMaxFileOffsetBytes
// (common/checked_math.h) or 64 bits.
absl::StatusOr<AggregateSplit> SplitAggregate(const Plan& plan, const PhasePlan& p,
                                              uint32_t test, size_t client_agents);

// "phase 'w' test 2: total_size 2 TiB over 24 tasks: block 85.3 GiB, 512 KiB
// not moved (rounded down to the transfer)"; empty when nothing was dropped.
std::string AggregateNote(const PhasePlan& p, uint32_t test, size_t tasks,
                          const AggregateSplit& split);

// Parses and validates `text`; `source` names it in errors ("plan.toml").
absl::StatusOr<Plan> ParsePlan(const std::string& text, const std::string& source);
absl::StatusOr<Plan> LoadPlan(const std::string& path);

// A file a plan is made from (a plan, DLIO's YAML, IO500's ini, an IOR -f
// script, a hostfile), read with the bound kMaxPlanFileBytes; `what` names
// it in the refusal ("a plan file", "a DLIO config").
absl::StatusOr<std::string> ReadPlanInput(const std::string& path, const char* what);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_PLAN_H_
