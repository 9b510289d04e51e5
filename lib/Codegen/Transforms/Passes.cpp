//===- Passes.cpp - Registration of the code generator's passes -----------===//
#include "tessel/Codegen/Passes.h"

namespace tessel {

void registerCodegenPasses() {
  for (auto create :
       {createInlineSubgraphsPass, createFoldNanConstantsPass,
        createSimplifyFpConversionsPass, createLowerLoopsPass,
        createFlattenTensorsPass, createMinMaxOnBitsPass,
        createVectorizePartialsPass, createVectorizeLoadsStoresPass,
        createUnrollLoopsPass, createLowerGridToCpuPass,
        createSplitRaggedBlocksPass, createVectorizeLaneLoopsPass,
        createJamReductionLoopsPass, createColumnExtremesPass,
        createLowerGridToNvvmPass, createLowerIndexingPass,
        createLowerTensorsPass, createLowerToLlvmPass})
    mlir::registerPass(create);
}

} // namespace tessel
