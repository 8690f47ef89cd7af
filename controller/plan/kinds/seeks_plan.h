// kind = "seeks": bonnie++'s random seeks over the phase's shared file:
// `seeks` per task, seek_rewrite_pct of them written back. transfer_size
// is 8 KiB (bonnie++'s chunk) unless the phase sets it.
// The keys controller/plan/kinds/seeks.cc reads into PhasePlan::Own<SeeksPlan>().
#ifndef LOCKSTEP_CONTROLLER_PLAN_KINDS_SEEKS_PLAN_H_
#define LOCKSTEP_CONTROLLER_PLAN_KINDS_SEEKS_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "controller/plan/kind_params.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

struct SeeksPlan : KindParamsOf<SeeksPlan> {
  uint64_t seeks = 0;
  uint32_t seek_rewrite_pct = 10;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_KINDS_SEEKS_PLAN_H_
