// Compile: one test of a plan as its agents run it. Every phase at the
// test's values (resolved once per run: ResolvedPlan), its total_size
// split over the test's tasks, its kind known and its PhaseSpec built —
// once per test, not per repetition or per use. The coordinator stamps a
// compiled spec with the repetition (SpecOfRepetition) and each client with
// its ranks (SetClientRanks); nothing after compilation rebuilds a spec.
#ifndef LOCKSTEP_CONTROLLER_PLAN_COMPILE_H_
#define LOCKSTEP_CONTROLLER_PLAN_COMPILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/plan/phase_kind.h"
#include "controller/plan/plan.h"
#include "controller/plan/sweep.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

struct CompiledPhase {
  const PhasePlan* planned = nullptr;  // the plan's phase (its lists, its links to others)
  const PhasePlan* resolved = nullptr;  // its values in this test (in the ResolvedPlan)
  v1::PhaseSpec spec;                  // repetition 0's spec, first_rank 0
  // What total_size's split left out (AggregateNote); empty: nothing.
  std::string aggregate_note;
};

struct CompiledTest {
  uint32_t test_id = 0;
  size_t client_agents = 0;           // the clients it was compiled for
  std::vector<CompiledPhase> phases;  // the plan's order
};

// Test `test_id` of `plan` (its phases as `resolved`, ResolvePlan(plan),
// has them) run by `client_agents` clients, with what the kinds chose from
// the clients' facts (`fit`: PhaseKindDef::ApplyFit; null before they are
// known). `ignore_free_space`: --force. InvalidArgument naming the plan file
// and phase for a kind this controller does not know; SplitAggregate's
// errors (a total_size smaller than one transfer per task, a test's bytes
// beyond a file's reach) as they are. The result points into `plan` and
// `resolved`, which must outlive it.
absl::StatusOr<CompiledTest> CompileTest(const Plan& plan, const ResolvedPlan& resolved,
                                         uint32_t test_id, size_t client_agents,
                                         bool ignore_free_space,
                                         const ClientFit* fit = nullptr);
// The result would point into a temporary.
absl::StatusOr<CompiledTest> CompileTest(const Plan& plan, ResolvedPlan&& resolved,
                                         uint32_t test_id, size_t client_agents,
                                         bool ignore_free_space,
                                         const ClientFit* fit = nullptr) = delete;

// `phase`'s spec in repetition `rep`: the compiled spec with the repetition
// and its phase id ("t<test>/r<rep>/<name>").
v1::PhaseSpec SpecOfRepetition(const CompiledPhase& phase, uint32_t rep);

// Client `client_index` (rank order) runs ranks index × tasks … (index + 1) ×
// tasks − 1: sets spec->first_rank.
void SetClientRanks(size_t client_index, v1::PhaseSpec* spec);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_COMPILE_H_
