#include "controller/run/phase_specs.h"

#include <algorithm>

#include "controller/record/phase_id.h"
#include "controller/plan/kinds/find_plan.h"

namespace lockstep {

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
