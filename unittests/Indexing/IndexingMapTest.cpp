//===- IndexingMapTest.cpp - Construction, evaluation, composition --------===//
#include "tessel/Indexing/IndexingMap.h"
#include "tessel/Indexing/BruteForce.h"

#include "RandomMaps.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/MLIRContext.h"

#include "../ErrorText.h"

#include <gtest/gtest.h>

#include <unordered_set>

using namespace tessel;
using mlir::AffineExpr;
using mlir::AffineMap;

namespace {

class IndexingMapTest : public ::testing::Test {
protected:
  IndexingMap parse(const std::string &text) {
    Expected<IndexingMap> map = parseIndexingMap(text, &context);
    EXPECT_TRUE(map.ok()) << text << ": " << (map ? "" : map.error().message);
    return map ? *map : IndexingMap::knownEmpty(&context, 0, 0);
  }
  mlir::MLIRContext context;
};

TEST_F(IndexingMapTest, SpecTransposeExample) {
  AffineExpr d0, d1;
  mlir::bindDims(&context, d0, d1);
  IndexingMap map = IndexingMap::fromTensorSizes(
      AffineMap::get(2, 0, {d1, d0}, &context), {40, 20}, {});
  EXPECT_EQ(map.toString(),
            "(d0, d1) -> (d1, d0), domain: d0 in [0, 39], d1 in [0, 19]");
  EXPECT_EQ(*map.evaluate({3, 7}, {}), (llvm::SmallVector<int64_t>{7, 3}));
  EXPECT_FALSE(map.evaluate({40, 0}, {}).has_value());
  EXPECT_FALSE(map.simplify());
}

TEST_F(IndexingMapTest, SpecPadExample) {
  // pad(f32[4,4] p, c), padding=1_4_1x4_8_0 -> f32[12,16]: output row d0
  // reads input row (d0 - 1) / 2 when d0 - 1 is even and in range.
  AffineExpr d0, d1;
  mlir::bindDims(&context, d0, d1);
  IndexingMap map = IndexingMap::fromTensorSizes(
      AffineMap::get(2, 0, {(d0 - 1).floorDiv(2), d1 - 4}, &context), {12, 16},
      {});
  map.addConstraint(d0 - 1, Interval(0, 6));
  map.addConstraint((d0 - 1) % 2, Interval(0, 0));
  map.addConstraint(d1 - 4, Interval(0, 3));
  IndexingMap original = map;
  EXPECT_TRUE(map.simplify());
  EXPECT_EQ(map.toString(),
            "(d0, d1) -> ((d0 - 1) floordiv 2, d1 - 4), domain: d0 in [1, 7], "
            "d1 in [4, 7], (d0 - 1) mod 2 in [0, 0]");
  // Exactly the 16 input elements, each once.
  Expected<std::vector<DomainPoint>> points = enumerateDomain(map, 1 << 10);
  ASSERT_TRUE(points.ok());
  std::set<llvm::SmallVector<int64_t>> read;
  for (const DomainPoint &point : *points)
    read.insert(point.results);
  EXPECT_EQ(points->size(), 16u);
  EXPECT_EQ(read.size(), 16u);
  EXPECT_TRUE(compareByEnumeration(original, map)->equal);
}

TEST_F(IndexingMapTest, SpecLoopEmitterMapCoversTheOutputOnce) {
  // (thread, block)[vector] -> output index of bf16[6,512,4096]: every
  // element exactly once.
  IndexingMap map = parse(
      "(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) "
      "mod 512, (bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x "
      "in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]");
  EXPECT_EQ(map.getDimName(1), "bl_x");
  std::vector<bool> seen(6 * 512 * 4096, false);
  int64_t duplicates = 0, outside = 0;
  forEachBoxPoint({Interval(0, 127), Interval(0, 24575), Interval(0, 3)},
                  1 << 24, [&](llvm::ArrayRef<int64_t> p) {
                    std::optional<llvm::SmallVector<int64_t>> r =
                        map.evaluate(p.take_front(2), p.drop_front(2));
                    if (!r || (*r)[0] >= 6 || (*r)[1] >= 512 ||
                        (*r)[2] >= 4096) {
                      ++outside;
                      return;
                    }
                    int64_t linear = ((*r)[0] * 512 + (*r)[1]) * 4096 + (*r)[2];
                    duplicates += seen[linear];
                    seen[linear] = true;
                  });
  EXPECT_EQ(duplicates, 0);
  EXPECT_EQ(outside, 0);
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](bool b) { return b; }));
}

TEST_F(IndexingMapTest, EqualityAndHashFollowThePrintedForm) {
  IndexingMap a = parse("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 9], s0 in "
                        "[0, 3], d0 mod 2 in [0, 0], d0 + s0 in [0, 10]");
  IndexingMap b = parse("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 9], s0 in "
                        "[0, 3], d0 + s0 in [0, 10], d0 mod 2 in [0, 0]");
  IndexingMap named = parse("(i)[s0] -> (i + s0), domain: i in [0, 9], s0 in "
                            "[0, 3], i mod 2 in [0, 0], i + s0 in [0, 10]");
  IndexingMap wider = parse("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 10], "
                            "s0 in [0, 3], d0 mod 2 in [0, 0], d0 + s0 in [0, "
                            "10]");
  EXPECT_EQ(a, b);
  EXPECT_EQ(hash_value(a), hash_value(b));
  EXPECT_NE(a, named);
  EXPECT_NE(a, wider);
  std::unordered_set<IndexingMap, IndexingMapHash> set = {a, b, named, wider};
  EXPECT_EQ(set.size(), 3u);
  std::ostringstream os;
  os << a;
  EXPECT_EQ(os.str(), a.toString());
}

TEST_F(IndexingMapTest, KnownEmpty) {
  IndexingMap map = parse("(d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in "
                          "[5, 4]");
  EXPECT_TRUE(map.isKnownEmpty());
  EXPECT_EQ(map.toString(), "KNOWN EMPTY");
  EXPECT_EQ(map, IndexingMap::knownEmpty(&context, 2, 2));
  EXPECT_FALSE(map.evaluate({0, 5}, {}).has_value());
  IndexingMap constant = parse("(d0) -> (d0), domain: d0 in [0, 9], 5 in [0, "
                               "3]");
  EXPECT_TRUE(constant.isKnownEmpty());
}

TEST_F(IndexingMapTest, VerifyNamesTheProblem) {
  AffineExpr d0 = mlir::getAffineDimExpr(0, &context);
  AffineExpr s0 = mlir::getAffineSymbolExpr(0, &context);
  IndexingMap product(AffineMap::get(1, 1, {d0 * s0}, &context),
                      {IndexingVariable(0, 3)}, {IndexingVariable(0, 3)}, {});
  EXPECT_EQ(product.verify(),
            std::optional<std::string>(
                "result d0 * s0 multiplies two non-constant expressions"));
  IndexingMap named(AffineMap::get(1, 1, {d0 + s0}, &context),
                    {IndexingVariable(0, 3, "x")},
                    {IndexingVariable(0, 3, "x")}, {});
  EXPECT_EQ(named.verify(),
            std::optional<std::string>("variable name 'x' is used twice"));
  IndexingMap bad(AffineMap::get(1, 0, {d0}, &context),
                  {IndexingVariable(0, 3, "a b")}, {}, {});
  EXPECT_EQ(bad.verify(), std::optional<std::string>(
                              "variable name 'a b' is not an identifier"));
}

TEST_F(IndexingMapTest, ComposeCarriesConstraintsAndChecksRanges) {
  // Slice [2:6] of a [10] tensor, then a reverse of the [4] slice.
  IndexingMap reverse = parse("(d0) -> (-d0 + 3), domain: d0 in [0, 3]");
  IndexingMap slice = parse("(d0) -> (d0 + 2), domain: d0 in [0, 3]");
  IndexingMap composed = composeIndexingMaps(reverse, slice);
  EXPECT_EQ(composed.toString(),
            "(d0) -> (-d0 + 5), domain: d0 in [0, 3], -d0 + 3 in [0, 3]");
  EXPECT_TRUE(composed.simplify());
  EXPECT_EQ(composed.toString(), "(d0) -> (-d0 + 5), domain: d0 in [0, 3]");

  // Symbols: second's range variables come first (XLA's order), and a
  // first result outside second's domain leaves the domain.
  IndexingMap first = parse("(d0)[s0] -> (d0 * 2 + s0), domain: d0 in [0, "
                            "9], s0 in [0, 1]");
  IndexingMap second = parse("(d0)[s0] -> (d0 floordiv 4 + s0), domain: d0 "
                             "in [0, 15], s0 in [0, 2], d0 mod 4 in [0, 2]");
  IndexingMap both = composeIndexingMaps(first, second);
  EXPECT_EQ(both.toString(),
            "(d0)[s0, s1] -> ((d0 * 2 + s1) floordiv 4 + s0), domain: d0 in "
            "[0, 9], s0 in [0, 2], s1 in [0, 1], (d0 * 2 + s1) mod 4 in [0, "
            "2], d0 * 2 + s1 in [0, 15]");
}

/// composeIndexingMaps agrees with applying the maps one after the other,
/// on random pairs.
TEST_F(IndexingMapTest, ComposeMatchesSequentialEvaluation) {
  testutil::RandomMapGenerator generator(&context, 31);
  int nonEmpty = 0;
  for (int i = 0; i < 1500; ++i) {
    IndexingMap first = generator.map(200);
    // A second map whose dims take first's results.
    IndexingMap probe = generator.map(200);
    unsigned numDims = first.getNumResults();
    llvm::SmallVector<AffineExpr> results;
    for (int r = 0, n = generator.uniform(1, 2); r < n; ++r)
      results.push_back(generator.expr(numDims, probe.getNumSymbols(), 3));
    std::vector<IndexingVariable> dims;
    for (unsigned d = 0; d < numDims; ++d)
      dims.push_back(generator.range(12));
    std::vector<IndexingConstraint> constraints;
    if (generator.chance(0.5))
      constraints.push_back(
          {generator.expr(numDims, probe.getNumSymbols(), 2), Interval(0, 8)});
    IndexingMap second(
        AffineMap::get(numDims, probe.getNumSymbols(), results, &context), dims,
        probe.getRangeVars(), probe.getRTVars(), constraints);
    IndexingMap composed = composeIndexingMaps(first, second);
    ASSERT_FALSE(composed.verify().has_value()) << *composed.verify() << "\n"
                                                << first << "\n"
                                                << second;

    // Sequential: for each dim point, the set of results over all symbols.
    unsigned r2 = second.getNumRangeVars(), r1 = first.getNumRangeVars();
    unsigned t2 = second.getNumRTVars();
    // [second range | first range | second rt | first rt], from the inputs
    // (a known-empty composition has no symbols of its own).
    llvm::SmallVector<Interval> symbolBounds;
    for (unsigned k = 0; k < r2; ++k)
      symbolBounds.push_back(second.getSymbolVar(k).bounds);
    for (unsigned k = 0; k < r1; ++k)
      symbolBounds.push_back(first.getSymbolVar(k).bounds);
    for (unsigned k = 0; k < t2; ++k)
      symbolBounds.push_back(second.getSymbolVar(r2 + k).bounds);
    for (unsigned k = 0; k < first.getNumRTVars(); ++k)
      symbolBounds.push_back(first.getSymbolVar(r1 + k).bounds);
    forEachBoxPoint(
        first.getDimBounds(), 1 << 20, [&](llvm::ArrayRef<int64_t> dims) {
          std::set<llvm::SmallVector<int64_t>> expected, actual;
          forEachBoxPoint(
              symbolBounds, 1 << 20, [&](llvm::ArrayRef<int64_t> s) {
                // composed symbols: [second range | first range | second rt |
                // first rt].
                llvm::SmallVector<int64_t> s1, s2;
                s2.append(s.begin(), s.begin() + r2);
                s1.append(s.begin() + r2, s.begin() + r2 + r1);
                s2.append(s.begin() + r2 + r1, s.begin() + r2 + r1 + t2);
                s1.append(s.begin() + r2 + r1 + t2, s.end());
                std::optional<llvm::SmallVector<int64_t>> mid =
                    first.evaluate(dims, s1);
                std::optional<llvm::SmallVector<int64_t>> seq =
                    mid ? second.evaluate(*mid, s2) : std::nullopt;
                std::optional<llvm::SmallVector<int64_t>> direct =
                    composed.isKnownEmpty() ? std::nullopt
                                            : composed.evaluate(dims, s);
                ASSERT_EQ(seq, direct)
                    << first << "\n then " << second << "\n = " << composed;
                if (direct)
                  ++nonEmpty;
              });
        });
    // And simplifying the composition keeps it.
    Expected<BruteForceComparison> same =
        compareByEnumeration(composed, composed.simplified());
    ASSERT_TRUE(same.ok()) << same.error().message;
    ASSERT_TRUE(same->equal) << composed << "\n" << same->mismatch;
  }
  EXPECT_GT(nonEmpty, 1000);
}

TEST_F(IndexingMapTest, EvaluateChecksConstraintsAndOverflow) {
  IndexingMap map = parse("(d0) -> (d0 * 4611686018427387903), domain: d0 in "
                          "[-4, 4], d0 mod 2 in [0, 0]");
  EXPECT_EQ(*map.evaluate({2}, {}),
            (llvm::SmallVector<int64_t>{9223372036854775806}));
  EXPECT_FALSE(map.evaluate({1}, {}).has_value());
  EXPECT_FALSE(map.evaluate({4}, {}).has_value()); // overflows
  EXPECT_FALSE(map.contains({5}, {}));
}

// The @pre of contains() is an assert. It is compiled in by Debug builds and
// by TESSEL_ENABLE_ASSERTIONS in Release (test.sh's build-assert), and this
// checks that the library really was built with it.
using IndexingMapDeathTest = IndexingMapTest;
TEST_F(IndexingMapDeathTest, ContainsAssertsItsPrecondition) {
#ifdef NDEBUG
  GTEST_SKIP() << "asserts are compiled out (NDEBUG)";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  IndexingMap map =
      parse("(d0, d1) -> (d0), domain: d0 in [0, 3], d1 in [0, 3]");
  EXPECT_DEATH(map.contains({1}, {}), "getNumDims");
#endif
}

} // namespace

namespace {

class IndexingMapOverflowTest : public ::testing::Test {
protected:
  IndexingMap parse(const std::string &text) {
    Expected<IndexingMap> map = parseIndexingMap(text, &context);
    EXPECT_TRUE(map) << (map ? "" : map.error().message);
    return map ? *map : IndexingMap::knownEmpty(&context, 0, 0);
  }
  mlir::MLIRContext context;
};

TEST_F(IndexingMapOverflowTest, ComposeReportsWhatMlirWouldWrap) {
  // 2^40 * 2^40 folds to 0 in MLIR's 64-bit arithmetic.
  IndexingMap first =
      parse("(d0) -> (d0 * 1099511627776), domain: d0 in [0, 3]");
  IndexingMap second = parse("(d0) -> (d0 * 1099511627776), domain: d0 in "
                             "[0, 4611686018427387904]");
  Expected<IndexingMap> composed = composeIndexingMapsChecked(first, second);
  ASSERT_FALSE(composed);
  EXPECT_EQ(composed.error().message,
            "the second map overflows int64 on the values the first gives, "
            "result 0: d0 * 1099511627776 reaches 3626777458843887524118528, "
            "past int64");
  IndexingMap small = parse("(d0) -> (d0 * 2), domain: d0 in [0, 3]");
  Expected<IndexingMap> fine = composeIndexingMapsChecked(first, small);
  ASSERT_TRUE(fine) << fine.error().message;
  EXPECT_EQ(*fine, composeIndexingMaps(first, small));
}

TEST_F(IndexingMapOverflowTest, FindOverflowOnTheDomain) {
  EXPECT_EQ(findOverflow(parse("(d0) -> (-d0), domain: d0 in "
                               "[-9223372036854775808, 0]")),
            "result 0: -d0 reaches 9223372036854775808, past int64");
  EXPECT_EQ(findOverflow(parse("(d0) -> (-d0), domain: d0 in "
                               "[-9223372036854775807, 0]")),
            std::nullopt);
  EXPECT_EQ(findOverflow(parse("(d0) -> (d0 floordiv 2 + 1), domain: d0 in "
                               "[0, 9223372036854775807]")),
            std::nullopt);
  EXPECT_EQ(findOverflow(parse("(d0) -> (d0 + 1), domain: d0 in "
                               "[0, 9223372036854775807]")),
            "result 0: d0 + 1 reaches 9223372036854775808, past int64");
}

TEST_F(IndexingMapOverflowTest, ParserNestingIsBounded) {
  std::string deep = "(d0) -> (" + std::string(300, '(') + "d0" +
                     std::string(300, ')') + "), domain: d0 in [0, 3]";
  Expected<IndexingMap> map = parseIndexingMap(deep, &context);
  ASSERT_FALSE(map);
  EXPECT_EQ(columnText(map.error()),
            "266: parentheses and '-' nest more than 256 deep");
  std::string minus =
      "(d0) -> (" + std::string(100000, '-') + "d0), domain: d0 in [0, 3]";
  EXPECT_FALSE(parseIndexingMap(minus, &context));
}

} // namespace
