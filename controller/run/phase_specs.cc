#include "controller/run/phase_specs.h"

#include <algorithm>

#include "controller/plan/phase_kind.h"
#include "controller/record/phase_id.h"

namespace lockstep {

void SetEarlierStart(const PhasePlan& phase, const v1::TestRecord& test, uint32_t rep,
                     v1::PhaseSpec* base) {
  const PhaseKindDef& kind = KindOf(phase.kind);
  const std::string earlier = kind.StartInstantOf(phase);
  if (earlier.empty()) return;
  const PhaseId id{test.test_id(), rep, earlier};
  for (const v1::PhaseRecord& pr : test.phases()) {
    if (PhaseId::Parse(pr.phase_id()) == id) kind.SetStartOf(pr.start_at_unix_ns(), base);
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
