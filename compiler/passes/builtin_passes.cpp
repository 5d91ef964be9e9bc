#include "compiler/pass_registry.h"
#include "compiler/passes/passes.h"

namespace fsc {

void registerBuiltinPasses(PassRegistry& registry) {
    using namespace passes;
    registry.add(eliminateNoOps);
    registry.add(eliminateDeadCode);
    registry.add(eliminateCommonSubexpressions);
    registry.add(foldConstants);
    registry.add(foldShapeComputation);
    registry.add(cancelInversePairs);
}

}  // namespace fsc
