#include "controller/plan/kinds/registry.h"

namespace lockstep::kinds {

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
    };
    auto* kinds = new std::vector<const PhaseKindDef*>;
    for (std::unique_ptr<PhaseKindDef>& k : made) kinds->push_back(k.release());
    return kinds;
  }();
  return *table;
}

}  // namespace lockstep::kinds
