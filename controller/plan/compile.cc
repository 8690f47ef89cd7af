#include "controller/plan/compile.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "controller/plan/phase_kind.h"
#include "controller/plan/sweep.h"
#include "controller/record/phase_id.h"

namespace lockstep {
namespace {

// Repetition 0's spec of `phase` (this test's values) in test `test_id`.
v1::PhaseSpec SpecOf(const Plan& plan, const PhasePlan& phase, uint32_t test_id,
                     const AggregateSplit& split, size_t client_count, bool ignore_free_space) {
  v1::PhaseSpec s;
  s.set_phase_id(PhaseId{test_id, 0, phase.name}.str());
  s.set_phase_name(phase.name);
  s.set_kind(phase.kind);
  s.set_test_id(test_id);
  s.set_dir(phase.dir);
  s.set_file_name(phase.file_name);
  s.set_file_per_process(phase.file_per_process);
  for (const std::string& n : phase.file_names) s.add_task_file_names(n);
  const uint32_t tpa = phase.tasks_per_agent.front();
  s.set_tasks(tpa);
  s.set_total_tasks(tpa * static_cast<uint32_t>(client_count));
  s.set_transfer_bytes(phase.transfer_bytes);
  s.set_block_bytes(split.block_bytes);
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
                                                phase.stonewall_wear_out));
  return s;
}

}  // namespace

absl::StatusOr<CompiledTest> CompileTest(const Plan& plan, const ResolvedPlan& resolved,
                                         uint32_t test_id, size_t client_agents,
                                         bool ignore_free_space, const ClientFit* fit) {
  CompiledTest out;
  out.test_id = test_id;
  out.client_agents = client_agents;
  out.phases.reserve(plan.phases.size());
  const std::vector<PhasePlan>& phases = resolved.tests[test_id];
  for (size_t i = 0; i < plan.phases.size(); ++i) {
    const PhasePlan& planned = plan.phases[i];
    if (FindKind(planned.kind) == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: phase '%s' has kind %d, which this lockstep does not know; the kinds are %s",
          plan.source, planned.name, static_cast<int>(planned.kind), KindNamesForMessage()));
    }
    CompiledPhase& c = out.phases.emplace_back();
    c.planned = &planned;
    c.resolved = &phases[i];  // this test's swept values
    auto split = SplitAggregate(plan, *c.resolved, test_id, client_agents);
    if (!split.ok()) return split.status();
    c.aggregate_note = AggregateNote(
        *c.resolved, test_id, plan.TasksPerAgent(*c.resolved, test_id) * client_agents, *split);
    c.spec = SpecOf(plan, *c.resolved, test_id, *split, client_agents, ignore_free_space);
    if (fit != nullptr) KindOf(planned.kind).ApplyFit(*fit, &c.spec);
  }
  return out;
}

v1::PhaseSpec SpecOfRepetition(const CompiledPhase& phase, uint32_t rep) {
  v1::PhaseSpec s = phase.spec;
  s.set_repetition(rep);
  s.set_phase_id(PhaseId{s.test_id(), rep, s.phase_name()}.str());
  return s;
}

void SetClientRanks(size_t client_index, v1::PhaseSpec* spec) {
  spec->set_first_rank(static_cast<uint32_t>(client_index) * spec->tasks());
}

}  // namespace lockstep
