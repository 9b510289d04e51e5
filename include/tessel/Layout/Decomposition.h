//===- Decomposition.h - A tiling as pad, reshape and transpose -*- C++ -*-===//
//
// Any tiled layout is a sequence of array operations on the logical array,
// after which the row-major order of the result is the buffer:
//
//   f32[3,5]{1,0:T(2,2)}
//     pad        [3,5] -> [4,6]        (dim 0 by 1, dim 1 by 1)
//     reshape    [4,6] -> [2,2,3,2]    (split each dim into tiles x tile)
//     transpose  [2,2,3,2] -> [2,3,2,2] (permutation 0,2,1,3: tile dims last)
//
// For each tile: prepend size-1 dims when the tile has more dims than the
// shape, merge the dims marked `*` (a reshape), pad the tiled dims to a
// multiple of the tile, split them (a reshape) and move the tile dims to the
// minor end keeping their order (a transpose). The first step puts the dims
// in physical order; a final pad applies L(n) to the flat buffer.
//
// Reshapes change no bytes (bitcasts); pads and transposes do. tessel's
// tests apply these steps to real arrays and check that they give the same
// offsets as TiledLayout.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LAYOUT_DECOMPOSITION_H
#define TESSEL_LAYOUT_DECOMPOSITION_H

#include "tessel/Layout/TiledLayout.h"

#include <string>
#include <vector>

namespace tessel {

struct DecompositionStep {
  enum class Kind { Transpose, Reshape, Pad };
  Kind kind = Kind::Reshape;
  /// Transpose: result dim i is input dim permutation[i].
  std::vector<int64_t> permutation;
  /// Pad: elements added at the high end of each input dim.
  std::vector<int64_t> padHigh;
  std::vector<int64_t> inputDims;
  std::vector<int64_t> outputDims;
  /// What the step is for, e.g. "split each tiled dim into (tiles, tile)".
  std::string purpose;
};

/// The steps for a layout; empty for a row-major array without tiles.
std::vector<DecompositionStep> decompose(const TiledLayout &layout);

/// One line per step, as in the example above.
std::string printDecomposition(const std::vector<DecompositionStep> &steps);

/// The report of `tessel layout decompose`: the layout, its steps (or why
/// there are none), and the dims whose row-major order the buffer is.
std::string describeDecomposition(const TiledLayout &layout);

} // namespace tessel

#endif // TESSEL_LAYOUT_DECOMPOSITION_H
