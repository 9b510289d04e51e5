//===- ScatterDimensions.h - A scatter's dimension numbers ------*- C++ -*-===//
//
// The attributes of a scatter (kept verbatim by the parser) read once, for
// the code generator. For jax's `x.at[idx].add(v)` on f32[6,5] with
// s32[6,1] indices and f32[6,5] updates:
//
//   scatter(x, idx, v), update_window_dims={1}, inserted_window_dims={0},
//     scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add
//
//   getScatterDimensions(...) -> updateWindowDims {1}, insertedWindowDims
//     {0}, scatterDimsToOperandDims {0}, indexVectorDim 1, windowDims {1}
//     (operand dim 1 is walked by update dim 1), scatterDims {0} (update
//     dim 0 picks the index vector), combiner %add
//
// An update element at index u goes to the operand at start + window
// offset: start[scatterDimsToOperandDims[k]] is component k of the index
// vector at u's scatter dims, start[inputBatchingDims[k]] the index of u
// along the matching batch dim; windowDims[w] adds u[updateWindowDims[w]].
// An update whose whole window does not fit the operand is skipped.
//
// A variadic scatter updates n operands together, `scatter(x0, ..., xn-1,
// idx, u0, ..., un-1)` of shape `(x0, ..., xn-1)`, with one set of indices:
// to_apply takes the n current elements and then the n update elements and
// returns the n new ones (a tuple).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_HLO_SCATTERDIMENSIONS_H
#define TESSEL_HLO_SCATTERDIMENSIONS_H

#include "tessel/Hlo/HloModule.h"
#include "tessel/Support/Expected.h"

#include <vector>

namespace tessel {

struct ScatterDimensions {
  /// How many operands (and updates) it scatters: operand k is the
  /// instruction's operand k, the indices operand `operands`, update k
  /// operand `operands + 1 + k`.
  int64_t operands = 1;
  std::vector<int64_t> updateWindowDims;
  std::vector<int64_t> insertedWindowDims;
  std::vector<int64_t> scatterDimsToOperandDims;
  std::vector<int64_t> inputBatchingDims;
  std::vector<int64_t> scatterIndicesBatchingDims;
  int64_t indexVectorDim = 0;
  bool uniqueIndices = false;
  /// The operand dims the update's window dims walk, in order (neither
  /// inserted nor batching).
  std::vector<int64_t> windowDims;
  /// The update dims that are not window dims, in order: the indices'
  /// batch space.
  std::vector<int64_t> scatterDims;
  /// The size of the window along each operand dim (1 where none walks).
  std::vector<int64_t> windowSizes;
  /// to_apply: the instruction's one called computation when it has one
  /// (a copy made outside the module that defines it), else the one the
  /// attribute names in the instruction's module.
  const HloComputation *combiner = nullptr;
};

/// The dimension numbers of a scatter of one or several operands; an error
/// names the attribute that is missing or does not fit the shapes.
Expected<ScatterDimensions> getScatterDimensions(const HloInstruction &scatter);

} // namespace tessel

#endif // TESSEL_HLO_SCATTERDIMENSIONS_H
