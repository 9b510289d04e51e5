//===- LayoutSizes.h - Bytes, padding and cheaper layouts -------*- C++ -*-===//
//
// How big a buffer is, how much of it is padding, which dim causes it, and a
// layout that wastes less:
//
//   f32[1000,3]{1,0:T(8,128)}
//     physical  128000 elements, 512000 bytes (1000 x 128 after tiling)
//     data        3000 elements,  12000 bytes; utilization 2.3%
//     padding: dim 1 (size 3) is padded to 128 by the tile's 128
//     cheaper:  f32[1000,3]{0,1:T(4,128)} takes 16384 bytes (dim 0 becomes
//               the minor dim: a transpose of the data)
//
// Exact sizes follow every tile (see TiledLayout.h). XLA's own size function
// (ShapeUtil::ArraySize) looks only at the first tile and assumes later tiles
// add no padding; `xlaBytes` reports that figure and `xlaNote` says why it
// differs when it does.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LAYOUT_LAYOUTSIZES_H
#define TESSEL_LAYOUT_LAYOUTSIZES_H

#include "tessel/Layout/TiledLayout.h"

#include <optional>
#include <string>
#include <vector>

namespace tessel {

/// Padding the first tile adds to one dim of the combined shape it tiles.
struct DimPadding {
  /// The logical dims this physical dim holds (several when `*` combined
  /// them; empty for a size-1 dim added because the tile has more dims
  /// than the shape).
  std::vector<int64_t> logicalDims;
  int64_t size = 0;
  int64_t paddedSize = 0;
  /// The tile size that rounds it up.
  int64_t tileSize = 1;
};

struct LayoutSizes {
  int64_t logicalElements = 0;
  int64_t physicalElements = 0;
  int64_t elementBits = 0;
  int64_t physicalBytes = 0;
  /// Bytes the logical elements need: ceil(logical * bits / 8).
  int64_t dataBytes = 0;
  int64_t paddingBytes = 0;
  /// dataBytes / physicalBytes (1 for an empty array).
  double utilization = 1;
  /// Padding slots the first tile adds, per dim it tiles.
  std::vector<DimPadding> firstTilePadding;
  /// Slots added by the second and later tiles.
  int64_t laterTilePaddingElements = 0;
  /// Slots added by L(n).
  int64_t tailPaddingElements = 0;
  /// Index into firstTilePadding of the dim with the largest
  /// paddedSize / size, when the first tile pads anything.
  std::optional<size_t> worstDim;
  /// XLA's figure (first tile only); nullopt when XLA cannot compute it.
  std::optional<int64_t> xlaBytes;
  /// Why xlaBytes differs from physicalBytes or is missing; empty when they
  /// agree.
  std::string xlaNote;
};

LayoutSizes computeSizes(const TiledLayout &layout);

/// XLA's ShapeUtil::ArraySize: the first tile rounds up the most minor dims
/// (size-1 dims stand in for missing ones), later tiles are ignored, then
/// L(n) and E(n) apply. nullopt when the first tile combines dims, which
/// XLA's function does not handle.
std::optional<int64_t> xlaArrayBytes(const TiledLayout &layout);

/// A one-line reason for the worst padding, e.g. "dim 1 (size 3) is padded
/// to 128 by the tile's 128". Empty when nothing is padded.
std::string describeWorstPadding(const LayoutSizes &sizes);

struct CheaperLayout {
  Shape shape;
  int64_t physicalBytes = 0;
  /// What changes, e.g. "dim 0 becomes the most minor dim (a transpose of
  /// the data) and the tile becomes (4,128)".
  std::string why;
};

/// A layout of the same logical shape and element type that takes at most
/// 90% of the bytes: other dim orders with the same tiles, and the tiles a
/// TPU compiler picks for each order (TpuLayout.h). nullopt when none is
/// that much cheaper.
std::optional<CheaperLayout> suggestCheaperLayout(const TiledLayout &layout);

/// A byte count for people: "500000 bytes (488.3 KiB)", "12 bytes".
std::string describeByteCount(int64_t bytes);
/// A fraction as a percentage with one decimal: 0.977 -> "97.7%".
std::string describePercent(double fraction);

/// The report of `tessel layout explain` (also the Python binding's
/// Layout.explain()): element type, dim order, tiles, physical shape, sizes,
/// padding and why, XLA's figure, a cheaper layout; one "  key   value" row
/// per line, after the canonical layout.
std::string explainLayout(const TiledLayout &layout);

} // namespace tessel

#endif // TESSEL_LAYOUT_LAYOUTSIZES_H
