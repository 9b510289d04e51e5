//===- LayoutMap.cpp - Tiled layouts as indexing maps ---------------------===//
#include "tessel/Indexing/LayoutMap.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"

using mlir::AffineExpr;

namespace tessel {

IndexingMap getLogicalToPhysicalMap(const TiledLayout &layout,
                                    mlir::MLIRContext *context) {
  if (layout.logicalElements() == 0)
    return IndexingMap::knownEmpty(context, layout.rank(), 1);
  const std::vector<int64_t> &order = layout.physicalOrder();
  std::vector<AffineExpr> coords;
  for (int64_t dim : order)
    coords.push_back(mlir::getAffineDimExpr(dim, context));
  AffineExpr zero = mlir::getAffineConstantExpr(0, context);
  for (const TilingStep &step : layout.steps()) {
    coords.insert(coords.begin(), step.leadingOnes, zero);
    // Combine: a `*` dim folds into the next more minor one.
    std::vector<AffineExpr> combined;
    AffineExpr carry;
    for (size_t j = 0; j < coords.size(); ++j) {
      AffineExpr value = coords[j];
      if (carry)
        value = carry * step.inputDims[j] + value;
      carry = AffineExpr();
      if (step.combineIntoNext[j]) {
        carry = value;
        continue;
      }
      combined.push_back(value);
    }
    // Tile the most minor dims: tile indices, then offsets in the tile.
    size_t tiled = step.tileSizes.size();
    size_t prefix = combined.size() - tiled;
    coords.assign(combined.begin(), combined.begin() + prefix);
    for (size_t i = 0; i < tiled; ++i)
      coords.push_back(combined[prefix + i].floorDiv(step.tileSizes[i]));
    for (size_t i = 0; i < tiled; ++i)
      coords.push_back(combined[prefix + i] % step.tileSizes[i]);
  }
  const std::vector<int64_t> &finalDims = layout.finalDims();
  AffineExpr offset = zero;
  for (size_t i = 0; i < coords.size(); ++i)
    offset = offset * finalDims[i] + coords[i];
  IndexingMap map = IndexingMap::fromTensorSizes(
      mlir::AffineMap::get(layout.rank(), 0, {offset}, context),
      layout.logicalDims(), {});
  map.simplify();
  return map;
}

IndexingMap getPhysicalToLogicalMap(const TiledLayout &layout,
                                    mlir::MLIRContext *context) {
  if (layout.logicalElements() == 0)
    return IndexingMap::knownEmpty(context, 1, layout.rank());
  AffineExpr offset = mlir::getAffineDimExpr(0, context);
  std::vector<IndexingConstraint> constraints;
  auto require = [&](AffineExpr expr, int64_t size) {
    constraints.push_back({expr, Interval(0, size - 1)});
  };
  // Digits of the offset in the final shape; the most major one is bounded
  // by the constraint on the offset itself.
  const std::vector<int64_t> &finalDims = layout.finalDims();
  std::vector<AffineExpr> coords(finalDims.size());
  int64_t stride = 1;
  for (size_t i = finalDims.size(); i-- > 0;) {
    AffineExpr digit = offset.floorDiv(stride);
    coords[i] = i == 0 ? digit : digit % finalDims[i];
    stride *= finalDims[i];
  }
  if (layout.tiledElements() < layout.physicalElements())
    require(offset, layout.tiledElements());

  const std::vector<TilingStep> &steps = layout.steps();
  for (size_t s = steps.size(); s-- > 0;) {
    const TilingStep &step = steps[s];
    size_t tiled = step.tileSizes.size();
    size_t combinedRank = step.combinedDims.size();
    size_t prefix = combinedRank - tiled;
    // Untile: tile index * tile size + offset in the tile, inside the dim.
    std::vector<AffineExpr> combined(coords.begin(), coords.begin() + prefix);
    for (size_t i = 0; i < tiled; ++i) {
      AffineExpr value =
          coords[prefix + i] * step.tileSizes[i] + coords[combinedRank + i];
      require(value, step.combinedDims[prefix + i]);
      combined.push_back(value);
    }
    // Uncombine: split each combined dim into its run of input dims.
    std::vector<AffineExpr> input(step.inputDims.size());
    size_t c = combinedRank;
    for (size_t j = step.inputDims.size(); j-- > 0;) {
      if (!step.combineIntoNext[j])
        --c;
      input[j] = combined[c] % step.inputDims[j];
      combined[c] = combined[c].floorDiv(step.inputDims[j]);
    }
    for (int64_t i = 0; i < step.leadingOnes; ++i)
      require(input[i], 1);
    coords.assign(input.begin() + step.leadingOnes, input.end());
  }
  const std::vector<int64_t> &order = layout.physicalOrder();
  std::vector<AffineExpr> index(layout.rank());
  for (size_t j = 0; j < order.size(); ++j) {
    index[order[j]] = coords[j];
    require(coords[j], layout.logicalDims()[order[j]]);
  }
  IndexingMap map(mlir::AffineMap::get(1, 0, index, context),
                  {IndexingVariable(0, layout.physicalElements() - 1)}, {}, {},
                  constraints);
  map.simplify();
  return map;
}

} // namespace tessel
