// kind = "small_files": per task, `small_files` files of sizes log-uniform
// in [small_file_min_size, small_file_max_size], small_files_per_dir per dir.
// The keys controller/plan/kinds/small_files.cc reads into PhasePlan::Own<SmallFilesPlan>().
#ifndef LOCKSTEP_CONTROLLER_PLAN_KINDS_SMALL_FILES_PLAN_H_
#define LOCKSTEP_CONTROLLER_PLAN_KINDS_SMALL_FILES_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "controller/plan/kind_params.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

struct SmallFilesPlan : KindParamsOf<SmallFilesPlan> {
  uint64_t small_files = 0;
  uint64_t small_file_min_bytes = 4096;
  uint64_t small_file_max_bytes = 65536;
  uint32_t small_files_per_dir = 100;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_KINDS_SMALL_FILES_PLAN_H_
