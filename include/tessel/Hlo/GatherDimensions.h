//===- GatherDimensions.h - A gather's dimension numbers --------*- C++ -*-===//
//
// The attributes of a gather (kept verbatim by the parser) read once and
// checked against its operands, for the code generator. For jax's
// `x[idx]` on f32[10,5] with s32[6,1] indices:
//
//   gather(x, idx), offset_dims={1}, collapsed_slice_dims={0},
//     start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}
//
//   getGatherDimensions(...) -> offsetDims {1}, startIndexMap {0},
//     sliceSizes {1,5}, indexVectorDim 1, windowDims {1} (output dim 1
//     walks operand dim 1), batchPositions {0} (output dim 0 picks the
//     index vector)
//
// Output element `out` reads the operand at start + offset: component k of
// the index vector at out's batch positions, clamped to [0, dim - slice
// size], starts operand dim startIndexMap[k]; operandBatchingDims[k] takes
// out's index along the batch dim of startIndicesBatchingDims[k];
// windowDims[w] adds out[offsetDims[w]].
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_HLO_GATHERDIMENSIONS_H
#define TESSEL_HLO_GATHERDIMENSIONS_H

#include "tessel/Hlo/HloModule.h"
#include "tessel/Support/Expected.h"

#include <vector>

namespace tessel {

struct GatherDimensions {
  std::vector<int64_t> offsetDims;
  std::vector<int64_t> startIndexMap;
  std::vector<int64_t> operandBatchingDims;
  std::vector<int64_t> startIndicesBatchingDims;
  std::vector<int64_t> sliceSizes;
  int64_t indexVectorDim = 0;
  /// The operand dims the offset dims walk, in order (neither collapsed
  /// nor batching).
  std::vector<int64_t> windowDims;
  /// The output dims that are not offset dims, in order: the indices'
  /// dims without index_vector_dim.
  std::vector<int64_t> batchPositions;
};

/// The dimension numbers of a gather, checked as XLA's shape inference
/// checks them; an error names the attribute that is missing or does not
/// fit the shapes.
Expected<GatherDimensions> getGatherDimensions(const HloInstruction &gather);

} // namespace tessel

#endif // TESSEL_HLO_GATHERDIMENSIONS_H
