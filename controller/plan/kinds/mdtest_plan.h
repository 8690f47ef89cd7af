// kind = "mdtest": one sub-phase (md_op) of mdtest for every task.
// The keys controller/plan/kinds/mdtest.cc reads into PhasePlan::Own<MdtestPlan>().
#ifndef LOCKSTEP_CONTROLLER_PLAN_KINDS_MDTEST_PLAN_H_
#define LOCKSTEP_CONTROLLER_PLAN_KINDS_MDTEST_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "controller/plan/kind_params.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

struct MdtestPlan : KindParamsOf<MdtestPlan> {
  v1::MdtestOp md_op = v1::MD_OP_UNSPECIFIED;
  uint32_t md_branching = 1;              // mdtest -b
  uint32_t md_depth = 0;                  // mdtest -z
  uint64_t md_items = 0;                  // mdtest -n (per task)
  bool md_unique_dir = false;             // mdtest -u
  uint64_t md_write_bytes = 0;            // mdtest -w
  uint64_t md_read_bytes = 0;             // mdtest -e
  bool md_leaf_only = false;              // mdtest -L
  uint32_t md_neighbor_shift = 0;         // mdtest -N, × tasks per agent with several agents
  uint32_t md_stonewall_seconds = 0;      // mdtest -W (with wear-out, as mdtest)
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_KINDS_MDTEST_PLAN_H_
