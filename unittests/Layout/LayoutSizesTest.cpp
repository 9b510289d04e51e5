//===- LayoutSizesTest.cpp - Sizes, padding, XLA's figure, advice ---------===//
#include "tessel/Layout/LayoutSizes.h"
#include "tessel/Layout/ShapeParser.h"

#include "RandomLayouts.h"

#include <gtest/gtest.h>

using namespace tessel;

namespace {

TiledLayout compile(const std::string &text) {
  Expected<Shape> shape = parseShape(text);
  EXPECT_TRUE(shape) << shape.error().message;
  return *TiledLayout::get(*shape);
}

TEST(LayoutSizes, NarrowMinorDimIsMostlyPadding) {
  LayoutSizes sizes = computeSizes(compile("f32[1000,3]{1,0:T(8,128)}"));
  EXPECT_EQ(sizes.physicalElements, 1000 * 128);
  EXPECT_EQ(sizes.physicalBytes, 512000);
  EXPECT_EQ(sizes.dataBytes, 12000);
  EXPECT_EQ(sizes.paddingBytes, 500000);
  EXPECT_NEAR(sizes.utilization, 12000.0 / 512000.0, 1e-12);
  ASSERT_TRUE(sizes.worstDim);
  EXPECT_EQ(describeWorstPadding(sizes),
            "dim 1 (size 3) is padded to 128 by the tile's 128");
  EXPECT_EQ(sizes.xlaBytes, 512000);
  EXPECT_EQ(sizes.xlaNote, "");
}

TEST(LayoutSizes, SuggestsTheTransposedCompactTiling) {
  std::optional<CheaperLayout> cheaper =
      suggestCheaperLayout(compile("f32[1000,3]{1,0:T(8,128)}"));
  ASSERT_TRUE(cheaper);
  EXPECT_EQ(cheaper->shape.toString(), "f32[1000,3]{0,1:T(4,128)}");
  EXPECT_EQ(cheaper->physicalBytes, 4 * 1024 * 4);
  EXPECT_EQ(cheaper->why,
            "dim 0 becomes the most minor dim (dim order {0,1}: a transpose "
            "of the data) and the tiles become (4,128)");
  // Nothing is much cheaper than a layout without padding.
  EXPECT_FALSE(suggestCheaperLayout(compile("f32[16,256]{1,0:T(8,128)}")));
  // Prefer keeping the dim order when a tile change does as well.
  std::optional<CheaperLayout> smallTile =
      suggestCheaperLayout(compile("f32[2,1024]{1,0:T(8,128)}"));
  ASSERT_TRUE(smallTile);
  EXPECT_EQ(smallTile->shape.toString(), "f32[2,1024]{1,0:T(2,128)}");
}

TEST(LayoutSizes, XlaCountsOnlyTheFirstTile) {
  // (3,1) does not divide the 8 rows of the first tile: 3 groups of 3 rows.
  LayoutSizes sizes = computeSizes(compile("f32[8,128]{1,0:T(8,128)(3,1)}"));
  EXPECT_EQ(sizes.physicalElements, 9 * 128);
  EXPECT_EQ(sizes.laterTilePaddingElements, 128);
  EXPECT_EQ(sizes.xlaBytes, 8 * 128 * 4);
  EXPECT_EQ(sizes.xlaNote, "XLA counts only the first tile's padding; the "
                           "later tiles add 128 padding elements");
  // The TPU formats agree with XLA.
  for (const char *text :
       {"bf16[3,300]{1,0:T(8,128)(2,1)}", "s8[33,129]{1,0:T(8,128)(4,1)}",
        "pred[40,200]{1,0:T(32,128)(32,1)E(1)}", "f32[5]{0:T(8,128)}",
        "f32[7,9]{1,0:T(4,128)L(1024)}"}) {
    LayoutSizes s = computeSizes(compile(text));
    EXPECT_EQ(s.xlaBytes, s.physicalBytes) << text;
  }
  LayoutSizes combined =
      computeSizes(compile("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}"));
  EXPECT_EQ(combined.xlaBytes, std::nullopt);
  ASSERT_EQ(combined.firstTilePadding.size(), 2u);
  EXPECT_EQ(combined.firstTilePadding[0].logicalDims,
            (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(combined.firstTilePadding[1].size, 110);
  EXPECT_EQ(combined.firstTilePadding[1].paddedSize, 111);
  EXPECT_EQ(describeWorstPadding(combined),
            "dims 3,4 combined (size 110) is padded to 111 by the tile's 3");
}

TEST(LayoutSizes, SubByteAndTailPadding) {
  LayoutSizes s4 = computeSizes(compile("s4[16,256]{1,0:T(8,128)(8,1)E(4)}"));
  EXPECT_EQ(s4.physicalBytes, 2048);
  EXPECT_EQ(s4.dataBytes, 2048);
  LayoutSizes tail = computeSizes(compile("s4[3]{0:L(8)E(4)}"));
  EXPECT_EQ(tail.tailPaddingElements, 5);
  EXPECT_EQ(tail.physicalBytes, 4);
  EXPECT_EQ(tail.dataBytes, 2);
}

// Sizes agree with counting the slots the offset map leaves empty.
TEST(LayoutSizes, AgreeWithCountingPaddingSlots) {
  tessel::testing::RandomLayouts random(99);
  for (int n = 0; n < 1000; ++n) {
    Shape shape = random.next();
    SCOPED_TRACE(shape.toString());
    TiledLayout layout = *TiledLayout::get(shape);
    LayoutSizes sizes = computeSizes(layout);
    int64_t padding = 0;
    for (int64_t offset = 0; offset < layout.physicalElements(); ++offset)
      padding += !layout.logicalIndex(offset).has_value();
    ASSERT_EQ(sizes.physicalElements - sizes.logicalElements, padding);
    ASSERT_EQ(sizes.physicalBytes,
              (sizes.physicalElements * sizes.elementBits + 7) / 8);
    ASSERT_EQ(sizes.paddingBytes, sizes.physicalBytes - sizes.dataBytes);
    int64_t accounted =
        sizes.tailPaddingElements + sizes.laterTilePaddingElements;
    ASSERT_LE(accounted, padding);
  }
}

} // namespace
