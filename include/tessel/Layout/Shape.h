//===- Shape.h - XLA shapes with (tiled) layouts -----------------*- C++
//-*-===//
//
// A Shape is an element type, logical dims and an optional Layout, printed
// exactly as XLA prints it:
//
//   f32[3,5]{1,0:T(2,2)}
//   ^   ^    ^   ^
//   |   |    |   tiles: the physical dims are tiled by 2x2
//   |   |    minor_to_major: dim 1 is the most minor (row major)
//   |   logical dims
//   element type
//
// The layout's attributes come after ':' in a fixed order, each omitted when
// it has its default: T(..)(..) tiles, L(n) tail padding alignment in
// elements, #(type) index type, *(type) pointer type, E(n) element size in
// bits, S(n) memory space, SC(dim:i,j)(..) split configs, P(shape) physical
// shape, M(n) dynamic-shape metadata prefix bytes. tessel gives meaning to T,
// L, E and S and keeps the others verbatim so that XLA dumps round-trip.
//
// A tile dim of `*` (Tile::kCombine) merges that dim into the next more minor
// one before tiling; see TiledLayout.h for the exact semantics.
//
// Tuples print as `(f32[2]{0}, s32[])`: XLA omits an empty layout on scalars
// and writes `/*index=N*/` before every fifth element of a tuple.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LAYOUT_SHAPE_H
#define TESSEL_LAYOUT_SHAPE_H

#include "tessel/Layout/PrimitiveType.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessel {

class Shape;

/// One level of tiling: tile extents of the most minor physical dims, major
/// to minor. `kCombine` marks a dim to merge into the next more minor one.
struct Tile {
  static constexpr int64_t kCombine = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> dims;

  Tile() = default;
  Tile(std::vector<int64_t> dims) : dims(std::move(dims)) {}
  /// Prints `(8,128)` or `(*,2)`.
  std::string toString() const;
  bool operator==(const Tile &other) const { return dims == other.dims; }
  bool operator!=(const Tile &other) const { return !(*this == other); }
};

/// XLA's split config `(dim:i,j,...)`, kept verbatim.
struct SplitConfig {
  int64_t dimension = 0;
  std::vector<int64_t> splitIndices;
  std::string toString() const;
  bool operator==(const SplitConfig &other) const {
    return dimension == other.dimension && splitIndices == other.splitIndices;
  }
};

/// The physical layout of an array: dim order, tiles and the other XLA
/// attributes. A value type; `toString()` is XLA's form, `{1,0:T(2,2)}`.
class Layout {
public:
  /// Physical order of the logical dims, most minor first.
  std::vector<int64_t> minorToMajor;
  /// Tiles, applied one after the other (T(a)(b)...).
  std::vector<Tile> tiles;
  /// L(n): the element count is rounded up to a multiple of n.
  int64_t tailPaddingAlignment = 1;
  /// #(type), kept verbatim; Invalid when absent.
  PrimitiveType indexType = PrimitiveType::Invalid;
  /// *(type), kept verbatim; Invalid when absent.
  PrimitiveType pointerType = PrimitiveType::Invalid;
  /// E(n): bits per element; 0 means the type's natural byte width.
  int64_t elementSizeInBits = 0;
  /// S(n): memory space.
  int64_t memorySpace = 0;
  /// SC(..): split configs, kept verbatim.
  std::vector<SplitConfig> splitConfigs;
  /// P(shape): physical shape, kept verbatim.
  std::shared_ptr<const Shape> physicalShape;
  /// M(n): dynamic-shape metadata prefix bytes, kept verbatim.
  int64_t dynamicShapeMetadataPrefixBytes = 0;

  /// The row-major layout of a rank-n array: {n-1,...,1,0}.
  static Layout rowMajor(int64_t rank);

  /// XLA's printed form, e.g. `{1,0:T(8,128)(2,1)E(4)}`.
  std::string toString() const;
  /// True when nothing but minor_to_major is set.
  bool hasOnlyMinorToMajor() const;
  bool operator==(const Layout &other) const;
  bool operator!=(const Layout &other) const { return !(*this == other); }
};

/// An array shape (element type, dims, optional layout) or a tuple of shapes.
class Shape {
public:
  /// Stored in `dims` for an unbounded dynamic dim, printed `?`.
  static constexpr int64_t kUnboundedSize = std::numeric_limits<int64_t>::min();

  PrimitiveType elementType = PrimitiveType::Invalid;
  std::vector<int64_t> dims;
  /// Per dim: true for a dynamic dim (`<=N`, or `?` when unbounded). Empty
  /// when no dim is dynamic.
  std::vector<bool> dynamicDims;
  std::optional<Layout> layout;
  /// Element shapes when this is a tuple.
  std::vector<Shape> tupleShapes;
  bool tuple = false;

  Shape() = default;
  Shape(PrimitiveType type, std::vector<int64_t> dims,
        std::optional<Layout> layout = std::nullopt)
      : elementType(type), dims(std::move(dims)), layout(std::move(layout)) {}
  static Shape makeTuple(std::vector<Shape> elements);

  bool isTuple() const { return tuple; }
  bool isArray() const { return !tuple && isArrayType(elementType); }
  bool isToken() const { return !tuple && elementType == PrimitiveType::Token; }
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  bool isDynamicDim(int64_t dim) const {
    return !dynamicDims.empty() && dynamicDims[dim];
  }
  /// Product of the dims (the number of logical elements), or nullopt on
  /// overflow or for a dynamic shape.
  std::optional<int64_t> elementCount() const;
  /// The layout, or the row-major default when the shape has none.
  Layout layoutOrDefault() const;

  /// XLA's printed form with the layout: `f32[3,5]{1,0:T(2,2)}`.
  std::string toString() const;
  /// Without the layout: `f32[3,5]`.
  std::string toStringWithoutLayout() const;
  bool operator==(const Shape &other) const;
  bool operator!=(const Shape &other) const { return !(*this == other); }
};

/// Hash of a shape's printed form (for unordered containers).
struct ShapeHash {
  size_t operator()(const Shape &shape) const;
};

} // namespace tessel

#endif // TESSEL_LAYOUT_SHAPE_H
