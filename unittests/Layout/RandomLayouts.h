//===- RandomLayouts.h - Generated shapes and layouts for tests -*- C++ -*-===//
//
// Random array shapes with random layouts that the layout core accepts:
// ranks 0-5, sizes such as 1, 3, 17 and 129, any dim order, one to three
// tiles (some with '*', some with more dims than the shape), sub-byte
// element types with E(n), and L(n). Physical sizes stay small enough to
// enumerate every slot.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_UNITTESTS_LAYOUT_RANDOMLAYOUTS_H
#define TESSEL_UNITTESTS_LAYOUT_RANDOMLAYOUTS_H

#include "tessel/Layout/TiledLayout.h"

#include <algorithm>
#include <random>

namespace tessel::testing {

/// One of `values`, uniformly.
inline int64_t pickOne(std::mt19937 &rng,
                       std::initializer_list<int64_t> values) {
  std::uniform_int_distribution<size_t> d(0, values.size() - 1);
  return *(values.begin() + d(rng));
}

/// True `percent` times in a hundred.
inline bool withChance(std::mt19937 &rng, int percent) {
  return std::uniform_int_distribution<int>(0, 99)(rng) < percent;
}

/// A tile of one to four dims of sizes 1-16, some (never the last) `*`.
inline Tile randomTile(std::mt19937 &rng) {
  int64_t tileRank = pickOne(rng, {1, 1, 2, 2, 3, 4});
  Tile tile;
  for (int64_t i = 0; i < tileRank; ++i)
    tile.dims.push_back(i + 1 < tileRank && withChance(rng, 15)
                            ? Tile::kCombine
                            : pickOne(rng, {1, 2, 3, 4, 8, 16}));
  return tile;
}

class RandomLayouts {
public:
  explicit RandomLayouts(uint32_t seed) : rng(seed) {}

  /// A random shape with a valid layout of at most `maxElements` slots.
  Shape next(int64_t maxElements = 4096) {
    for (;;) {
      Shape shape = candidate();
      Expected<TiledLayout> layout = TiledLayout::get(shape);
      if (layout && layout->physicalElements() <= maxElements)
        return shape;
    }
  }

private:
  int64_t pick(std::initializer_list<int64_t> values) {
    return pickOne(rng, values);
  }
  bool chance(int percent) { return withChance(rng, percent); }

  Shape candidate() {
    Shape shape;
    static const PrimitiveType types[] = {
        PrimitiveType::F32, PrimitiveType::BF16, PrimitiveType::S8,
        PrimitiveType::S4,  PrimitiveType::Pred, PrimitiveType::F64,
        PrimitiveType::U2,  PrimitiveType::C128};
    shape.elementType = types[pick({0, 1, 2, 3, 4, 5, 6, 7})];
    int64_t rank = pick({0, 1, 1, 2, 2, 2, 3, 3, 4, 5});
    for (int64_t i = 0; i < rank; ++i)
      shape.dims.push_back(rank >= 4 ? pick({1, 2, 3, 4, 5})
                                     : pick({1, 2, 3, 5, 7, 8, 17, 129}));
    Layout layout;
    for (int64_t i = 0; i < rank; ++i)
      layout.minorToMajor.push_back(i);
    std::shuffle(layout.minorToMajor.begin(), layout.minorToMajor.end(), rng);
    int64_t tiles = pick({0, 1, 1, 2, 2, 3});
    for (int64_t t = 0; t < tiles; ++t)
      layout.tiles.push_back(randomTile(rng));
    if (chance(20))
      layout.tailPaddingAlignment = pick({2, 3, 8, 64});
    int bits = bitWidth(shape.elementType);
    if (bits < 8 && chance(70))
      layout.elementSizeInBits = bits;
    if (chance(10))
      layout.memorySpace = 1;
    shape.layout = layout;
    return shape;
  }

  std::mt19937 rng;
};

/// Every logical index of `dims` in row-major order.
template <typename F>
void forEachIndex(const std::vector<int64_t> &dims, F &&f) {
  for (int64_t d : dims)
    if (d == 0)
      return;
  std::vector<int64_t> index(dims.size(), 0);
  for (;;) {
    f(index);
    int64_t i = static_cast<int64_t>(dims.size()) - 1;
    for (; i >= 0; --i) {
      if (++index[i] < dims[i])
        break;
      index[i] = 0;
    }
    if (i < 0)
      return;
  }
}

} // namespace tessel::testing

#endif // TESSEL_UNITTESTS_LAYOUT_RANDOMLAYOUTS_H
