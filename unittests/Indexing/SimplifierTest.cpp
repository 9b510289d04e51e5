//===- SimplifierTest.cpp - Rules on examples and on random maps ----------===//
#include "tessel/Indexing/Simplifier.h"
#include "tessel/Indexing/BruteForce.h"
#include "tessel/Indexing/IndexingMap.h"

#include "RandomMaps.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace tessel;

namespace {

class SimplifierTest : public ::testing::Test {
protected:
  IndexingMap parse(const std::string &text) {
    Expected<IndexingMap> map = parseIndexingMap(text, &context);
    EXPECT_TRUE(map.ok()) << text << ": " << (map ? "" : map.error().message);
    return map ? *map : IndexingMap::knownEmpty(&context, 0, 0);
  }

  /// Simplifies, checks the result against the original by enumeration and
  /// returns its text.
  std::string simplify(const std::string &text,
                       SimplifyStats *stats = nullptr) {
    IndexingMap before = parse(text);
    IndexingMap after = before.simplified(stats);
    Expected<BruteForceComparison> same = compareByEnumeration(before, after);
    EXPECT_TRUE(same.ok()) << (same ? "" : same.error().message);
    if (same) {
      EXPECT_TRUE(same->equal)
          << text << " -> " << after << ": " << same->mismatch;
    }
    return after.toString();
  }

  mlir::MLIRContext context;
};

TEST_F(SimplifierTest, RangeAwareFolding) {
  SimplifyStats stats;
  EXPECT_EQ(simplify("(d0, d1) -> (d0 floordiv 16, d1 mod 4, d1 floordiv 4), "
                     "domain: d0 in [0, 15], d1 in [0, 3]",
                     &stats),
            "(d0, d1) -> (0, d1, 0), domain: d0 in [0, 15], d1 in [0, 3]");
  EXPECT_GE(stats[SimplifyRule::ConstantRange], 2);
  EXPECT_GE(stats[SimplifyRule::ModOnePeriod], 1);
  // One period away from zero, negative ranges included.
  EXPECT_EQ(simplify("(d0) -> (d0 mod 4, d0 floordiv 4), domain: d0 in "
                     "[-4, -1]"),
            "(d0) -> (d0 + 4, -1), domain: d0 in [-4, -1]");
}

TEST_F(SimplifierTest, SumsSplitByGcd) {
  SimplifyStats stats;
  EXPECT_EQ(simplify("(d0, d1) -> ((d0 * 4 + d1) floordiv 8, (d0 * 4 + d1) "
                     "mod 8), domain: d0 in [0, 15], d1 in [0, 3]",
                     &stats),
            "(d0, d1) -> (d0 floordiv 2, (d0 mod 2) * 4 + d1), domain: d0 in "
            "[0, 15], d1 in [0, 3]");
  EXPECT_EQ(stats[SimplifyRule::DivGcd], 1);
  EXPECT_EQ(stats[SimplifyRule::ModGcd], 1);
  // A common factor alone also divides out.
  EXPECT_EQ(simplify("(d0) -> ((d0 * 4) floordiv 6, (d0 * 6) mod 4), "
                     "domain: d0 in [0, 9]"),
            "(d0) -> ((d0 * 2) floordiv 3, ((d0 * 3) mod 2) * 2), domain: d0 "
            "in [0, 9]");
}

TEST_F(SimplifierTest, MultiplesLeaveDivAndMod) {
  SimplifyStats stats;
  EXPECT_EQ(simplify("(d0, d1) -> ((d0 * 8 + d1 + 17) floordiv 8, (d0 * 8 + "
                     "d1 + 17) mod 8), domain: d0 in [0, 15], d1 in [0, 31]",
                     &stats),
            "(d0, d1) -> (d0 + (d1 + 1) floordiv 8 + 2, (d1 + 1) mod 8), "
            "domain: d0 in [0, 15], d1 in [0, 31]");
  EXPECT_GE(stats[SimplifyRule::DivMultiples], 1);
  EXPECT_GE(stats[SimplifyRule::ModMultiples], 1);
  // Under mod 4, (d0 floordiv 3) * 7 is (d0 floordiv 3) * 3 plus a multiple
  // of 4, and pairs up with d0 mod 3.
  EXPECT_EQ(simplify("(d0) -> (((d0 floordiv 3) * 7 + d0 mod 3) mod 4), "
                     "domain: d0 in [0, 99]"),
            "(d0) -> (d0 mod 4), domain: d0 in [0, 99]");
  // Constants between -divisor and divisor stay where they are.
  EXPECT_EQ(simplify("(d0) -> ((d0 - 1) floordiv 2, (d0 - 5) floordiv 2, (d0 "
                     "- 1) mod 2), domain: d0 in [0, 99]"),
            "(d0) -> ((d0 - 1) floordiv 2, (d0 - 1) floordiv 2 - 2, (d0 - 1) "
            "mod 2), domain: d0 in [0, 99]");
}

TEST_F(SimplifierTest, NestedDivisionsAndMods) {
  SimplifyStats stats;
  EXPECT_EQ(simplify("(d0) -> ((d0 floordiv 4) floordiv 2, (d0 mod 16 + 3) "
                     "mod 8), domain: d0 in [0, 99]",
                     &stats),
            "(d0) -> (d0 floordiv 8, (d0 + 3) mod 8), domain: d0 in [0, 99]");
  EXPECT_EQ(stats[SimplifyRule::DivNested], 1);
  EXPECT_GE(stats[SimplifyRule::ModInnerMod], 1);
}

TEST_F(SimplifierTest, DivModPairsRecombine) {
  SimplifyStats stats;
  EXPECT_EQ(simplify("(d0, d1) -> ((d0 floordiv 4) * 8 + (d0 mod 4) * 2 + "
                     "d1, ((d0 floordiv 4) mod 8) * 4 + d0 mod 4), domain: "
                     "d0 in [0, 99], d1 in [0, 1]",
                     &stats),
            "(d0, d1) -> (d0 * 2 + d1, d0 mod 32), domain: d0 in [0, 99], d1 "
            "in [0, 1]");
  EXPECT_EQ(stats[SimplifyRule::SumDivMod], 1);
  EXPECT_EQ(stats[SimplifyRule::SumNestedMod], 1);
}

TEST_F(SimplifierTest, NegativeMultipliers) {
  // -d0 in [-9, 0]: floordiv 4 gives [-3, 0], mod 4 crosses periods.
  EXPECT_EQ(simplify("(d0) -> ((d0 * -4 + 40) floordiv 4, (-d0) mod 4), "
                     "domain: d0 in [0, 9]"),
            "(d0) -> (-d0 + 10, (-d0) mod 4), domain: d0 in [0, 9]");
}

TEST_F(SimplifierTest, ConstraintsTightenAndPrune) {
  SimplifyStats stats;
  // The pad example: range constraints on one variable become its range,
  // the mod constraint stays.
  EXPECT_EQ(simplify("(d0, d1) -> ((d0 - 1) floordiv 2, d1 - 4), domain: d0 "
                     "in [0, 11], d1 in [0, 15], d0 - 1 in [0, 6], (d0 - 1) "
                     "mod 2 in [0, 0], d1 - 4 in [0, 3]",
                     &stats),
            "(d0, d1) -> ((d0 - 1) floordiv 2, d1 - 4), domain: d0 in [1, 7], "
            "d1 in [4, 7], (d0 - 1) mod 2 in [0, 0]");
  EXPECT_EQ(stats[SimplifyRule::ConstraintToBound], 2);
  // Offsets move into the range, common factors divide out, always-true
  // constraints go, the others shrink to what their expression can reach.
  EXPECT_EQ(simplify("(d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, "
                     "9], d0 * 2 + d1 * 4 + 1 in [1, 30], d0 + d1 in [0, 18], "
                     "d0 mod 3 in [0, 5], d1 floordiv 3 in [1, 2]"),
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 8], d1 in [3, 7], d0 + "
            "d1 * 2 in [6, 14]");
}

TEST_F(SimplifierTest, BoundsPropagateFromSums) {
  SimplifyStats stats;
  EXPECT_EQ(simplify("(d0, d1) -> (d0, d1), domain: d0 in [0, 99], d1 in [0, "
                     "99], d0 + d1 in [0, 5]",
                     &stats),
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 5], d1 in [0, 5], d0 + "
            "d1 in [0, 5]");
  EXPECT_EQ(stats[SimplifyRule::BoundPropagated], 2);
}

TEST_F(SimplifierTest, KnownEmpty) {
  EXPECT_EQ(simplify("(d0) -> (d0), domain: d0 in [0, 9], d0 mod 4 in [5, 7]"),
            "KNOWN EMPTY");
  EXPECT_EQ(simplify("(d0) -> (d0), domain: d0 in [0, 9], d0 + 3 in [20, 30]"),
            "KNOWN EMPTY");
  EXPECT_EQ(simplify("(d0)[s0] -> (d0), domain: d0 in [0, 9], s0 in [0, 3], "
                     "s0 * 4 in [1, 3]"),
            "KNOWN EMPTY");
}

TEST_F(SimplifierTest, UnusedSymbolsGo) {
  SimplifyStats stats;
  // s0 is unused; s1 only appears in a satisfiable constraint of its own;
  // s2 is tied to d0 by a constraint and stays.
  EXPECT_EQ(simplify("(d0)[s0, s1, s2] -> (d0 + s2), domain: d0 in [0, 9], "
                     "s0 in [0, 3], s1 in [0, 7], s2 in [0, 2], s1 mod 4 in "
                     "[1, 1], d0 + s2 * 3 in [0, 8]",
                     &stats),
            "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 8], s0 in [0, 2], d0 + "
            "s0 * 3 in [0, 8]");
  EXPECT_EQ(stats[SimplifyRule::UnusedSymbol], 2);
  // A symbol whose range is one value is a constant.
  EXPECT_EQ(simplify("(d0)[s0] -> (d0 * 4 + s0), domain: d0 in [0, 9], s0 in "
                     "[2, 2]"),
            "(d0) -> (d0 * 4 + 2), domain: d0 in [0, 9]");
  // Unsatisfiable constraints on unused symbols empty the map.
  EXPECT_EQ(simplify("(d0)[s0, s1] -> (d0), domain: d0 in [0, 9], s0 in [0, "
                     "3], s1 in [0, 3], s0 + s1 * 4 in [16, 20]"),
            "KNOWN EMPTY");
}

TEST_F(SimplifierTest, SpecLoopEmitterMapIsAlreadySimple) {
  const char *text =
      "(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) "
      "mod 512, (bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x "
      "in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]";
  IndexingMap map = parse(text);
  EXPECT_FALSE(map.simplify());
  EXPECT_EQ(map.toString(), text);
}

TEST_F(SimplifierTest, RangeEvaluatorIsSoundOnRandomExpressions) {
  // Every value an expression takes on the box lies in its range.
  testutil::RandomMapGenerator generator(&context, 7);
  for (int i = 0; i < 2000; ++i) {
    IndexingMap map = generator.map(300);
    if (map.isKnownEmpty())
      continue;
    RangeEvaluator ranges(map.getDimBounds(), map.getSymbolBounds());
    llvm::SmallVector<Interval> bounds = map.getDimBounds();
    llvm::append_range(bounds, map.getSymbolBounds());
    for (mlir::AffineExpr result : map.getAffineMap().getResults()) {
      Interval range = ranges.computeRange(result);
      int64_t lo = Interval::kMax, hi = Interval::kMin;
      forEachBoxPoint(bounds, 1 << 20, [&](llvm::ArrayRef<int64_t> p) {
        std::optional<int64_t> value =
            evaluateAffineExpr(result, p.take_front(map.getNumDims()),
                               p.drop_front(map.getNumDims()));
        ASSERT_TRUE(value.has_value());
        EXPECT_TRUE(range.contains(*value))
            << affineExprToString(result, map.getDimNames(),
                                  map.getSymbolNames())
            << " = " << *value << " outside " << range << " in " << map;
        lo = std::min(lo, *value);
        hi = std::max(hi, *value);
      });
      // Exact for a single variable or an affine sum of distinct variables.
      if (result.getKind() == mlir::AffineExprKind::DimId) {
        EXPECT_EQ(range, Interval(lo, hi));
      }
    }
  }
}

/// The property test: thousands of random maps, each simplified and
/// compared with the original at every point of its box.
TEST_F(SimplifierTest, EveryRuleIsExactOnRandomMaps) {
  testutil::RandomMapGenerator generator(&context, 2024);
  SimplifyStats stats;
  int simplifiedCount = 0, emptyCount = 0, fixpoints = 0;
  const int kMaps = 10000;
  for (int i = 0; i < kMaps; ++i) {
    IndexingMap before = generator.map();
    ASSERT_FALSE(before.verify().has_value()) << *before.verify();
    IndexingMap after = before;
    bool changed = after.simplify(&stats);
    simplifiedCount += changed;
    emptyCount += after.isKnownEmpty();
    ASSERT_FALSE(after.verify().has_value()) << *after.verify();
    Expected<BruteForceComparison> same = compareByEnumeration(before, after);
    ASSERT_TRUE(same.ok()) << same.error().message;
    ASSERT_TRUE(same->equal) << "map " << i << ":\n  " << before << "\n  -> "
                             << after << "\n  " << same->mismatch;
    // Printing round-trips, and a second simplification keeps the map.
    Expected<IndexingMap> reparsed =
        parseIndexingMap(after.toString(), &context);
    if (!after.isKnownEmpty()) {
      ASSERT_TRUE(reparsed.ok()) << after << ": " << reparsed.error().message;
      EXPECT_EQ(*reparsed, after);
    }
    IndexingMap again = after.simplified();
    fixpoints += again == after;
  }
  // Every rule fired on these maps; a rule that never fires is untested.
  for (unsigned r = 0; r < static_cast<unsigned>(SimplifyRule::Count); ++r) {
    auto rule = static_cast<SimplifyRule>(r);
    EXPECT_GE(stats[rule], 20) << SimplifyStats::name(rule) << " fired only "
                               << stats[rule] << " times";
  }
  EXPECT_GT(simplifiedCount, kMaps / 2);
  EXPECT_GT(emptyCount, 10);
  EXPECT_GE(fixpoints, kMaps * 99 / 100);
  std::cout << "simplified " << simplifiedCount << " of " << kMaps << " maps, "
            << emptyCount << " known empty, " << fixpoints
            << " already a fixpoint\n"
            << stats.toString();
}

/// Known-empty is only claimed for maps that really are empty, and each
/// expression is simplified exactly on its own too.
TEST_F(SimplifierTest, ExpressionSimplifierIsExactOnRandomExpressions) {
  testutil::RandomMapGenerator generator(&context, 99);
  for (int i = 0; i < 3000; ++i) {
    IndexingMap map = generator.map(400);
    if (map.isKnownEmpty())
      continue;
    RangeEvaluator ranges(map.getDimBounds(), map.getSymbolBounds());
    AffineExprSimplifier simplifier(ranges);
    llvm::SmallVector<Interval> bounds = map.getDimBounds();
    llvm::append_range(bounds, map.getSymbolBounds());
    for (mlir::AffineExpr result : map.getAffineMap().getResults()) {
      mlir::AffineExpr simple = simplifier.simplify(result);
      forEachBoxPoint(bounds, 1 << 20, [&](llvm::ArrayRef<int64_t> p) {
        auto dims = p.take_front(map.getNumDims());
        auto symbols = p.drop_front(map.getNumDims());
        ASSERT_EQ(evaluateAffineExpr(result, dims, symbols),
                  evaluateAffineExpr(simple, dims, symbols))
            << affineExprToString(result, map.getDimNames(),
                                  map.getSymbolNames())
            << " -> "
            << affineExprToString(simple, map.getDimNames(),
                                  map.getSymbolNames())
            << " in " << map;
      });
    }
  }
}

} // namespace
