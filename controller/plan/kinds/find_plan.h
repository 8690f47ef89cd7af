// kind = "find": files under `dir` modified after the start instant of the
// earlier phase `find_newer_than` ("" = any), of exactly find_size_bytes
// when find_match_size, whose name matches find_name_glob ("" = any).
// The keys controller/plan/kinds/find.cc reads into PhasePlan::Own<FindPlan>().
#ifndef LOCKSTEP_CONTROLLER_PLAN_KINDS_FIND_PLAN_H_
#define LOCKSTEP_CONTROLLER_PLAN_KINDS_FIND_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "controller/plan/kind_params.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

struct FindPlan : KindParamsOf<FindPlan> {
  std::string find_newer_than;
  uint64_t find_size_bytes = 0;
  bool find_match_size = false;
  std::string find_name_glob;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_KINDS_FIND_PLAN_H_
