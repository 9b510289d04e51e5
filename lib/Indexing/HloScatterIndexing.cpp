//===- HloScatterIndexing.cpp - Indexing maps of scatter ------------------===//
//
// scatter(operand, indices, updates) combines update element u into the
// output at start(b) + window(u), b being u's scatter dims (a point of the
// indices' batch space): start component k, in operand dim
// scatter_dims_to_operand_dims[k], is indices[b, k], a runtime variable
// rt_k whose feasible values are [0, dim - window size] (an update whose
// window does not fit is skipped whole); an input batching dim takes the
// update's index of the matching indices dim; a window dim adds u's index
// in its update window dim:
//
//   scatter(f32[6,5] %x, s32[3,1] %i, f32[3,2,5] %u),
//     update_window_dims={1,2}, inserted_window_dims={},
//     scatter_dims_to_operand_dims={0}, index_vector_dim=1
//   updates -> output: (d0, d1, d2){rt0} -> (rt0 + d1, d2),
//     domain: d0 in [0, 2], d1 in [0, 1], d2 in [0, 4], rt0 in [0, 4]
//
// The operand maps by the identity both ways (every output element starts
// as its operand element). The indices reach the output only through
// values: unknown indexing. Output to input, the updates and indices are
// unknown too: which updates land on an output element depends on the
// indices' values (XLA's indexing analysis has no scatter maps at all). A
// variadic scatter, or dimension numbers that do not fit the shapes, give
// unknown indexing everywhere.
//
//===----------------------------------------------------------------------===//
#include "HloIndexingOps.h"

#include "tessel/Hlo/ScatterDimensions.h"

namespace tessel {
namespace hlo_indexing {
namespace {

/// The dimension numbers of a one-operand scatter of static arrays, or
/// nullopt.
std::optional<ScatterDimensions> oneOperandScatter(const HloInstruction &inst) {
  if (inst.operandCount() != 3)
    return std::nullopt;
  for (const HloInstruction *operand : inst.operands())
    if (!operand->shape().isArray() || !operand->shape().dynamicDims.empty())
      return std::nullopt;
  Expected<ScatterDimensions> dims = getScatterDimensions(inst);
  if (!dims)
    return std::nullopt;
  return *dims;
}

} // namespace

HloInstructionIndexing scatterOutputToInput(const HloInstruction &inst,
                                            mlir::MLIRContext *context) {
  HloInstructionIndexing r;
  std::optional<ScatterDimensions> dims = oneOperandScatter(inst);
  for (int64_t k = 0; k < inst.operandCount(); ++k)
    if (k != 0 || !dims)
      r.markUnknown(static_cast<size_t>(k));
  if (dims)
    r.addMap(0, IndexingMap::identity(context, inst.operand(0)->shape().dims));
  return r;
}

HloInstructionIndexing scatterInputToOutput(const HloInstruction &inst,
                                            int64_t inputId,
                                            mlir::MLIRContext *context) {
  HloInstructionIndexing r;
  const Shape &shape = inst.shape();
  r.maps.resize(shape.isTuple() ? shape.tupleShapes.size() : 1);
  std::optional<ScatterDimensions> s = oneOperandScatter(inst);
  if (!s || inputId == 1) {
    for (size_t j = 0; j < r.maps.size(); ++j)
      r.markUnknown(j);
    return r;
  }
  const std::vector<int64_t> &operand = inst.operand(0)->shape().dims;
  if (inputId == 0) {
    r.addMap(0, IndexingMap::identity(context, operand));
    return r;
  }
  const std::vector<int64_t> &updates = inst.operand(2)->shape().dims;
  int64_t rank = static_cast<int64_t>(operand.size());
  llvm::SmallVector<mlir::AffineExpr> results(rank, cst(0, context));
  std::vector<IndexingVariable> dimVars, rtVars;
  for (int64_t size : updates)
    dimVars.emplace_back(0, size - 1);
  for (size_t k = 0; k < s->scatterDimsToOperandDims.size(); ++k) {
    int64_t d = s->scatterDimsToOperandDims[k];
    results[d] = sym(static_cast<unsigned>(k), context);
    rtVars.emplace_back(0, operand[d] - s->windowSizes[d]);
  }
  for (size_t i = 0; i < s->inputBatchingDims.size(); ++i) {
    int64_t j = s->scatterIndicesBatchingDims[i];
    int64_t position = j < s->indexVectorDim ? j : j - 1;
    results[s->inputBatchingDims[i]] =
        dim(static_cast<unsigned>(s->scatterDims[position]), context);
  }
  for (size_t w = 0; w < s->windowDims.size(); ++w)
    results[s->windowDims[w]] =
        results[s->windowDims[w]] +
        dim(static_cast<unsigned>(s->updateWindowDims[w]), context);
  r.addMap(
      0, IndexingMap(mlir::AffineMap::get(static_cast<unsigned>(updates.size()),
                                          static_cast<unsigned>(rtVars.size()),
                                          results, context),
                     dimVars, {}, rtVars));
  return r;
}

} // namespace hlo_indexing
} // namespace tessel
