#include "controller/run/phase_specs.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "controller/plan/phase_kind.h"
#include "controller/record/phase_id.h"
#include "controller/plan/sweep.h"
#include "controller/plan/kinds/find_plan.h"
#include "controller/plan/kinds/mdtest_plan.h"

namespace lockstep {

v1::PhaseSpec BaseSpecOf(const Plan& plan, const PhasePlan& planned, uint32_t test_id,
                         uint32_t rep, size_t client_count, bool ignore_free_space) {
  // This test's values of the swept keys.
  const PhasePlan phase = ResolvePhase(plan, planned, test_id);
  v1::PhaseSpec s;
  s.set_phase_id(PhaseId{test_id, rep, phase.name}.str());
  s.set_phase_name(phase.name);
  s.set_kind(phase.kind);
  s.set_test_id(test_id);
  s.set_repetition(rep);
  s.set_dir(phase.dir);
  s.set_file_name(phase.file_name);
  s.set_file_per_process(phase.file_per_process);
  for (const std::string& n : phase.file_names) s.add_task_file_names(n);
  const uint32_t tpa = phase.tasks_per_agent.front();
  s.set_tasks(tpa);
  s.set_total_tasks(tpa * static_cast<uint32_t>(client_count));
  s.set_transfer_bytes(phase.transfer_bytes);
  // total_size: checked by the coordinator before the test (CheckAggregates).
  auto split = SplitAggregate(plan, phase, test_id, client_count);
  s.set_block_bytes(split.ok() ? split->block_bytes : phase.block_bytes);
  s.set_segments(phase.segments);
  s.set_fsync_at_end(phase.fsync);
  s.set_fsync_per_transfer(phase.fsync_per_transfer);
  s.set_direct(phase.direct);
  s.set_verify(phase.verify);
  s.set_pattern_seed(plan.seed);
  // IOR -C (-Q N): read what the tasks N agents further wrote. Ranks are
  // block-mapped to agents, so that is N × tasks per agent ranks further
  // (IOR's shift for a by-slot mapping); with one agent it is the task itself.
  // IOR -Z -Q N: the draw skips the tasks of the first min(N, agents - 1)
  // agents (common/layout.h); no shift of its own.
  if (phase.reorder_random) s.set_reorder_node_offset(phase.reorder_node_offset);
  if (phase.reorder_tasks) {
    s.set_reorder_node_offset(phase.reorder_node_offset);
    s.set_reorder_shift(static_cast<uint32_t>(
        (uint64_t{phase.reorder_node_offset} * tpa) % std::max<uint32_t>(s.total_tasks(), 1)));
  }
  s.set_set_stripe(phase.set_stripe);
  s.set_stripe_count(phase.stripe_count);
  s.set_stripe_size_bytes(phase.stripe_size_bytes);
  s.set_stripe_index(phase.stripe_index);
  s.set_stripe_pool(phase.stripe_pool);
  s.set_object_size_bytes(phase.object_size_bytes);
  s.set_checksums(phase.checksums);
  s.set_ignore_free_space(ignore_free_space);
  SetWorkloadFields(phase, plan.seed, &s);
  // IOR -g and the stonewall agreements span every agent's tasks, as does
  // what a kind's FillSpec asked for (a checkpoint's ranks start each
  // checkpoint together); with one agent there is nothing to sync.
  s.set_sync_across_agents(client_count > 1 && (s.sync_across_agents() || phase.intra_barriers ||
                                                phase.stonewall_wear_out ||
                                                phase.Own<MdtestPlan>().md_stonewall_seconds > 0));
  return s;
}

std::vector<v1::PhaseSpec> ClientSpecsOf(const v1::PhaseSpec& base, size_t client_count) {
  std::vector<v1::PhaseSpec> out;
  for (size_t i = 0; i < client_count; ++i) {
    v1::PhaseSpec& s = out.emplace_back(base);
    s.set_first_rank(static_cast<uint32_t>(i) * base.tasks());
  }
  return out;
}

void SetFindNewer(const PhasePlan& phase, const v1::TestRecord& test, uint32_t rep,
                  v1::PhaseSpec* base) {
  if (phase.kind != v1::FIND || phase.Own<FindPlan>().find_newer_than.empty()) return;
  const PhaseId newer{test.test_id(), rep, phase.Own<FindPlan>().find_newer_than};
  for (const v1::PhaseRecord& pr : test.phases()) {
    if (PhaseId::Parse(pr.phase_id()) == newer) base->set_find_newer_unix_ns(pr.start_at_unix_ns());
  }
}

uint64_t AgreedStonewallCount(const v1::PhaseRecord& from) {
  // The reduced record, not the tasks: they leave memory once journaled.
  return from.has_stonewall() ? from.stonewall().pairs_max() : 0;
}

void ToAgentClock(int64_t offset_ns, v1::PhaseSpec* spec) {
  if (spec->find_newer_unix_ns() != 0) {
    spec->set_find_newer_unix_ns(spec->find_newer_unix_ns() + offset_ns);
  }
}

}  // namespace lockstep
