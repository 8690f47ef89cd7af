#include "controller/plan/kinds/registry.h"

#include <memory>

namespace lockstep::kinds {

// The makers, one per file of this folder; a new kind adds one here and one
// line in the table below.
std::unique_ptr<PhaseKindDef> MakeTransferKind(v1::PhaseKind kind);  // transfer.cc: write, read, rewrite
std::unique_ptr<PhaseKindDef> MakeSmallFilesKind();                 // small_files.cc
std::unique_ptr<PhaseKindDef> MakeMdtestKind();                     // mdtest.cc
std::unique_ptr<PhaseKindDef> MakeFindKind();                       // find.cc
std::unique_ptr<PhaseKindDef> MakeCommandKind();                    // command.cc
std::unique_ptr<PhaseKindDef> MakeSeeksKind();                      // seeks.cc
std::unique_ptr<PhaseKindDef> MakeTrainKind();                      // train.cc
std::unique_ptr<PhaseKindDef> MakeDatagenKind();                    // datagen.cc
std::unique_ptr<PhaseKindDef> MakeCheckpointKind();                 // checkpoint.cc
std::unique_ptr<PhaseKindDef> MakeNetKind();                        // net.cc
std::unique_ptr<PhaseKindDef> MakeBackendKind();                    // backend.cc

const std::vector<const PhaseKindDef*>& Registry() {
  static const auto* table = [] {
    // One line per kind, in wire order (proto/lockstep/v1/agent.proto PhaseKind).
    std::unique_ptr<PhaseKindDef> made[] = {
        MakeTransferKind(v1::WRITE), MakeTransferKind(v1::READ), MakeTransferKind(v1::REWRITE),
        MakeSmallFilesKind(),
        MakeMdtestKind(),
        MakeFindKind(),
        MakeCommandKind(),
        MakeSeeksKind(),
        MakeTrainKind(),
        MakeDatagenKind(),
        MakeCheckpointKind(),
        MakeNetKind(),
        MakeBackendKind(),
    };
    auto* kinds = new std::vector<const PhaseKindDef*>;
    for (std::unique_ptr<PhaseKindDef>& k : made) kinds->push_back(k.release());
    return kinds;
  }();
  return *table;
}

}  // namespace lockstep::kinds
