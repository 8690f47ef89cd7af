// The table of controller-side phase kinds (controller/plan/phase_kind.h):
// one maker per kind, each defined in its own file of this folder.
#ifndef LOCKSTEP_CONTROLLER_PLAN_KINDS_REGISTRY_H_
#define LOCKSTEP_CONTROLLER_PLAN_KINDS_REGISTRY_H_

#include <memory>
#include <vector>

#include "controller/plan/phase_kind.h"

namespace lockstep::kinds {

// Every kind, in wire order; made once, never destroyed.
const std::vector<const PhaseKindDef*>& Registry();

// The makers (one per file of this folder).
std::unique_ptr<PhaseKindDef> MakeTransferKind(v1::PhaseKind kind);  // transfer.cc: write, read, rewrite
std::unique_ptr<PhaseKindDef> MakeSmallFilesKind();                 // small_files.cc
std::unique_ptr<PhaseKindDef> MakeMdtestKind();                     // mdtest.cc
std::unique_ptr<PhaseKindDef> MakeFindKind();                       // find.cc
std::unique_ptr<PhaseKindDef> MakeCommandKind();                    // command.cc
std::unique_ptr<PhaseKindDef> MakeSeeksKind();                      // seeks.cc
std::unique_ptr<PhaseKindDef> MakeTrainKind();                      // train.cc
std::unique_ptr<PhaseKindDef> MakeDatagenKind();                    // datagen.cc
std::unique_ptr<PhaseKindDef> MakeCheckpointKind();                 // checkpoint.cc

}  // namespace lockstep::kinds

#endif  // LOCKSTEP_CONTROLLER_PLAN_KINDS_REGISTRY_H_
