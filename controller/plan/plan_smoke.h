// Two looks at a plan before (or instead of) its real run:
//   `lockstep run --smoke`   the same plan, made small: every size capped,
//                            one repetition, so that a site's full-size plan
//                            runs on local agents in under a minute (CI).
//   `lockstep run --dry-run` what the plan would do: tests, phases, tasks,
//                            bytes per agent and in all, files, and how long
//                            at a given rate; no agent is contacted.
#ifndef LOCKSTEP_CONTROLLER_PLAN_PLAN_SMOKE_H_
#define LOCKSTEP_CONTROLLER_PLAN_PLAN_SMOKE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "controller/plan/plan.h"

namespace lockstep {

struct SmokeOptions {
  uint64_t max_bytes = uint64_t{16} << 20;  // per block, transfer, total per task
  uint32_t max_tasks_per_agent = 8;
  uint64_t max_items = 200;                 // mdtest items, small files, seeks per task
  uint32_t max_stonewall_seconds = 2;
  // The agents a local smoke run starts: client_agents above it is capped.
  // 0: no cap (remote agents, counted only when the run starts).
  uint32_t max_client_agents = 0;
  // Whether the plan's directories are on Lustre. false: striping, client
  // checksums and the lock LRU flush are left out (and each is named).
  bool lustre = false;
};

// Makes `plan` a smoke plan in place: sets plan->smoke and appends one line
// per change to plan->smoke_changes ("phase seq-write: block_size 60g ->
// 16m"). Never fails: every value is made smaller or left alone.
void MakeSmokePlan(const SmokeOptions& options, Plan* plan);

// Who a dry run assumes takes part.
struct DryRunAgents {
  uint32_t clients = 0;
  uint32_t servers = 0;
  std::string source;  // "the plan's [[agent]] tables", "--local 2", ...
};

struct DryRunOptions {
  double rate_mib_s = 1000;    // data phases
  double rate_ops_s = 10000;   // metadata phases (mdtest, small files, find)
};

// The dry run's text: one block per test, one line per phase, then the
// totals. Pure: reads `plan` only.
std::string FormatDryRun(const Plan& plan, const DryRunAgents& agents,
                         const DryRunOptions& options);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_PLAN_SMOKE_H_
