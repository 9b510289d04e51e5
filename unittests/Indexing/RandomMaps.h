//===- RandomMaps.h - Random indexing maps for property tests ---*- C++ -*-===//
//
// Generates maps with small domains (a few hundred points) whose results and
// constraints are random affine expressions, biased toward the shapes the
// simplifier rewrites: sums with coefficients that share factors with the
// divisor, floordiv/mod pairs of the same operand, nested divisions,
// negative factors and variables with negative ranges.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_UNITTESTS_INDEXING_RANDOMMAPS_H
#define TESSEL_UNITTESTS_INDEXING_RANDOMMAPS_H

#include "tessel/Indexing/BruteForce.h"
#include "tessel/Indexing/IndexingMap.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"

#include <algorithm>
#include <random>

namespace tessel::testutil {

class RandomMapGenerator {
public:
  RandomMapGenerator(mlir::MLIRContext *context, uint64_t seed)
      : context(context), rng(seed) {}

  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng); }
  template <typename T> T pick(std::initializer_list<T> values) {
    return *(values.begin() + uniform(0, values.size() - 1));
  }

  mlir::AffineExpr variable(unsigned numDims, unsigned numSymbols) {
    int64_t i = uniform(0, numDims + numSymbols - 1);
    if (i < static_cast<int64_t>(numDims))
      return mlir::getAffineDimExpr(i, context);
    return mlir::getAffineSymbolExpr(i - numDims, context);
  }

  int64_t divisor() { return pick<int64_t>({2, 2, 3, 4, 4, 5, 6, 8, 8, 16}); }
  int64_t factor() {
    return pick<int64_t>({-3, -2, -1, 1, 2, 2, 3, 4, 4, 6, 8, 12, 16});
  }

  mlir::AffineExpr expr(unsigned numDims, unsigned numSymbols, int depth) {
    if (depth <= 0 || chance(0.2)) {
      if (chance(0.85))
        return variable(numDims, numSymbols);
      return mlir::getAffineConstantExpr(uniform(-9, 9), context);
    }
    auto sub = [&] { return expr(numDims, numSymbols, depth - 1); };
    switch (uniform(0, 9)) {
    case 0:
    case 1:
      return sub() + sub();
    case 2:
      return sub() * factor() + sub();
    case 3:
      return sub().floorDiv(divisor());
    case 4:
      return sub() % divisor();
    case 5: {
      // (x * c + y) floordiv or mod d, with c sharing factors with d.
      int64_t d = divisor();
      int64_t c = d / pick<int64_t>({1, 2});
      mlir::AffineExpr sum = sub() * c + sub();
      return chance(0.5) ? sum.floorDiv(d * pick<int64_t>({1, 2})) : sum % d;
    }
    case 6: {
      // A floordiv/mod pair of one operand, maybe nested.
      mlir::AffineExpr x = sub();
      int64_t c = divisor();
      int64_t k = uniform(1, 3);
      if (chance(0.5))
        return x.floorDiv(c) * (c * k) + (x % c) * k;
      int64_t m = divisor();
      return (x.floorDiv(c) % m) * (c * k) + (x % c) * k;
    }
    case 7:
      return sub().floorDiv(divisor()).floorDiv(divisor());
    case 8:
      return sub().ceilDiv(divisor());
    default:
      return sub() * -1 + mlir::getAffineConstantExpr(uniform(-5, 5), context);
    }
  }

  IndexingVariable range(int64_t maxSize) {
    int64_t size = uniform(1, maxSize);
    int64_t lower = chance(0.75) ? 0 : uniform(-6, 6);
    return IndexingVariable(lower, lower + size - 1);
  }

  /// A map whose box has at most about `maxPoints` points.
  IndexingMap map(int64_t maxPoints = 600) {
    unsigned numDims = uniform(1, 3);
    unsigned numRange = uniform(0, 2);
    unsigned numRT = chance(0.2) ? 1 : 0;
    unsigned numVars = numDims + numRange + numRT;
    int64_t perVar = 2;
    while (perVar < 40) {
      int64_t points = 1;
      for (unsigned i = 0; i < numVars; ++i)
        points *= perVar + 1;
      if (points > maxPoints)
        break;
      ++perVar;
    }
    std::vector<IndexingVariable> dims, rangeVars, rtVars;
    for (unsigned i = 0; i < numDims; ++i)
      dims.push_back(range(perVar));
    for (unsigned i = 0; i < numRange; ++i)
      rangeVars.push_back(range(perVar));
    for (unsigned i = 0; i < numRT; ++i)
      rtVars.push_back(range(perVar));
    unsigned numSymbols = numRange + numRT;
    llvm::SmallVector<mlir::AffineExpr> results;
    for (int64_t i = 0, n = uniform(1, 3); i < n; ++i)
      results.push_back(expr(numDims, numSymbols, uniform(1, 4)));
    // Constraints cut into the values their expression takes on the box,
    // so that most maps stay non-empty.
    llvm::SmallVector<Interval> box;
    for (const std::vector<IndexingVariable> *vars :
         {&dims, &rangeVars, &rtVars})
      for (const IndexingVariable &var : *vars)
        box.push_back(var.bounds);
    std::vector<IndexingConstraint> constraints;
    for (int64_t i = 0, n = pick<int64_t>({0, 0, 1, 1, 2, 3}); i < n; ++i) {
      mlir::AffineExpr e = expr(numDims, numSymbols, uniform(0, 3));
      int64_t lo = Interval::kMax, hi = Interval::kMin;
      forEachBoxPoint(box, 1 << 20, [&](llvm::ArrayRef<int64_t> p) {
        std::optional<int64_t> value =
            evaluateAffineExpr(e, p.take_front(numDims), p.drop_front(numDims));
        lo = std::min(lo, *value);
        hi = std::max(hi, *value);
      });
      int64_t from = uniform(lo - 2, hi);
      int64_t to = chance(0.05) ? from - 1 : uniform(from, hi + 2);
      constraints.push_back({e, Interval(from, to)});
    }
    return IndexingMap(
        mlir::AffineMap::get(numDims, numSymbols, results, context), dims,
        rangeVars, rtVars, constraints);
  }

private:
  mlir::MLIRContext *context;
  std::mt19937_64 rng;
};

} // namespace tessel::testutil

#endif // TESSEL_UNITTESTS_INDEXING_RANDOMMAPS_H
