//===- TiledLayout.h - Logical index <-> physical offset --------*- C++ -*-===//
//
// A TiledLayout is an array shape with its layout, compiled into the chain of
// steps that sends a logical index to a linear offset in the buffer:
//
//   1. permute: the logical dims in physical order, major to minor (the
//      reverse of minor_to_major);
//   2. for each tile t of T(t1)(t2)...:
//      a. if t has more dims than the current shape, prepend dims of size 1;
//      b. combine: a `*` in t merges that dim into the next more minor one
//         (bounds multiply: (a of A, b of B) -> a*B + b of A*B) and drops it
//         from both the shape and the tile;
//      c. tile the k most minor dims d by t (k = rank of t):
//         d -> (ceil(d/t), t), element e -> (floor(e/t), e mod t), with the
//         ceil(d/t) dims placed before all the t dims (the shape grows by k);
//   3. the offset is the row-major linear index in the final shape.
//
// Worked example, `f32[3,5]{1,0:T(2,2)}` (figure 1 of the tiled-layout doc):
//
//   permute     [3,5]            element (2,3)
//   tile (2,2)  [2,3,2,2]        element (1,1,0,1)
//   offset      (1*3+1)*2*2 + (0*2+1) = 17; the buffer holds 24 elements:
//
//      0  1 |  4  5 |  8  .
//      2  3 |  6  7 | 10  .
//     ------+-------+------
//     12 13 | 16 17 | 20  .
//      .  . |  .  . |  .  .
//
// The physical element count is the final shape's element count rounded up
// to L(n); slots that no logical element maps to are padding.
//
// @post offset() is injective on the logical elements, every offset is below
//       physicalElements(), and logicalIndex(offset(i)) == i (property-tested
//       in TiledLayoutTest over thousands of generated layouts).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LAYOUT_TILEDLAYOUT_H
#define TESSEL_LAYOUT_TILEDLAYOUT_H

#include "tessel/Layout/Shape.h"
#include "tessel/Support/Expected.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tessel {

/// One application of a tile (step 2 above).
struct TilingStep {
  /// The tile as written, `*` included.
  Tile tile;
  /// Size-1 dims prepended because the tile has more dims than the shape.
  int64_t leadingOnes = 0;
  /// The shape entering the step, after the size-1 dims are prepended.
  std::vector<int64_t> inputDims;
  /// Per input dim: true when a `*` merges it into the next more minor dim.
  std::vector<bool> combineIntoNext;
  /// The shape after combining.
  std::vector<int64_t> combinedDims;
  /// The tile with `*` removed; it covers the last tileSizes.size() dims.
  std::vector<int64_t> tileSizes;
  /// The shape after tiling: untouched dims, tile counts, tile sizes.
  std::vector<int64_t> outputDims;
};

class TiledLayout {
public:
  /// Compiles an array shape; a shape without a layout gets the row-major
  /// default. Fails with a readable message for a tuple, a dynamic shape, an
  /// invalid layout, or a physical size that overflows 64 bits.
  static Expected<TiledLayout> get(const Shape &shape);

  const Shape &shape() const { return theShape; }
  const Layout &layout() const { return theLayout; }
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  const std::vector<int64_t> &logicalDims() const { return dims; }
  /// Logical dims in physical order, major to minor (step 1).
  const std::vector<int64_t> &physicalOrder() const { return order; }
  const std::vector<TilingStep> &steps() const { return tilingSteps; }
  /// The shape after all tiles (step 3 linearizes it).
  const std::vector<int64_t> &finalDims() const { return final; }

  int64_t logicalElements() const { return numLogical; }
  /// Elements of the final shape, before L(n).
  int64_t tiledElements() const { return numTiled; }
  /// Elements the buffer holds: tiledElements() rounded up to L(n).
  int64_t physicalElements() const { return numPhysical; }
  /// Bits one element occupies: E(n), or 8 * byteWidth(type).
  int64_t elementBits() const { return bits; }
  /// ceil(physicalElements() * elementBits() / 8).
  int64_t physicalBytes() const;

  /// The offset, in elements, of a logical index.
  /// @pre index.size() == rank() and 0 <= index[i] < logicalDims()[i].
  int64_t offset(const std::vector<int64_t> &index) const;
  /// Same as offset() for a raw index array of rank() entries.
  int64_t offset(const int64_t *index) const;

  /// The logical index stored at an offset, or nullopt when the slot is
  /// padding (or the offset is out of [0, physicalElements())).
  std::optional<std::vector<int64_t>> logicalIndex(int64_t offset) const;

  /// offset() of an index a user typed: fails, naming the entry, when the
  /// index has the wrong rank or an entry out of range (`tessel layout
  /// index` and the Python binding print the same message).
  Expected<int64_t> checkedOffset(const std::vector<int64_t> &index) const;
  /// logicalIndex() of an offset a user typed: fails when the offset is
  /// outside the buffer; nullopt when the slot is padding.
  Expected<std::optional<std::vector<int64_t>>>
  checkedLogicalIndex(int64_t offset) const;

  /// Extent of a logical dim once the first tile's padding is included: the
  /// dim rounded up to its tile size when the first tile covers it without
  /// combining it, else the dim itself. Coordinates below these extents have
  /// a well-defined slot (see paddedOffset); used to draw padding.
  int64_t paddedExtent(int64_t dim) const;
  /// offset() extended to coordinates below paddedExtent(); the slot is
  /// padding when a coordinate is beyond the logical dim.
  int64_t paddedOffset(const std::vector<int64_t> &index) const;

  /// The coordinates of a logical (or padded) index after tiling step
  /// `level` (0-based), i.e. in steps()[level].outputDims.
  std::vector<int64_t> coordinatesAfterStep(const std::vector<int64_t> &index,
                                            size_t level) const;
  /// Which tile of level `level` holds an element: the linear index of all
  /// but the tile-size coordinates after that step. Elements of one tile
  /// share the id. @pre level < steps().size().
  int64_t tileId(const std::vector<int64_t> &index, size_t level) const;

private:
  TiledLayout() = default;
  /// Applies steps [0, steps) to coordinates already in physical order.
  void applySteps(std::vector<int64_t> &coords, size_t steps) const;

  Shape theShape;
  Layout theLayout;
  std::vector<int64_t> dims;
  std::vector<int64_t> order;
  std::vector<TilingStep> tilingSteps;
  std::vector<int64_t> final;
  int64_t numLogical = 0;
  int64_t numTiled = 0;
  int64_t numPhysical = 0;
  int64_t bits = 0;
};

/// What verifyLayout found wrong, and which part of the layout it concerns
/// (so that a parser can point at the right column).
struct LayoutProblem {
  enum class Part { Layout, MinorToMajor, Tile, L, E, S, M, SplitConfig };
  std::string message;
  Part part = Part::Layout;
  /// Entry of minor_to_major, tile number or split config number.
  int64_t index = 0;
  /// Dim within the tile, for Part::Tile.
  int64_t subIndex = 0;
};

/// Checks a layout against its array shape: a permutation of the dims, valid
/// tiles, L >= 1, E(n) in range for the type, non-negative S and M. Returns
/// the problem, or nullopt when the layout is valid (or absent).
std::optional<LayoutProblem> verifyLayout(const Shape &shape);

} // namespace tessel

#endif // TESSEL_LAYOUT_TILEDLAYOUT_H
