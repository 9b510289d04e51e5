//===- TiledLayoutTest.cpp - Offsets, inverse and their properties --------===//
#include "tessel/Layout/TiledLayout.h"
#include "tessel/Layout/ShapeParser.h"

#include "RandomLayouts.h"

#include <gtest/gtest.h>

using namespace tessel;
using tessel::testing::forEachIndex;

namespace {

TiledLayout compile(const std::string &text) {
  Expected<Shape> shape = parseShape(text);
  EXPECT_TRUE(shape) << shape.error().message;
  Expected<TiledLayout> layout = TiledLayout::get(*shape);
  EXPECT_TRUE(layout) << layout.error().message;
  return *layout;
}

/// Offsets of a 2-D layout, row by row.
std::vector<std::vector<int64_t>> grid(const TiledLayout &layout) {
  std::vector<std::vector<int64_t>> rows(layout.logicalDims()[0]);
  for (int64_t i = 0; i < layout.logicalDims()[0]; ++i)
    for (int64_t j = 0; j < layout.logicalDims()[1]; ++j)
      rows[i].push_back(layout.offset({i, j}));
  return rows;
}

TEST(TiledLayout, FigureOneOfTheDocument) {
  TiledLayout layout = compile("f32[3,5]{1,0:T(2,2)}");
  EXPECT_EQ(layout.offset({2, 3}), 17);
  EXPECT_EQ(grid(layout),
            (std::vector<std::vector<int64_t>>{
                {0, 1, 4, 5, 8}, {2, 3, 6, 7, 10}, {12, 13, 16, 17, 20}}));
  EXPECT_EQ(layout.physicalElements(), 24);
  EXPECT_EQ(layout.finalDims(), (std::vector<int64_t>{2, 3, 2, 2}));
  EXPECT_EQ(layout.logicalIndex(17), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(layout.logicalIndex(9), std::nullopt);  // right of (1,4)
  EXPECT_EQ(layout.logicalIndex(14), std::nullopt); // below (2,0)
}

TEST(TiledLayout, FigureTwoOfTheDocument) {
  TiledLayout layout = compile("bf16[4,8]{1,0:T(2,4)(2,1)}");
  EXPECT_EQ(grid(layout), (std::vector<std::vector<int64_t>>{
                              {0, 2, 4, 6, 8, 10, 12, 14},
                              {1, 3, 5, 7, 9, 11, 13, 15},
                              {16, 18, 20, 22, 24, 26, 28, 30},
                              {17, 19, 21, 23, 25, 27, 29, 31}}));
  // The second tile pairs whole tiles: element (6,5) lands at 51.
  EXPECT_EQ(compile("bf16[8,8]{1,0:T(2,4)(2,1,1,1)}").offset({6, 5}), 51);
}

TEST(TiledLayout, CombinedDimsAreTheDocumentsReshape) {
  TiledLayout combined = compile("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}");
  TiledLayout flat = compile("f32[112,110]{1,0:T(2,3)}");
  EXPECT_EQ(combined.physicalElements(), flat.physicalElements());
  forEachIndex(combined.logicalDims(), [&](const std::vector<int64_t> &i) {
    int64_t row = (i[0] * 7 + i[1]) * 8 + i[2], col = i[3] * 10 + i[4];
    ASSERT_EQ(combined.offset(i), flat.offset({row, col}));
  });
}

TEST(TiledLayout, TilesOfFewerAndMoreDimsThanTheShape) {
  // (2,2) tiles the two minor dims of each of the 3 major slices.
  TiledLayout fewer = compile("f32[3,5,7]{2,1,0:T(2,2)}");
  TiledLayout slice = compile("f32[5,7]{1,0:T(2,2)}");
  EXPECT_EQ(fewer.physicalElements(), 3 * slice.physicalElements());
  forEachIndex(fewer.logicalDims(), [&](const std::vector<int64_t> &i) {
    ASSERT_EQ(fewer.offset(i),
              i[0] * slice.physicalElements() + slice.offset({i[1], i[2]}));
  });
  // A rank-2 tile on a rank-1 shape: leading size-1 dim.
  TiledLayout more = compile("f32[5]{0:T(8,128)}");
  EXPECT_EQ(more.physicalElements(), 8 * 128);
  for (int64_t i = 0; i < 5; ++i)
    EXPECT_EQ(more.offset({i}), i);
  TiledLayout scalar = compile("f32[]{:T(128)}");
  EXPECT_EQ(scalar.physicalElements(), 128);
  EXPECT_EQ(scalar.offset(std::vector<int64_t>{}), 0);
  EXPECT_EQ(scalar.logicalIndex(0), std::vector<int64_t>{});
  EXPECT_EQ(scalar.logicalIndex(1), std::nullopt);
}

TEST(TiledLayout, DimOrderAndTailPadding) {
  TiledLayout colMajor = compile("f32[3,5]{0,1}");
  EXPECT_EQ(colMajor.offset({2, 1}), 1 * 3 + 2);
  EXPECT_EQ(colMajor.physicalOrder(), (std::vector<int64_t>{1, 0}));
  TiledLayout aligned = compile("f32[5]{0:L(8)}");
  EXPECT_EQ(aligned.tiledElements(), 5);
  EXPECT_EQ(aligned.physicalElements(), 8);
  EXPECT_EQ(aligned.logicalIndex(6), std::nullopt);
  EXPECT_EQ(compile("s4[5]{0:E(4)}").physicalBytes(), 3);
  EXPECT_EQ(compile("s4[5]{0}").physicalBytes(), 5);
  EXPECT_EQ(compile("pred[32,128]{1,0:T(32,128)(32,1)E(1)}").physicalBytes(),
            512);
}

TEST(TiledLayout, RejectsWhatItCannotLayOut) {
  Expected<Shape> dynamic = parseShape("f32[<=4]{0}");
  ASSERT_TRUE(dynamic);
  EXPECT_EQ(TiledLayout::get(*dynamic).error().message,
            "dim 0 of f32[<=4]{0} is dynamic; offsets need static sizes");
  Expected<Shape> tuple = parseShape("(f32[2])");
  ASSERT_TRUE(tuple);
  EXPECT_EQ(TiledLayout::get(*tuple).error().message,
            "expected an array shape, got the tuple (f32[2])");
  Shape built(PrimitiveType::F32, {3, 5}, Layout::rowMajor(2));
  built.layout->tiles.push_back(Tile({2, Tile::kCombine}));
  EXPECT_EQ(TiledLayout::get(built).error().message,
            "'*' cannot be the last dim of tile (2,*): the most minor dim has "
            "no more minor dim to combine into");
}

// The offset map is a bijection from the logical elements onto the
// non-padding slots, all below the physical size, and logicalIndex undoes
// it.
TEST(TiledLayout, OffsetsAreABijectionOntoNonPaddingSlots) {
  tessel::testing::RandomLayouts random(2026);
  int combined = 0, leadingOnes = 0, repeated = 0, subByte = 0, tail = 0;
  for (int n = 0; n < 3000; ++n) {
    Shape shape = random.next();
    SCOPED_TRACE(shape.toString());
    Expected<TiledLayout> compiled = TiledLayout::get(shape);
    ASSERT_TRUE(compiled);
    const TiledLayout &layout = *compiled;
    for (const TilingStep &step : layout.steps()) {
      combined += step.combinedDims.size() != step.inputDims.size();
      leadingOnes += step.leadingOnes > 0;
    }
    repeated += layout.steps().size() >= 2;
    subByte += layout.elementBits() < 8;
    tail += layout.physicalElements() != layout.tiledElements();
    std::vector<char> hit(layout.physicalElements(), 0);
    int64_t count = 0;
    forEachIndex(layout.logicalDims(), [&](const std::vector<int64_t> &i) {
      int64_t offset = layout.offset(i);
      ASSERT_GE(offset, 0);
      ASSERT_LT(offset, layout.physicalElements());
      ASSERT_FALSE(hit[offset]) << "two elements at offset " << offset;
      hit[offset] = 1;
      ++count;
      ASSERT_EQ(layout.logicalIndex(offset), i);
    });
    ASSERT_EQ(count, layout.logicalElements());
    for (int64_t offset = 0; offset < layout.physicalElements(); ++offset)
      ASSERT_EQ(layout.logicalIndex(offset).has_value(), hit[offset] != 0)
          << "offset " << offset;
    ASSERT_EQ(layout.logicalIndex(layout.physicalElements()), std::nullopt);
    ASSERT_EQ(layout.logicalIndex(-1), std::nullopt);
  }
  // The generator covers every feature many times.
  EXPECT_GT(combined, 100);
  EXPECT_GT(leadingOnes, 100);
  EXPECT_GT(repeated, 300);
  EXPECT_GT(subByte, 100);
  EXPECT_GT(tail, 100);
}

// Coordinates inside the first tile's padding box have slots of their own,
// distinct from every element's.
TEST(TiledLayout, PaddedOffsetsFillThePaddingBox) {
  tessel::testing::RandomLayouts random(7);
  for (int n = 0; n < 500; ++n) {
    Shape shape = random.next();
    SCOPED_TRACE(shape.toString());
    TiledLayout layout = *TiledLayout::get(shape);
    std::vector<int64_t> box;
    for (int64_t d = 0; d < layout.rank(); ++d)
      box.push_back(layout.paddedExtent(d));
    std::vector<char> hit(layout.physicalElements(), 0);
    forEachIndex(box, [&](const std::vector<int64_t> &i) {
      int64_t offset = layout.paddedOffset(i);
      ASSERT_GE(offset, 0);
      ASSERT_LT(offset, layout.physicalElements());
      ASSERT_FALSE(hit[offset]);
      hit[offset] = 1;
      bool inside = true;
      for (int64_t d = 0; d < layout.rank(); ++d)
        inside &= i[d] < layout.logicalDims()[d];
      ASSERT_EQ(layout.logicalIndex(offset).has_value(), inside);
    });
  }
}

TEST(TiledLayout, TileIdsGroupTheElementsOfATile) {
  TiledLayout layout = compile("bf16[4,8]{1,0:T(2,4)(2,1)}");
  // First-level tiles are 2x4 blocks, numbered row major.
  EXPECT_EQ(layout.tileId({0, 0}, 0), layout.tileId({1, 3}, 0));
  EXPECT_NE(layout.tileId({0, 3}, 0), layout.tileId({0, 4}, 0));
  EXPECT_EQ(layout.tileId({2, 4}, 0), 3);
  // Second-level tiles are the 2x1 pairs inside.
  EXPECT_EQ(layout.tileId({0, 1}, 1), layout.tileId({1, 1}, 1));
  EXPECT_NE(layout.tileId({0, 1}, 1), layout.tileId({0, 2}, 1));
}

} // namespace
