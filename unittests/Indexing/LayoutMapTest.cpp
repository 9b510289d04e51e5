//===- LayoutMapTest.cpp - Layout maps agree with TiledLayout -------------===//
#include "tessel/Indexing/LayoutMap.h"
#include "tessel/Indexing/BruteForce.h"
#include "tessel/Layout/ShapeParser.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

using namespace tessel;

namespace {

class LayoutMapTest : public ::testing::Test {
protected:
  TiledLayout layoutOf(const std::string &text) {
    Expected<Shape> shape = parseShape(text);
    EXPECT_TRUE(shape.ok()) << text;
    Expected<TiledLayout> layout = TiledLayout::get(*shape);
    EXPECT_TRUE(layout.ok()) << text << ": " << layout.error().message;
    return *layout;
  }

  /// Checks both maps against offset() and logicalIndex() at every index
  /// and every offset; returns a description of the first disagreement.
  std::string disagreement(const TiledLayout &layout) {
    IndexingMap forward = getLogicalToPhysicalMap(layout, &context);
    IndexingMap backward = getPhysicalToLogicalMap(layout, &context);
    if (std::optional<std::string> problem = forward.verify())
      return "forward map: " + *problem;
    if (std::optional<std::string> problem = backward.verify())
      return "backward map: " + *problem;
    std::string where;
    llvm::SmallVector<Interval> bounds;
    for (int64_t d : layout.logicalDims())
      bounds.push_back(Interval(0, d - 1));
    forEachBoxPoint(bounds, 1 << 22, [&](llvm::ArrayRef<int64_t> index) {
      if (!where.empty())
        return;
      std::vector<int64_t> i(index.begin(), index.end());
      std::optional<llvm::SmallVector<int64_t>> offset =
          forward.evaluate(index, {});
      if (!offset || (*offset)[0] != layout.offset(i))
        where = "forward " + forward.toString() + " at an index";
    });
    for (int64_t o = 0; o < layout.physicalElements() && where.empty(); ++o) {
      std::optional<std::vector<int64_t>> expected = layout.logicalIndex(o);
      std::optional<llvm::SmallVector<int64_t>> actual =
          backward.evaluate({o}, {});
      bool same = expected.has_value() == actual.has_value() &&
                  (!expected || std::equal(expected->begin(), expected->end(),
                                           actual->begin(), actual->end()));
      if (!same)
        where = "backward " + backward.toString() + " at offset " +
                std::to_string(o);
    }
    return where;
  }

  mlir::MLIRContext context;
};

TEST_F(LayoutMapTest, Figure1) {
  TiledLayout layout = layoutOf("f32[3,5]{1,0:T(2,2)}");
  EXPECT_EQ(getLogicalToPhysicalMap(layout, &context).toString(),
            "(d0, d1) -> ((d0 floordiv 2) * 12 + (d1 floordiv 2) * 4 + (d0 "
            "mod 2) * 2 + d1 mod 2), domain: d0 in [0, 2], d1 in [0, 4]");
  EXPECT_EQ(getPhysicalToLogicalMap(layout, &context).toString(),
            "(d0) -> ((d0 floordiv 12) * 2 + (d0 floordiv 2) mod 2, ((d0 "
            "floordiv 4) mod 3) * 2 + d0 mod 2), domain: d0 in [0, 23], ((d0 "
            "floordiv 4) mod 3) * 2 + d0 mod 2 in [0, 4], (d0 floordiv 12) * "
            "2 + (d0 floordiv 2) mod 2 in [0, 2]");
  EXPECT_EQ(disagreement(layout), "");
}

TEST_F(LayoutMapTest, RowMajorAndTransposedLayoutsAreAffine) {
  EXPECT_EQ(getLogicalToPhysicalMap(layoutOf("f32[3,5]"), &context).toString(),
            "(d0, d1) -> (d0 * 5 + d1), domain: d0 in [0, 2], d1 in [0, 4]");
  EXPECT_EQ(
      getLogicalToPhysicalMap(layoutOf("f32[3,5]{0,1}"), &context).toString(),
      "(d0, d1) -> (d1 * 3 + d0), domain: d0 in [0, 2], d1 in [0, 4]");
  EXPECT_EQ(
      getPhysicalToLogicalMap(layoutOf("f32[3,5]{0,1}"), &context).toString(),
      "(d0) -> (d0 mod 3, d0 floordiv 3), domain: d0 in [0, 14]");
}

TEST_F(LayoutMapTest, TheDocsExamples) {
  for (const char *text : {
           "bf16[4,8]{1,0:T(2,4)(2,1)}",
           "bf16[8,8]{1,0:T(2,4)(2,1,1,1)}",
           "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
           "f32[5]{0:T(8,128)}",
           "f32[]{:T(128)}",
           "f32[]",
           "bf16[3,300]{1,0:T(8,128)(2,1)}",
           "f32[3,5]{1,0:T(2,2)L(32)}",
           "f32[0,5]{1,0:T(2,2)}",
       })
    EXPECT_EQ(disagreement(layoutOf(text)), "") << text;
  // Figure 2's element (6,5) lands at 51.
  IndexingMap map = getLogicalToPhysicalMap(
      layoutOf("bf16[8,8]{1,0:T(2,4)(2,1,1,1)}"), &context);
  EXPECT_EQ((*map.evaluate({6, 5}, {}))[0], 51);
}

/// Random shapes with random permutations, 0-3 tiles of 1-4 dims (more than
/// the rank sometimes), `*` combined dims and L(n).
std::string randomLayout(std::mt19937_64 &rng) {
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int64_t rank = uniform(0, 4);
  std::vector<int64_t> dims;
  int64_t elements = 1;
  for (int64_t i = 0; i < rank; ++i) {
    dims.push_back(uniform(1, rank <= 2 ? 9 : 5));
    elements *= dims.back();
  }
  std::vector<int64_t> m2m(rank);
  std::iota(m2m.begin(), m2m.end(), 0);
  std::shuffle(m2m.begin(), m2m.end(), rng);
  std::string text = "f32[";
  for (int64_t i = 0; i < rank; ++i)
    text += (i ? "," : "") + std::to_string(dims[i]);
  text += "]{";
  for (int64_t i = 0; i < rank; ++i)
    text += (i ? "," : "") + std::to_string(m2m[i]);
  std::string attrs;
  int64_t tiles = uniform(0, 3);
  if (tiles)
    attrs += "T";
  for (int64_t t = 0; t < tiles; ++t) {
    int64_t k = uniform(1, 4);
    attrs += "(";
    for (int64_t i = 0; i < k; ++i) {
      bool combine = i + 1 < k && uniform(0, 4) == 0;
      attrs += (i ? "," : "") +
               (combine ? std::string("*") : std::to_string(uniform(1, 4)));
    }
    attrs += ")";
  }
  if (uniform(0, 4) == 0)
    attrs += "L(" + std::to_string(uniform(2, 16)) + ")";
  if (!attrs.empty())
    text += ":" + attrs;
  return text + "}";
}

TEST_F(LayoutMapTest, AgreesWithTiledLayoutOnGeneratedLayouts) {
  std::mt19937_64 rng(1234);
  int checked = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text = randomLayout(rng);
    Expected<Shape> shape = parseShape(text);
    ASSERT_TRUE(shape.ok()) << text << ": " << shape.error().message;
    Expected<TiledLayout> layout = TiledLayout::get(*shape);
    if (!layout || layout->physicalElements() > (1 << 16))
      continue;
    ASSERT_EQ(disagreement(*layout), "") << text;
    ++checked;
  }
  EXPECT_GT(checked, 2500);
}

/// The physical->logical map after the logical->physical map is the
/// identity on the logical shape; the simplifier often proves it outright.
TEST_F(LayoutMapTest, RoundTripComposesToIdentity) {
  std::mt19937_64 rng(77);
  int identities = 0, checked = 0;
  for (int i = 0; i < 500; ++i) {
    Expected<Shape> shape = parseShape(randomLayout(rng));
    Expected<TiledLayout> layout = TiledLayout::get(*shape);
    if (!layout || layout->physicalElements() > (1 << 14) ||
        layout->logicalElements() == 0)
      continue;
    IndexingMap forward = getLogicalToPhysicalMap(*layout, &context);
    IndexingMap backward = getPhysicalToLogicalMap(*layout, &context);
    IndexingMap roundTrip = composeIndexingMaps(forward, backward);
    roundTrip.simplify();
    // Simplified too: a dim of size 1 reads as 0.
    IndexingMap identity =
        IndexingMap::identity(&context, layout->logicalDims()).simplified();
    Expected<BruteForceComparison> same =
        compareByEnumeration(roundTrip, identity);
    ASSERT_TRUE(same.ok()) << same.error().message;
    ASSERT_TRUE(same->equal) << shape->toString() << ": " << roundTrip << "\n"
                             << same->mismatch;
    identities += roundTrip == identity;
    if (getenv("SHOW_RT") && roundTrip != identity)
      std::cout << shape->toString() << "\n  " << roundTrip << "\n";
    ++checked;
  }
  std::cout << identities << " of " << checked
            << " round trips simplify to the identity map\n";
  EXPECT_GT(identities, checked * 9 / 10);
}

} // namespace
