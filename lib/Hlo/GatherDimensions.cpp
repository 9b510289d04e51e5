//===- GatherDimensions.cpp - A gather's dimension numbers ----------------===//
#include "tessel/Hlo/GatherDimensions.h"

#include "EvaluatorOps.h"

namespace tessel {

Expected<GatherDimensions> getGatherDimensions(const HloInstruction &gather) {
  if (gather.opcode() != HloOpcode::Gather || gather.operandCount() != 2)
    return Error("a gather has 2 operands, the operand and the indices");
  // The evaluator's dimension numbers, so that both read them alike.
  Expected<eval::GatherDims> dims = eval::gatherDims(
      gather, gather.operand(0)->shape(), gather.operand(1)->shape());
  if (!dims)
    return dims.error();
  GatherDimensions g;
  g.offsetDims = dims->offsetDims;
  g.startIndexMap = dims->startIndexMap;
  g.operandBatchingDims = dims->operandBatching;
  g.startIndicesBatchingDims = dims->indicesBatching;
  g.sliceSizes = dims->sliceSizes;
  g.indexVectorDim = dims->indexVectorDim;
  g.windowDims = dims->windowDims;
  g.batchPositions = dims->batchPositions;
  return g;
}

} // namespace tessel
