#include "compiler/pass_registry.h"
#include "compiler/passes/passes.h"

namespace fsc {

void registerBuiltinPasses(PassRegistry& registry) {
    using namespace passes;
    registry.add(eliminateNoOps);
    registry.add(eliminateDeadCode);
    registry.add(eliminateCommonSubexpressions);
    registry.add([] { return foldConstants(); });
    registry.add(foldShapeComputation);
    registry.add(cancelInversePairs);
    registry.add(foldConvBatchNorm);
    registry.add(fusePad);
    registry.add(fuseMatMulAdd);
    registry.add([] { return lowerContribOps(); });
    registry.add(fuseGelu);
    registry.add(fuseLayerNorm);
    registry.add(fuseRmsNorm);
    registry.add(fuseSkipLayerNorm);
    registry.add(fuseActivation);
    registry.add(fuseConvResidual);
    registry.add(fuseSePool);
    registry.add(fuseAttention);
    registry.add(fuseElementwise);
    registry.add([] { return channelsLast(); });
    registry.add(splitPackedProjection);
    registry.add(rowsGemmToMatMul);
    registry.add(reshapeBeforeTranspose);
    registry.add(scatterRows);
    registry.add(einsumToMatmul);
    registry.add([] { return convertToFloat16(); });
    registry.add([] { return convertToBFloat16(); });
    registry.add([] { return widenFloat16(); });
    registry.add([] { return quantizeInt8(); });
    registry.add([] { return foldQdq(); });
    registry.add([] { return fuseIntegerMatMul(); });
    registry.add([] { return tensorParallel(2); });
    registry.add([] { return pipelineParallel(2); });
    registry.add(scheduleForMemory);
}

}  // namespace fsc
