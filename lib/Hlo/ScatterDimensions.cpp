//===- ScatterDimensions.cpp - A scatter's dimension numbers --------------===//
#include "tessel/Hlo/ScatterDimensions.h"

#include "EvaluatorOps.h"
#include "RawAttributes.h"

namespace tessel {

Expected<ScatterDimensions>
getScatterDimensions(const HloInstruction &scatter) {
  if (scatter.opcode() != HloOpcode::Scatter || scatter.operandCount() < 3 ||
      scatter.operandCount() % 2 != 1)
    return Error("a scatter has n operands, the indices and n updates");
  // The evaluator's dimension numbers, checked as XLA's shape inference
  // checks them.
  std::vector<const Shape *> shapes;
  for (const HloInstruction *operand : scatter.operands())
    shapes.push_back(&operand->shape());
  Expected<eval::ScatterDims> dims = eval::scatterDims(scatter, shapes);
  if (!dims)
    return dims.error();
  ScatterDimensions s;
  s.operands = (scatter.operandCount() - 1) / 2;
  s.updateWindowDims = dims->updateWindowDims;
  s.scatterDimsToOperandDims = dims->toOperand;
  s.inputBatchingDims = dims->inputBatching;
  s.scatterIndicesBatchingDims = dims->indicesBatching;
  s.indexVectorDim = dims->indexVectorDim;
  s.windowDims = dims->windowDims;
  s.scatterDims = dims->scatterPositions;
  s.windowSizes = dims->windowSizes;
  Expected<std::vector<int64_t>> inserted =
      eval::intListAttribute(scatter, "inserted_window_dims");
  if (!inserted)
    return inserted.error();
  s.insertedWindowDims = *inserted;
  Expected<bool> unique = eval::boolAttribute(scatter, "unique_indices");
  if (!unique)
    return unique.error();
  s.uniqueIndices = *unique;
  if (scatter.calledComputations().size() == 1) {
    // The parser's, or a copy's outside the module that defines to_apply
    // (the code generator's kernels).
    s.combiner = scatter.calledComputations().front();
  } else {
    Expected<std::vector<const HloComputation *>> callees =
        eval::calleesAttribute(scatter, "to_apply");
    if (!callees)
      return callees.error();
    if (callees->size() != 1)
      return Error("scatter needs one computation in to_apply=");
    s.combiner = callees->front();
  }
  return s;
}

} // namespace tessel
